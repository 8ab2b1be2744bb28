"""HTTP calls with a deadline for the whole call and a cap on the answer's size.

A socket timeout bounds each socket operation, not the call: a body trickled one byte per second
never trips a 10 s read timeout, and nothing bounds how much a server may send. Here every call
runs under a watchdog that shuts its socket down when the call's deadline passes or the run is
stopped (Ctrl-C), so a blocked read returns at once, and the answer is read in chunks and refused
as soon as it grows past ``max_bytes``.

Built on the standard library's ``http.client``: every call has a connection of its own (nothing
is kept alive, so the socket the watchdog shuts is that call's alone), at most ``connections`` at
once. The proxies named in the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``) are
used, and TLS is verified against ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set, else certifi's
bundle. A third-party client cost every tool that loads this module ~0.1 s of imports and each
client ~40 ms of CPU for a TLS context, paid even for a plain-HTTP endpoint on this machine.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import os
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

WATCH_SECONDS = 0.1
CONNECT_SECONDS = 30.0
CHUNK_BYTES = 65536
USER_AGENT = "rl-data-atlas"
# The reason a call ended early, as the caller reports it.
DEADLINE = "deadline"
STOPPED = "stopped"


class CallFailed(Exception):
    """A call that produced no complete answer. ``kind`` is ``deadline`` (the whole-call timeout
    passed), ``stopped`` (the run was interrupted), ``too_large`` (the answer passed the size cap)
    or ``transport`` (connection refused, reset, a malformed HTTP answer)."""

    def __init__(self, kind: str, reason: str, *, partial: bytes = b"") -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.partial = partial


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    seconds: float
    headers: dict[str, str] = field(default_factory=dict)  # names in lower case

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass
class InFlight:
    """One running call, as the progress line shows it."""

    label: str
    started: float
    deadline: float
    ended: str | None = None
    _socket: socket.socket | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._socket = sock
            ended = self.ended
        if ended is not None:
            _shutdown(sock)

    def end(self, why: str) -> None:
        with self._lock:
            if self.ended is not None:
                return
            self.ended = why
            sock = self._socket
        _shutdown(sock)


def _shutdown(sock: socket.socket | None) -> None:
    # shutdown(), unlike close(), wakes a thread blocked reading the socket. The plain socket's
    # shutdown is called even on a TLS socket: the reading thread still owns the TLS state.
    if sock is not None:
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


@dataclass(frozen=True)
class Target:
    """Where one call's connection goes: the server itself, or the proxy the environment names."""

    tls: bool
    host: str
    port: int
    path: str  # the request target: origin-form, or absolute-form through a plain proxy
    tunnel: tuple[str, int] | None = None
    proxy_headers: dict[str, str] = field(default_factory=dict)


