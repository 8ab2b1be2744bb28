"""Validation of a catalog artifact and the validated-artifact cache."""

from __future__ import annotations

import copy
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

import atlas.artifact.catalog_artifact as artifact
from atlas.artifact.catalog_artifact import (
    CatalogInvalid,
    ValidatedCatalog,
    catalog_revision,
    load_catalog,
    validate_bytes,
)
from atlas.jsonio import json_stream
from tests.conftest import make_row
from tests.hostile.test_catalog_artifacts import CASES, artifact_text


def document(rows: list[Any], **overrides: Any) -> bytes:
    body: dict[str, Any] = {
        "schema_version": 1,
        "revision": catalog_revision(rows),
        "sources": rows,
    }
    body.update(overrides)
    for key in [key for key, value in overrides.items() if value is ...]:
        del body[key]
    return json.dumps(body).encode("utf-8")


def message(data: bytes) -> str:
    with pytest.raises(CatalogInvalid) as caught:
        validate_bytes(data)
    return str(caught.value)


def rows_with(**overrides: Any) -> list[dict[str, Any]]:
    second = make_row("MarinSkyRL:b")
    second.update(overrides)  # set after building, so derived fields are not recomputed
    return [make_row("MarinSkyRL:a"), second]


# --- each rule on its own ---------------------------------------------------------------------


def test_missing_file(tmp_path):
    with pytest.raises(CatalogInvalid) as caught:
        load_catalog(tmp_path / "nope.json")
    assert str(caught.value) == f"Catalog artifact not found: {tmp_path / 'nope.json'}"


def test_unreadable_path_is_not_found(tmp_path):
    with pytest.raises(CatalogInvalid, match=r"^Catalog artifact not found: "):
        load_catalog(tmp_path)  # a directory


@pytest.mark.parametrize(
    "data",
    [b"", b"{", b"not json", b"\xff\xfe", b'{"schema_version": NaN}', b"[1, 2]", b'"text"', b"1"],
)
def test_not_json_or_not_an_object(data):
    assert message(data).startswith("Catalog artifact is not valid JSON: ")


def test_json_parser_message_is_included():
    assert message(b"{") == (
        "Catalog artifact is not valid JSON: "
        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [("1", '"1"'), (True, "true"), (2, "2"), (1.0, "1.0"), (..., "null"), (None, "null")],
)
def test_schema_version_must_be_the_integer_one(value, shown):
    rows = [make_row()]
    assert (
        message(document(rows, schema_version=value))
        == f"Unsupported catalog schema version: {shown}"
    )


@pytest.mark.parametrize("value", [..., "", None, 7, ["a"]])
def test_revision_missing_empty_or_not_a_string(value):
    assert message(document([make_row()], revision=value)) == "Generated catalog has no revision"


@pytest.mark.parametrize("value", [..., None, {"a": make_row()}, "rows"])
def test_sources_must_be_a_list(value):
    assert message(document([make_row()], sources=value)) == "Catalog sources must be a list"


def test_hash_mismatch_catches_a_row_edited_after_export():
    rows = [make_row()]
    revision = catalog_revision(rows)
    rows[0]["task_count"] = 101
    assert (
        message(document(rows, revision=revision)) == "Catalog revision does not match its sources"
    )


def test_hash_covers_key_order_independent_canonical_form():
    rows = [make_row()]
    reordered = [dict(reversed(list(rows[0].items())))]
    validated = validate_bytes(document(reordered, revision=catalog_revision(rows)))
    assert validated.revision == catalog_revision(rows)


@pytest.mark.parametrize(
    "bad_row",
    [
        "a string",
        ["list"],
        None,
        {"origin": "MarinSkyRL"},
        {"id": "", "origin": "MarinSkyRL"},
        {"id": 3, "origin": "MarinSkyRL"},
        {"id": "MarinSkyRL:z"},
        {"id": "MarinSkyRL:z", "origin": ""},
        {"id": "MarinSkyRL:z", "origin": None},
    ],
)
def test_row_not_an_object_or_without_id_and_origin(bad_row):
    rows = [make_row(), bad_row]
    assert message(document(rows)) == "Catalog source requires a nonempty id and origin"


def test_duplicate_id():
    rows = [
        make_row("MarinSkyRL:a"),
        make_row("MarinSkyRL:b"),
        make_row("MarinSkyRL:a", task_count=3),
    ]
    assert message(document(rows)) == "Duplicate catalog source: MarinSkyRL:a"


