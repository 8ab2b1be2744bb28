"""JSON documents the database can store: one strict reader and one check for every intake
(catalog artifact, review collections, difficulty reports).

PostgreSQL's ``jsonb`` refuses NUL characters, lone surrogates and non-finite numbers; BIGINT
columns stop at 64 bits; and a document nested thousands deep exhausts the recursion of any reader.
Each of these once reached the database (or a page) and answered 500 instead of a refusal.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import orjson

MAX_DEPTH = 32
INT64 = (-(2**63), 2**63 - 1)
# Escapes whose presence in a document's text could put a NUL or a lone surrogate into a parsed
# string; with the number hooks of ``loads_checked`` they let a reader skip the per-value scan
# (seconds per 100,000 catalog rows) when nothing suspicious was seen.
_ESCAPES = re.compile(rb"\\u0000|\\u[dD][89a-fA-F]")
# The same escapes in decoded text (for a reader that decodes a document value by value).
TEXT_ESCAPES = re.compile(_ESCAPES.pattern.decode("ascii"))


class UnreadableJson(ValueError):
    """Not a JSON document this project accepts; ``str(exc)`` says why."""


def loads(data: bytes | str) -> Any:
    """Parse strict JSON: UTF-8, no NaN or Infinity, nesting a reader can follow."""
    return _parse(_text(data))


def loads_stored(text: str) -> Any:
    """A document read back from the database, as ``json.loads`` reads it. Every intake refused what
    orjson reads differently (integers beyond 64 bits become floats in orjson; non-finite numbers
    and lone surrogates it refuses), so its two to three times faster reading gives the same values;
    a document it refuses anyway is read by ``json`` as Django's JSONField would."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _text(data: bytes | str) -> str:
    try:
        return data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise UnreadableJson(str(exc)) from None


def _parse(text: str, decoder: json.JSONDecoder | None = None) -> Any:
    try:
        return (decoder or json.JSONDecoder(parse_constant=_reject_constant)).decode(text)
    except RecursionError:
        raise UnreadableJson("the document is nested too deeply") from None
    except ValueError as exc:
        raise UnreadableJson(str(exc)) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


@dataclass(frozen=True)
class Scanned:
    """A parsed document and what its numbers and escapes could hide."""

    document: Any
    # False guarantees no NUL, no lone surrogate, no integer beyond 64 bits and no non-finite
    # number (only nesting is left to check).
    suspicious: bool


