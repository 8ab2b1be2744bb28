"""The catalog artifact's canonical form: keys sorted, no whitespace, ASCII only (``json.dumps``
with ``sort_keys``, compact separators and ``ensure_ascii``). Its revision is the SHA-256 of the
canonical bytes of the ``sources`` list: a persisted identity, so it has exactly one encoder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

# The one encoder, made once: ``json.dumps`` with these arguments makes this same encoder anew
# at every call (a tenth of the encoding of a catalog row).
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def canonical_json(value: Any) -> str:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)``."""
    return _ENCODER.encode(value)


def catalog_revision(rows: list[dict[str, Any]]) -> str:
    return hashlib.sha256(canonical_json(rows).encode("ascii")).hexdigest()


def revision_of(parts: Iterable[bytes]) -> str:
    """``catalog_revision`` of the rows whose canonical bytes are ``parts``: a list's canonical
    form is its items' joined by commas, between brackets."""
    digest = hashlib.sha256(b"[")
    separator = b""
    for part in parts:
        digest.update(separator)
        digest.update(part)
        separator = b","
    digest.update(b"]")
    return digest.hexdigest()


def canonical_rows(rows: Sequence[Any]) -> list[bytes]:
    """The canonical bytes of each row."""
    return [canonical_row(row) for row in rows]


def canonical_row(row: Any) -> bytes:
    """The canonical bytes of one row."""
    return canonical_json(row).encode("ascii")