def test_duplicate_id_across_origins():
    moved = make_row("MarinSkyRL:a")
    moved["origin"] = "Other"
    assert (
        message(document([make_row("MarinSkyRL:a"), moved]))
        == "Duplicate catalog source: MarinSkyRL:a"
    )


INVALID_FIELDS = [
    ("task_count", -1),
    ("task_count", "5"),
    ("task_count", 5.0),
    ("task_count", True),
    ("tags", "rlvr"),
    ("tags", ["rlvr", 3]),
    ("tags", None),
    ("is_benchmark", 1),
    ("is_benchmark", None),
    ("is_benchmark", "true"),
    ("status", "available"),
    ("status", None),
    ("kind", "Env"),
    ("kind", None),
    ("type", "Unclassified"),
    ("type", None),
    ("turns", "single-turn"),
    ("turns", None),
    ("quality", "excellent"),
    ("traces", -1),
    ("traces", 2.0),
    ("traces", True),
    ("review_date", "2025-13-40"),
    ("review_date", "yesterday"),
    ("pipeline", "p"),
]
STRING_OR_NULL = [
    "name", "display_name", "family", "notes", "dataset_id", "dataset_revision", "url",
    "canonical_source", "canonical_url", "verifier_name", "verifier_revision", "verifier_url",
    "quality", "review_url", "review_date", "review_source_revision", "review_verifier_revision",
    "difficulty", "grading_revision",
]  # fmt: skip


@pytest.mark.parametrize(("field", "value"), INVALID_FIELDS + [(f, 5) for f in STRING_OR_NULL])
def test_invalid_field_types(field, value):
    rows = rows_with(**{field: value})
    assert message(document(rows)) == f"Catalog source MarinSkyRL:b has an invalid {field}"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("task_count", None),
        ("task_count", 0),
        ("type", ""),
        ("turns", ""),
        ("status", "Excluded"),
        ("kind", "Generator"),
        ("quality", "bad"),
        ("verifier_url", ""),
        ("dataset_revision", None),
        ("tags", []),
    ],
)
def test_valid_field_values(field, value):
    validated = validate_bytes(document(rows_with(**{field: value})))
    assert validated.snapshots[0].rows[1][field] == value


@pytest.mark.parametrize("value", [5, "", "yesterday", "2026-09-19", "2026-09-19T15:41:18", True])
def test_revised_at_must_be_a_timestamp_or_null(value):
    rows = [make_row()]
    assert (
        message(document(rows, revised_at=value))
        == "Catalog revised_at must be a timestamp or null"
    )


@pytest.mark.parametrize(
    "value", [None, "2026-09-19T15:41:18.000Z", "2026-09-29T18:47:50Z", "2026-01-01T00:00:00+02:00"]
)
def test_valid_revised_at(value):
    validated = validate_bytes(document([make_row()], revised_at=value))
    assert validated.revised_at == value
    assert all(snapshot.revised_at == value for snapshot in validated.snapshots)


# --- precedence: the first failing rule wins ---------------------------------------------------


def test_precedence_first_failure_wins():
    bad_row = make_row("MarinSkyRL:b", task_count=-1)
    everything_wrong = {
        "schema_version": "1",
        "revision": "",
        "sources": "nope",
        "revised_at": 3,
    }
    steps = [
        ('Unsupported catalog schema version: "1"', {}),
        ("Generated catalog has no revision", {"schema_version": 1}),
        ("Catalog sources must be a list", {"revision": "f" * 64}),
        (
            "Catalog revision does not match its sources",
            {"sources": [make_row("MarinSkyRL:b"), bad_row, {"id": ""}, make_row("MarinSkyRL:b")]},
        ),
    ]
    body = dict(everything_wrong)
    for expected, change in steps:
        body.update(change)
        assert message(json.dumps(body).encode()) == expected
    # With a matching hash, rule 7 (a later row without id) beats rule 8 (duplicate) and rule 9
    # (an earlier row with a bad field), whatever the row positions.
    body["revision"] = catalog_revision(body["sources"])
    assert message(json.dumps(body).encode()) == "Catalog source requires a nonempty id and origin"
    body["sources"] = [
        make_row("MarinSkyRL:b", task_count=-1),
        make_row("MarinSkyRL:c"),
        make_row("MarinSkyRL:c"),
    ]
    body["revision"] = catalog_revision(body["sources"])
    assert message(json.dumps(body).encode()) == "Duplicate catalog source: MarinSkyRL:c"
    body["sources"] = body["sources"][:2]
    body["revision"] = catalog_revision(body["sources"])
    assert (
        message(json.dumps(body).encode())
        == "Catalog source MarinSkyRL:b has an invalid task_count"
    )
    body["sources"] = [make_row("MarinSkyRL:b")]
    body["revision"] = catalog_revision(body["sources"])
    assert message(json.dumps(body).encode()) == "Catalog revised_at must be a timestamp or null"
    body["revised_at"] = None
    assert validate_bytes(json.dumps(body).encode()).revision == body["revision"]


