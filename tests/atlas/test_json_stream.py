"""The streaming reader of one large array member (``atlas.jsonio.json_stream``): the same values as
the json module at any chunk size, and a refusal (read it whole) for everything else."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest

from atlas.jsonio.json_stream import ArrayStart, Item, Member, Unstreamable, read_object

NUL_ESCAPE = re.compile(r"\\u0000")


def events(data: bytes, *, chunk: int, decoder: json.JSONDecoder | None = None) -> list[Any]:
    return list(
        read_object(
            io.BytesIO(data).read,
            array_key="rows",
            decoder=decoder or json.JSONDecoder(),
            flag=NUL_ESCAPE,
            chunk_bytes=chunk,
        )
    )


def rebuilt(found: list[Any]) -> dict[str, Any]:
    """The document the events describe."""
    document: dict[str, Any] = {}
    for event in found:
        if isinstance(event, Member):
            document[event.key] = event.value
        elif isinstance(event, ArrayStart):
            document[event.key] = []
        else:
            document["rows"].append(event.value)
    return document


DOCUMENTS = [
    {"rows": []},
    {},
    {"a": 1, "rows": [1, 22, 333, -4.5e-7, 1e300, True, None, "x"], "z": [1, 2]},
    {"rows": [{"id": "é · 😀 " * 20, "n": 12345678901234567890, "nested": {"k": [[], {}]}}]},
    {"revision": "r", "rows": [{"id": str(index), "v": "w" * index} for index in range(40)]},
    {"rows": {"not": "an array"}, "other": "rows"},
]


@pytest.mark.parametrize("document", DOCUMENTS)
@pytest.mark.parametrize("indent", [None, 2])
def test_every_chunk_size_reads_what_the_json_module_reads(document, indent):
    data = json.dumps(document, indent=indent, ensure_ascii=False).encode("utf-8")
    # Chunks of one byte split every multi-byte character, number, escape and literal.
    for chunk in (1, 2, 3, 7, 64, 1 << 20):
        assert rebuilt(events(data, chunk=chunk)) == json.loads(data), chunk


def test_items_come_one_at_a_time_in_document_order():
    data = b'{"head": 1, "rows": [{"a": 1}, 2], "tail": "t"}'
    assert events(data, chunk=4) == [
        Member("head", 1),
        ArrayStart("rows"),
        Item({"a": 1}, False),
        Item(2, False),
        Member("tail", "t"),
    ]


def test_an_item_is_flagged_when_its_own_text_matches():
    data = b'{"rows": ["plain", "nul \\u0000 here", "plain again"]}'
    assert [event.flagged for event in events(data, chunk=5) if isinstance(event, Item)] == [
        False,
        True,
        False,
    ]


def test_the_decoder_hooks_see_every_number():
    """Every number reaches a hook, a number cut by a chunk perhaps first as a prefix (an integer
    or a float as the whole number is): ``atlas.artifact.catalog_artifact`` counts on both."""
    ints: list[str] = []
    floats: list[str] = []
    decoder = json.JSONDecoder(
        parse_int=lambda text: ints.append(text) or int(text),
        parse_float=lambda text: floats.append(text) or float(text),
    )
    events(b'{"n": 7, "rows": [1, [23, 4.5e+10]]}', chunk=1, decoder=decoder)
    assert {"7", "1", "23"} <= set(ints) <= {"7", "1", "2", "23", "4"}
    assert set(floats) <= {"4.5", "4.5e+1", "4.5e+10"} and floats[-1] == "4.5e+10"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"   ",
        b"[1, 2]",
        b'"text"',
        b"{",
        b'{"rows": [1, 2}',
        b'{"rows": [1 2]}',
        b'{"rows": [1,]}',
        b'{"a": 1,}',
        b'{"a" 1}',
        b"{1: 2}",
        b'{"rows": [1]} {}',
        b'{"rows": [1]} x',
        b'{"a": 1, "a": 2}',
        b'{"rows": [1], "rows": [2]}',
        b'\xef\xbb\xbf{"rows": []}',
        b'{"rows": ["\xff"]}',
        b'{"rows": ["\xc3"]}',
        b'{"rows": [NaN]}',
        b'{"rows": [tru]}',
        b'{"rows": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}",
    ],
)
def test_anything_else_is_left_to_the_whole_document_reader(data):
    strict = json.JSONDecoder(parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    for chunk in (1, 3, 1 << 20):
        with pytest.raises(Unstreamable):
            events(data, chunk=chunk, decoder=strict)


def test_a_value_larger_than_a_chunk_is_read_in_doubling_steps():
    """Re-reading a long row chunk by chunk would be quadratic; the reads double instead."""
    data = json.dumps({"rows": ["x" * 100_000]}).encode()
    reads: list[int] = []
    source = io.BytesIO(data)

    def read(size: int) -> bytes:
        reads.append(size)
        return source.read(size)

    found = list(
        read_object(
            read, array_key="rows", decoder=json.JSONDecoder(), flag=NUL_ESCAPE, chunk_bytes=64
        )
    )
    assert found[-1] == Item("x" * 100_000, False)
    assert len(reads) < 20  # 64 bytes doubled past 100,000 is 11 steps; chunk by chunk, 1,500