class WatchingDecoder:
    """A strict decoder (``loads``'s rules) that notes, across everything it decodes, whether a
    number could be unstorable (an integer beyond 64 bits, a non-finite float), so that a caller
    decoding value by value can tell which values need a closer look."""

    def __init__(self) -> None:
        self.unstorable_numbers = 0
        self.decoder = json.JSONDecoder(
            parse_int=self._int, parse_float=self._float, parse_constant=_reject_constant
        )

    def _int(self, text: str) -> int:
        value = int(text)
        if not INT64[0] <= value <= INT64[1]:
            self.unstorable_numbers += 1
        return value

    def _float(self, text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            self.unstorable_numbers += 1
        return value


def loads_scanned(data: bytes) -> Scanned:
    """``loads``, noting whether any parsed value may be unstorable."""
    watching = WatchingDecoder()
    document = _parse(_text(data), watching.decoder)
    suspicious = watching.unstorable_numbers > 0 or _ESCAPES.search(data) is not None
    return Scanned(document=document, suspicious=suspicious)


def loads_checked(data: bytes) -> tuple[Any, bool]:
    """``loads``, and whether any parsed value may be unstorable (``Scanned.suspicious``)."""
    scanned = loads_scanned(data)
    return scanned.document, scanned.suspicious


class FoundPath(str):
    """The path of a value a document may not hold (``field_path`` text, "" for the root), and
    ``reason``: why, for the refusal ("nested deeper than 32", "an integer beyond 64 bits")."""

    reason: str

    @classmethod
    def of(cls, document: Any, parts: list[Any], *, max_depth: int) -> FoundPath:
        found = cls(field_path(parts))
        found.reason = _reason(document, parts, max_depth=max_depth)
        return found


def _reason(document: Any, parts: list[Any], *, max_depth: int) -> str:
    if len(parts) > max_depth:
        return f"nested deeper than {max_depth} levels"
    value = document
    for part in parts:
        if isinstance(part, str) and not storable_text(part):
            return "a key holding a NUL character or a lone surrogate"
        value = value[part]
    if isinstance(value, str):
        return "text holding a NUL character or a lone surrogate"
    if isinstance(value, int) and not isinstance(value, bool):
        return "an integer beyond 64 bits"
    if isinstance(value, float):
        return "a number that is not finite"
    return f"nested deeper than {max_depth} levels"


def deeper_than(value: Any, *, max_depth: int) -> FoundPath | None:
    """The path of the first value nested deeper than ``max_depth``, else None."""
    found = _deeper_at(value, 0, max_depth)
    return None if found is None else FoundPath.of(value, found[::-1], max_depth=max_depth)


def _deeper_at(value: Any, depth: int, max_depth: int) -> list[Any] | None:
    """The path (reversed) from ``value``, at ``depth``, to the first value below it nested deeper
    than ``max_depth``, else None. Only containers are entered: a scalar ends its path, and a
    review collection has ~10 scalars per evidence file."""
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    if depth >= max_depth:  # every child, scalar or not, lies beyond the bound
        return next(([key] for key, _ in items), None)
    for key, item in items:
        if isinstance(item, (dict, list)):
            found = _deeper_at(item, depth + 1, max_depth)
            if found is not None:
                found.append(key)
                return found
    return None


def printable(text: str, *, limit: int | None = None) -> str:
    """``text`` as a message may print it: with a character that is not printable (a newline, a
    NUL, a lone surrogate — also what a file name that is not UTF-8 is read as —, which no page,
    log or database text could hold) it is shown escaped; past ``limit`` characters, cut off."""
    if not text.isprintable():
        text = text.encode("unicode_escape", errors="backslashreplace").decode("ascii")
    return text if limit is None or len(text) <= limit else text[:limit] + "…"


def field_path(parts: Any) -> str:
    """``pipeline.files[0]`` from a sequence of keys and indexes, as a message may print it (keys
    ``printable``)."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
            continue
        key = printable(str(part))
        text += f".{key}" if text else key
    return text


def unstorable_path(value: Any, *, max_depth: int = MAX_DEPTH) -> FoundPath | None:
    """The path of the first value the database cannot store (NUL, lone surrogate, integer beyond
    64 bits, non-finite number) or nested deeper than ``max_depth``; "" for the root; None if
    every value can be stored."""
    found = _unstorable_at(value, 0, max_depth)
    return None if found is None else FoundPath.of(value, found[::-1], max_depth=max_depth)


def refusal_at(found: FoundPath) -> str:
    """``reviews[0].x: nested deeper than 32 levels``, as a refusal names a found value."""
    return f"{found or 'its root'}: {found.reason}"


def loads_storable(data: bytes, *, max_depth: int = MAX_DEPTH) -> tuple[Any, FoundPath | None]:
    """``loads``, and ``unstorable_path`` of the document. The per-value scan runs only when the
    text could hold an unstorable value (``loads_checked``); otherwise only nesting is left to
    check, container by container (a 10,000-evidence collection: milliseconds instead of ~60)."""
    document, suspicious = loads_checked(data)
    if suspicious:
        return document, unstorable_path(document, max_depth=max_depth)
    return document, deeper_than(document, max_depth=max_depth)


def _unstorable_at(value: Any, depth: int, max_depth: int) -> list[Any] | None:
    """The path (reversed) from ``value`` to the first unstorable value below it, else None. The
    path is built only on the way back from a find: a review collection has ~10 values per
    evidence file, and a path per value visited cost more than the checks."""
    if depth > max_depth:
        return []
    if isinstance(value, str):
        return None if storable_text(value) else []
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return None if INT64[0] <= value <= INT64[1] else []
    if isinstance(value, float):
        return None if math.isfinite(value) else []
    if isinstance(value, dict):
        for key, item in value.items():
            if not storable_text(str(key)):
                return [key]
            found = _unstorable_at(item, depth + 1, max_depth)
            if found is not None:
                found.append(key)
                return found
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _unstorable_at(item, depth + 1, max_depth)
            if found is not None:
                found.append(index)
                return found
    return None


def storable_text(text: str) -> bool:
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True