def target(url: str) -> Target:
    """The connection for ``url``, or ``CallFailed("transport")`` for an address it cannot be."""
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError as exc:
        raise CallFailed("transport", f"InvalidURL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CallFailed("transport", f"InvalidURL: {url!r} is not an http(s) address")
    tls = parts.scheme == "https"
    host, port = parts.hostname, port or (443 if tls else 80)
    path = parts.path or "/"
    if parts.query:
        path += f"?{parts.query}"
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(parts.netloc):
        return Target(tls=tls, host=host, port=port, path=path)
    via = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    headers = {}
    if via.username:
        user = urllib.parse.unquote(via.username)
        secret = urllib.parse.unquote(via.password or "")
        token = base64.b64encode(f"{user}:{secret}".encode()).decode("ascii")
        headers["Proxy-Authorization"] = f"Basic {token}"
    via_host, via_port = via.hostname or "", via.port or 80
    if tls:  # through the proxy's CONNECT tunnel, TLS end to end
        return Target(tls=True, host=via_host, port=via_port, path=path, tunnel=(host, port),
                      proxy_headers=headers)  # fmt: skip
    absolute = urllib.parse.urlunsplit(("http", parts.netloc, parts.path or "/", parts.query, ""))
    return Target(tls=False, host=via_host, port=via_port, path=absolute, proxy_headers=headers)


def _tls_context() -> ssl.SSLContext:
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    import certifi  # only for an https address: its bundle costs ~40 ms to load

    return ssl.create_default_context(cafile=certifi.where())


class _Watched:
    """A connection that hands its socket to the call's watchdog as soon as it is open."""

    call: InFlight
    sock: Any

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self.call.attach(self.sock)


class _PlainConnection(_Watched, http.client.HTTPConnection):
    pass


class _TlsConnection(_Watched, http.client.HTTPSConnection):
    pass


class BoundedHttp:
    """An HTTP client whose calls each have a deadline and a size cap, and are cancelled when
    ``stop`` is set. Thread-safe: one instance serves every concurrent call of a run."""

    def __init__(self, *, stop: threading.Event | None = None, connections: int = 8) -> None:
        self.stop = stop if stop is not None else threading.Event()
        self._slots = threading.BoundedSemaphore(max(connections, 1))
        self._tls: ssl.SSLContext | None = None
        self._calls: list[InFlight] = []
        self._lock = threading.Lock()
        self._watcher: threading.Thread | None = None
        self._closed = threading.Event()

    def close(self) -> None:
        self._closed.set()

    def in_flight(self) -> list[InFlight]:
        with self._lock:
            return [call for call in self._calls if call.ended is None]

    def request(
        self,
        method: str,
        url: str,
        *,
        timeout: float,
        max_bytes: int,
        label: str = "",
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        """The whole answer within ``timeout`` seconds and ``max_bytes`` bytes, else
        ``CallFailed``. HTTP error statuses are answers, not failures."""
        where = target(url)
        started = time.monotonic()
        call = InFlight(label=label, started=started, deadline=started + timeout)
        self._register(call)
        try:
            with self._slot(call, timeout):
                return self._exchange(
                    call=call, where=where, method=method, content=content,
                    headers=headers or {}, timeout=timeout, max_bytes=max_bytes,
                )  # fmt: skip
        finally:
            call.end("done")
            with self._lock:
                self._calls.remove(call)

    @contextlib.contextmanager
    def _slot(self, call: InFlight, timeout: float) -> Iterator[None]:
        """One of the ``connections`` slots, waited for within the call's deadline."""
        while not self._slots.acquire(timeout=max(0.0, min(call.remaining, WATCH_SECONDS))):
            ended = self._ended(call, timeout, partial=b"")
            if ended is not None:
                raise ended
        try:
            yield
        finally:
            self._slots.release()

    def _connection(self, *, call: InFlight, where: Target, timeout: float) -> Any:
        connect = min(timeout, CONNECT_SECONDS)
        if where.tls:
            if self._tls is None:
                with self._lock:
                    self._tls = self._tls or _tls_context()
            connection: Any = _TlsConnection(where.host, where.port, timeout=connect,
                                             context=self._tls)  # fmt: skip
        else:
            connection = _PlainConnection(where.host, where.port, timeout=connect)
        connection.call = call
        if where.tunnel is not None:
            connection.set_tunnel(*where.tunnel, headers=where.proxy_headers)
        return connection

    def _exchange(
        self,
        *,
        call: InFlight,
        where: Target,
        method: str,
        content: bytes | None,
        headers: dict[str, str],
        timeout: float,
        max_bytes: int,
    ) -> Answer:
        received = bytearray()
        connection = self._connection(call=call, where=where, timeout=timeout)
        try:
            connection.connect()
            connection.sock.settimeout(timeout)  # each read and write, as before the deadline
            proxy = where.proxy_headers if where.tunnel is None else {}
            sent = {"User-Agent": USER_AGENT, **proxy, **headers}
            connection.request(method, where.path, body=content, headers=sent)
            response = connection.getresponse()
            declared = response.getheader("content-length", "") or ""
            if declared.isdigit() and int(declared) > max_bytes:
                raise CallFailed(
                    "too_large",
                    f"the answer declares {int(declared):,} bytes, more than the "
                    f"{max_bytes:,} allowed",
                )
            while chunk := response.read1(CHUNK_BYTES):
                received += chunk
                if len(received) > max_bytes:
                    raise CallFailed(
                        "too_large",
                        f"the answer passed {max_bytes:,} bytes and was refused",
                        partial=bytes(received[:max_bytes]),
                    )
                if call.ended is not None or time.monotonic() >= call.deadline:
                    break
            status = response.status
            answered: dict[str, str] = {}
            for name, value in response.getheaders():
                key = name.lower()
                answered[key] = f"{answered[key]}, {value}" if key in answered else value
        except CallFailed:
            raise
        except TimeoutError as exc:
            raise self._ended(call, timeout, partial=bytes(received)) or CallFailed(
                DEADLINE, f"no complete answer within {timeout:g} s ({type(exc).__name__})"
            ) from None
        except (http.client.HTTPException, OSError, ValueError) as exc:
            # Refused or reset connections, TLS failures, a malformed or truncated answer.
            ended = self._ended(call, timeout, partial=bytes(received))
            if ended is not None:
                raise ended from None
            raise CallFailed(
                "transport", f"{type(exc).__name__}: {exc}", partial=bytes(received)
            ) from None
        finally:
            connection.close()
        ended = self._ended(call, timeout, partial=bytes(received))
        if ended is not None:
            raise ended
        return Answer(status=status, body=bytes(received), seconds=call.elapsed, headers=answered)

    def _ended(self, call: InFlight, timeout: float, *, partial: bytes) -> CallFailed | None:
        """Why the watchdog (or the deadline check between chunks) ended the call, if it did."""
        if call.ended is None and time.monotonic() >= call.deadline:
            call.end(DEADLINE)
        if call.ended == STOPPED:
            return CallFailed(STOPPED, "the run was interrupted", partial=partial)
        if call.ended == DEADLINE:
            return CallFailed(
                DEADLINE, f"no complete answer within the {timeout:g} s deadline", partial=partial
            )
        return None

    # --- the watchdog ---

    def _register(self, call: InFlight) -> None:
        with self._lock:
            self._calls.append(call)
            if self._watcher is None:
                self._watcher = threading.Thread(
                    target=self._watch, name="bounded-http-watchdog", daemon=True
                )
                self._watcher.start()
        if self.stop.is_set():
            call.end(STOPPED)

    def _watch(self) -> None:
        # The thread lives while a call is in flight and ends when none is (the next call
        # starts another, under the same lock), so a client nobody closed keeps no thread.
        while not self._closed.wait(WATCH_SECONDS):
            now = time.monotonic()
            stopped = self.stop.is_set()
            with self._lock:
                if not self._calls:
                    self._watcher = None
                    return
                calls = [call for call in self._calls if call.ended is None]
            for call in calls:
                if stopped:
                    call.end(STOPPED)
                elif now >= call.deadline:
                    call.end(DEADLINE)
