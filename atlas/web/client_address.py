"""Which address a request comes from, for the sign-in lockouts (``AXES_CLIENT_IP_CALLABLE``).

The address the connection comes from (``REMOTE_ADDR``), unless that is a proxy the deployment
trusts (``ATLAS_TRUSTED_PROXIES``, addresses or networks): then the address that proxy saw, the
last ``X-Forwarded-For`` hop that is not itself a trusted proxy. Everything before it in the header
is written by the client and never believed. Without trusted proxies the header is ignored, so no
client can choose the address its failures count against; behind an untrusted proxy every client
shares the proxy's address (README: Deployment).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from django.conf import settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_networks(entries: list[str]) -> tuple[Network, ...]:
    """The networks of ``ATLAS_TRUSTED_PROXIES``; a malformed entry is a configuration error."""
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in entries)


def _is_trusted(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(parsed in network for network in networks)


def client_address(request: Any) -> str | None:
    remote = request.META.get("REMOTE_ADDR")
    networks = trusted_networks(settings.ATLAS_TRUSTED_PROXIES)
    if not remote or not _is_trusted(remote, networks):
        return remote
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    for hop in reversed([part.strip() for part in forwarded.split(",")]):
        if _is_trusted(hop, networks):
            continue
        try:
            return str(ipaddress.ip_address(hop))
        except ValueError:
            break  # not an address the trusted proxy wrote: count it against the proxy
    return remote