def test_not_found_beats_everything(tmp_path):
    with pytest.raises(CatalogInvalid, match=r"^Catalog artifact not found"):
        load_catalog(tmp_path / "missing" / "catalog.json")


# --- grouping ---------------------------------------------------------------------------------


def test_rows_grouped_by_origin_in_origin_order_with_the_whole_revision():
    rows = [
        make_row("Zeta:1"),
        make_row("Alpha:2"),
        make_row("Zeta:0"),
        make_row("Task Trove:t", tags=["agentic", "multi-turn"]),
    ]
    validated = validate_bytes(document(rows, revised_at="2026-09-29T18:47:50Z"))
    assert [s.origin for s in validated.snapshots] == ["Alpha", "Task Trove", "Zeta"]
    assert [[r["id"] for r in s.rows] for s in validated.snapshots] == [
        ["Alpha:2"],
        ["Task Trove:t"],
        ["Zeta:1", "Zeta:0"],
    ]
    assert {s.revision for s in validated.snapshots} == {catalog_revision(rows)}
    assert validated.source_ids == {"Zeta:1", "Alpha:2", "Zeta:0", "Task Trove:t"}


def test_empty_catalog_is_valid():
    validated = validate_bytes(document([]))
    assert validated.snapshots == () and validated.revision == catalog_revision([])


# --- the validated-artifact cache -------------------------------------------------------------


def test_cache_equals_full_validation_and_skips_reparsing(tmp_path, monkeypatch, write_catalog):
    path = write_catalog(
        [make_row("MarinSkyRL:a"), make_row("Task Trove:t", tags=["agentic", "multi-turn"])]
    )
    full = validate_bytes(path.read_bytes())
    first = load_catalog(path)
    assert first == full

    calls = []
    real = artifact._validated
    monkeypatch.setattr(
        artifact, "_validated", lambda *args, **kwargs: calls.append(1) or real(*args, **kwargs)
    )
    again = load_catalog(path)
    assert again == full and calls == []  # unchanged bytes: served from the cache

    # Same bytes at another path are the same artifact.
    copy = tmp_path / "copy.json"
    copy.write_bytes(path.read_bytes())
    assert load_catalog(copy) == full and calls == []


def test_cache_revalidates_when_bytes_change(tmp_path, write_catalog):
    path: Path = write_catalog([make_row("MarinSkyRL:a")])
    good = load_catalog(path)
    original = path.read_bytes()

    # Edited after export: the new bytes must be validated (and rejected), not served from cache.
    tampered = original.replace(b'"task_count": 100', b'"task_count": 101')
    assert tampered != original
    path.write_bytes(tampered)
    with pytest.raises(CatalogInvalid, match=r"^Catalog revision does not match its sources$"):
        load_catalog(path)

    # A different valid artifact yields its own result.
    path.write_bytes(write_catalog([make_row("MarinSkyRL:a", task_count=7)]).read_bytes())
    changed = load_catalog(path)
    assert changed != good and changed.snapshots[0].rows[0]["task_count"] == 7

    # And the original bytes again give the original result.
    path.write_bytes(original)
    assert load_catalog(path) == good


def test_cache_never_hides_a_deleted_file(tmp_path, write_catalog):
    path = write_catalog([make_row("MarinSkyRL:a")])
    load_catalog(path)
    path.unlink()
    with pytest.raises(CatalogInvalid, match=r"^Catalog artifact not found"):
        load_catalog(path)


