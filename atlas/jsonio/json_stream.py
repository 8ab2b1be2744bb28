"""Reading a JSON object whose one array member is too large to hold whole: the object's other
members are decoded as usual, the array's items one at a time, from text read in chunks.

The catalog artifact of 100,000 sources is 131 MB of JSON. Held as bytes, then as text, then as
parsed rows, it took 630 MB to validate; read item by item, only the chunk being decoded and the
item in hand are held as text and objects.

The reader streams only the well-formed shape it knows (an object with unique keys, whitespace
around it). Anything else — a syntax error, bytes that are not UTF-8, a repeated key — raises
``Unstreamable``, and the caller reads the document whole, so that every refusal carries the
message (and the position) the whole-document reader gives.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

CHUNK_BYTES = 1 << 20
_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, as the json module skips it


class Unstreamable(Exception):
    """The text is not an object this reader streams; read the document whole."""


@dataclass(frozen=True)
class Member:
    """A member of the object other than the streamed array."""

    key: str
    value: Any


@dataclass(frozen=True)
class ArrayStart:
    """The streamed array begins (its items follow, then the next member)."""

    key: str


@dataclass(frozen=True)
class Item:
    """One item of the streamed array; ``flagged``: whether its text matched the caller's
    pattern."""

    value: Any
    flagged: bool


def read_object(
    read: Callable[[int], bytes],
    *,
    array_key: str,
    decoder: json.JSONDecoder,
    flag: re.Pattern[str],
    chunk_bytes: int | None = None,
) -> Iterator[Member | ArrayStart | Item]:
    """The members of the object ``read`` yields the UTF-8 bytes of, in document order; the member
    ``array_key``, when its value is an array, as its items instead. The text is read to its end
    (nothing may follow the object). ``chunk_bytes``: how much to read at a time."""
    text = _Text(read, chunk_bytes or CHUNK_BYTES, decoder)
    text.expect("{")
    seen: set[str] = set()
    if text.peek() == "}":
        text.pos += 1
    else:
        while True:
            key = text.value()[0]
            if not isinstance(key, str) or key in seen:
                raise Unstreamable  # a repeated key: the whole-document reader keeps the last
            seen.add(key)
            text.expect(":")
            if key == array_key and text.peek() == "[":
                text.pos += 1
                yield ArrayStart(key)
                yield from _items(text, flag=flag)
            else:
                yield Member(key, text.value()[0])
            if text.next_of(",}") == "}":
                break
    if text.peek(at_end=True) is not None:
        raise Unstreamable  # extra data after the object


def _items(text: _Text, *, flag: re.Pattern[str]) -> Iterator[Item]:
    if text.peek() == "]":
        text.pos += 1
        return
    while True:
        value, start = text.value()
        yield Item(value, flag.search(text.text, start, text.pos) is not None)
        if text.next_of(",]") == "]":
            return


class _Text:
    """Decoded text with a read position; chunks are appended as the position nears the end."""

    def __init__(
        self, read: Callable[[int], bytes], chunk_bytes: int, decoder: json.JSONDecoder
    ) -> None:
        self.read = read
        self.decoder = decoder
        self.chunk_bytes = chunk_bytes
        self.utf8 = codecs.getincrementaldecoder("utf-8")()
        self.text = ""
        self.pos = 0
        self.ended = False

    def more(self, *, at_least: int = 0) -> bool:
        """Append what ``read`` gives next (at least ``at_least`` bytes' worth unless the text
        ends); False at the end of the text."""
        if self.ended:
            return False
        wanted = max(self.chunk_bytes, at_least)
        pieces = []
        while wanted > 0:
            data = self.read(wanted)
            if not data:
                self.ended = True
                break
            wanted -= len(data)
            pieces.append(data)
        try:
            added = self.utf8.decode(b"".join(pieces), final=self.ended)
        except UnicodeDecodeError:
            raise Unstreamable from None
        self.text = self.text[self.pos :] + added
        self.pos = 0
        return bool(added) or not self.ended

    def peek(self, *, at_end: bool = False) -> str | None:
        """The next character after whitespace (read as needed); None at the end of the text
        when ``at_end`` allows it."""
        while True:
            self.pos = _WHITESPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.more():
                if at_end:
                    return None
                raise Unstreamable

    def expect(self, character: str) -> None:
        if self.peek() != character:
            raise Unstreamable
        self.pos += 1

    def next_of(self, characters: str) -> str:
        found = self.peek()
        if found is None or found not in characters:
            raise Unstreamable
        self.pos += 1
        return found

    def value(self) -> tuple[Any, int]:
        """The value at the position and where its text starts; the position moves past it."""
        self.peek()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.text, self.pos)
            except json.JSONDecodeError:
                # Most often the value runs past the text read so far: read as much again
                # (doubling keeps a value larger than a chunk from being re-read chunk by chunk).
                if self.more(at_least=len(self.text) - self.pos):
                    continue
                raise Unstreamable from None
            except (ValueError, RecursionError):  # a rejected constant, a number out of bounds
                raise Unstreamable from None
            # Only a separator or a closing bracket may follow a value. Anything else, or the end of
            # the text read so far, may mean a number cut short by the chunk ("1e" of "1e+30" reads
            # as 1): read on and decode it again. The decoder's hooks may so see a number's prefix
            # before the number, always a number of the same kind or an integer.
            follows = _WHITESPACE.match(self.text, end).end()  # type: ignore[union-attr]
            if (follows == len(self.text) or self.text[follows] not in ",]}:") and self.more():
                continue
            start, self.pos = self.pos, end
            return value, start
