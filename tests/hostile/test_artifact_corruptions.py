"""Random corruptions of a catalog artifact (seeded, so a failure replays): the streamed reading
refuses exactly what the whole-document reading refuses, with the same message, and no input makes
validation fail with anything but a refusal a page, a log and the database can hold.

A first run of these found lone surrogates in keys and enumerated fields reaching the compiled
schema engine, which raised instead of refusing (a sync answered 500)."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

import atlas.artifact.catalog_artifact as artifact
from atlas.artifact.catalog_artifact import CatalogInvalid, catalog_revision
from atlas.jsonio import json_stream
from tests.conftest import make_row

CHUNKS = (1, 3, 17, 64, 1 << 20)
ODD_BYTES = [b"{", b"}", b"[", b"]", b",", b":", b'"', b" ", b"1", b"e", b"-", b".", b"\\", b"u",
             b"\xc3", b"\xa9", b"n", b"\n", b"0", b"\\u0000", b"\\ud800"]  # fmt: skip
ODD_VALUES: list[Any] = [
    "\ud800", "\x00", "a\nb", "é", "", 2**70, -1, 0, 1.5, float("inf"), True, None, [], {},
    {"k\udc00": 1}, ["\ud83d"], [[[[[[[[[[[[[[1]]]]]]]]]]]]]], "2025-01-01", "javascript:x",
    {"\x00": 1},
]  # fmt: skip


def rows() -> list[dict[str, Any]]:
    found = [make_row(f"MarinSkyRL:r{index}") for index in range(4)]
    found[1]["extra"] = {"weight": 0.5, "list": [1, 2, {"x": None}]}
    found[2]["notes"] = "café 😀"
    return found


def outcome(reading: Any, data: bytes) -> Any:
    try:
        return reading(data)
    except CatalogInvalid as exc:
        message = str(exc)
        message.encode("utf-8")  # printable on a page, in a log, in the database
        return message


def assert_readings_agree(data: bytes, chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_stream, "CHUNK_BYTES", chunk)
    streamed = outcome(artifact.validate_bytes, data)
    whole = outcome(lambda data: artifact._validated_whole(data), data)
    assert streamed == whole, (chunk, data)
    if isinstance(streamed, str):  # refused: with a message naming what
        assert streamed.strip(), data
        return
    # Accepted: every row is kept exactly as the document holds it, in its order per origin.
    document = json.loads(data)
    kept = {snapshot.origin: list(snapshot.rows) for snapshot in streamed.snapshots}
    expected: dict[str, list[Any]] = {}
    for row in document["sources"]:
        expected.setdefault(row["origin"], []).append(row)
    assert kept == expected, data
    assert streamed.revision == document["revision"] == catalog_revision(document["sources"])


def test_corrupted_bytes(monkeypatch):
    generator = random.Random(12)
    text = json.dumps(
        {"schema_version": 1, "revision": catalog_revision(rows()), "sources": rows()},
        ensure_ascii=False,
    ).encode("utf-8")
    for _ in range(400):
        data = bytearray(text)
        for _ in range(generator.randint(1, 3)):
            at = generator.randrange(len(data))
            step = generator.random()
            if step < 0.4:
                del data[at : at + generator.randint(1, 3)]
            elif step < 0.8:
                data[at:at] = generator.choice(ODD_BYTES)
            else:
                data[at : at + 1] = generator.choice(ODD_BYTES)
        assert_readings_agree(bytes(data), generator.choice(CHUNKS), monkeypatch)


def test_odd_values_under_a_matching_revision(monkeypatch):
    """The revision is recomputed, so every row reaches the field rules."""
    generator = random.Random(7)
    for _ in range(300):
        changed = rows()
        for _ in range(generator.randint(1, 2)):
            target = generator.choice(changed)
            key = generator.choice([*target, "extra", "k\ud800", "\n"])
            if isinstance(target.get(key), dict) and generator.random() < 0.5:
                target = target[key]
                key = generator.choice([*target, "zz"])
            target[key] = copy.deepcopy(generator.choice(ODD_VALUES))
        body = {"schema_version": 1, "revision": catalog_revision(changed), "sources": changed}
        data = json.dumps(body).replace("Infinity", "1e999").encode("ascii")
        assert_readings_agree(data, generator.choice(CHUNKS), monkeypatch)