def test_packaged_catalog_validates(packaged_catalog, packaged_rows):
    validated = load_catalog(packaged_catalog)
    assert validated.revision == catalog_revision(packaged_rows)
    assert [s.origin for s in validated.snapshots] == ["MarinSkyRL", "Task Trove"]
    assert sum(len(s.rows) for s in validated.snapshots) == 206


# --- the streamed reading ---------------------------------------------------------------------


@pytest.fixture
def small_chunks(monkeypatch):
    """The artifact read seven bytes at a time: every row, number and escape is cut somewhere."""
    monkeypatch.setattr(json_stream, "CHUNK_BYTES", 7)


def readings(data: bytes) -> tuple[ValidatedCatalog | str, ValidatedCatalog | str]:
    """The streamed and the whole-document readings' results (or refusals)."""
    found: list[ValidatedCatalog | str] = []
    for reading in (validate_bytes, lambda data: artifact._validated_whole(data)):
        try:
            found.append(reading(data))
        except CatalogInvalid as exc:
            found.append(str(exc))
    return found[0], found[1]


def test_the_streamed_reading_is_the_whole_document_reading(packaged_rows, small_chunks):
    rows = copy.deepcopy(packaged_rows)
    rows[3]["extra"] = {"weight": 0.1, "tiny": 1e-05}  # floats: the json module's canonical form
    rows[4]["notes"] = "café · 😀 \x7f \\u0000 literally"
    streamed, whole = readings(document(rows))
    assert isinstance(streamed, ValidatedCatalog) and streamed == whole
    assert streamed.revision == catalog_revision(rows)
    parsed = {row["id"]: row for snapshot in streamed.snapshots for row in snapshot.rows}
    assert parsed == {row["id"]: row for row in rows}


@pytest.mark.parametrize(("name", "change", "field"), CASES, ids=[case[0] for case in CASES])
def test_a_bad_row_in_the_middle_is_refused_as_a_whole_reading_refuses_it(
    name, change, field, packaged_rows, small_chunks
):
    """The checks a row's own text calls for (an escape, a number beyond 64 bits) are decided row
    by row: a clean first row must not spare a later one."""
    rows = copy.deepcopy(packaged_rows)
    rows[100].update(change)
    streamed, whole = readings(artifact_text(rows).encode("utf-8"))
    assert streamed == whole == f"Catalog source {rows[100]['id']} has an invalid {field}"


def test_a_repeated_member_is_read_as_the_json_module_reads_it(packaged_rows, small_chunks):
    """The last of two ``sources`` wins, as in ``json.loads``: the stream leaves such a document to
    the whole-document reading."""
    rows = packaged_rows[:3]
    text = document(rows).decode("utf-8")
    doubled = text.replace('"sources": [', '"sources": [{"id": ""}], "sources": [', 1)
    assert doubled != text
    streamed, whole = readings(doubled.encode("utf-8"))
    assert isinstance(streamed, ValidatedCatalog) and streamed == whole
    assert streamed.source_ids == {row["id"] for row in rows}


def test_validation_holds_the_rows_compactly_not_the_document(tmp_path, packaged_rows, monkeypatch):
    """Held as bytes, text and parsed rows at once, 100,000 rows took 4.8 times their file's size
    to validate; streamed, the rows are kept as canonical bytes (smaller than the file)."""
    monkeypatch.setattr(json_stream, "CHUNK_BYTES", 64 * 1024)
    rows = [
        {**row, "id": f"{row['id']}-{copy_number}"}
        for copy_number in range(20)
        for row in packaged_rows
    ]
    path = tmp_path / "large.json"
    path.write_text(artifact_text(rows), encoding="utf-8")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        validated = load_catalog(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(len(snapshot.ids) for snapshot in validated.snapshots) == len(rows)
    assert peak < 2 * size, (peak, size)


def test_a_file_growing_past_the_size_cap_while_it_is_read_is_refused(tmp_path, settings):
    settings.ATLAS_MAX_CATALOG_BYTES = 2000
    path = tmp_path / "catalog.json"
    path.write_bytes(document([]))
    with artifact._opened(path) as opened:
        path.write_bytes(document([make_row("MarinSkyRL:a")] * 5))  # the same file, now larger
        with pytest.raises(CatalogInvalid) as caught:
            artifact._validated(opened)
    assert str(caught.value) == f"Catalog artifact exceeds 2000 bytes: {path}"
