"""Validation digests (``Source.payload_digest``): what the sync skips because of them, and why a
stored digest can be trusted (raw payload writes clear it)."""

from __future__ import annotations

import json

import pytest

from atlas import validated_rows
from atlas.canonical_form import canonical_rows, catalog_revision
from atlas.catalog_artifact import CatalogInvalid, validate_bytes
from atlas.models import RefreshRun, Source, SourceChange
from atlas.services.sync import sync_catalog
from tests.conftest import make_row

pytestmark = pytest.mark.django_db


def sync(path, *, force=False):
    return sync_catalog(catalog_path=path, force=force, trigger="command")


def digest_of(row):
    return validated_rows.row_digests(canonical_rows([row]))[0]


def test_a_sync_stores_each_rows_digest(write_catalog):
    rows = [make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b", display_name="B")]
    sync(write_catalog(rows))
    stored = dict(Source.objects.values_list("id", "payload_digest"))
    assert stored == {row["id"]: digest_of(row) for row in rows}
    assert len(set(stored.values())) == 2


def test_a_raw_payload_write_clears_the_digest_and_the_next_sync_restores_the_row(write_catalog):
    a, b = make_row("MarinSkyRL:a", task_count=5), make_row("MarinSkyRL:b", task_count=6)
    sync(write_catalog([a, b]))
    digest = Source.objects.get(id="MarinSkyRL:a").payload_digest

    Source.objects.filter(id="MarinSkyRL:a").update(task_count=99)  # not the payload
    assert Source.objects.get(id="MarinSkyRL:a").payload_digest == digest
    Source.objects.filter(id="MarinSkyRL:a").update(payload={**a, "task_count": 1})
    assert Source.objects.get(id="MarinSkyRL:a").payload_digest is None

    # Row a is unchanged in the next artifact; only b changed. Without the cleared digest the
    # sync would take a's stored payload for the artifact's and leave it as tampered.
    result = sync(write_catalog([a, {**b, "task_count": 7}]))
    source = Source.objects.get(id="MarinSkyRL:a")
    assert source.payload == a and source.task_count == 5
    assert source.payload_digest == digest
    history = dict(
        SourceChange.objects.filter(run_id=result["run"]).values_list("source_id", "fields")
    )
    assert history["MarinSkyRL:a"] == {"task_count": [1, 5]}


def test_a_write_that_sets_payload_and_digest_keeps_the_digest(write_catalog):
    a = make_row("MarinSkyRL:a")
    sync(write_catalog([a]))
    Source.objects.filter(id="MarinSkyRL:a").update(
        payload={**a, "notes": "n"}, payload_digest="f" * 64
    )
    assert Source.objects.get(id="MarinSkyRL:a").payload_digest == "f" * 64


def test_rows_with_a_stored_digest_are_skipped_unless_the_sync_is_forced(write_catalog):
    """An unchanged row is neither compared nor rewritten: its display state is kept current by
    every other writer. A forced sync recomputes it (here: repairs a tampered display column)."""
    a, b = make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b", task_count=3)
    sync(write_catalog([a, b]))
    Source.objects.filter(id="MarinSkyRL:a").update(search_text="tampered")

    changed = write_catalog([a, {**b, "task_count": 4}])
    result = sync(changed)
    assert RefreshRun.objects.get(id=result["run"]).rows_written == 1
    assert Source.objects.get(id="MarinSkyRL:a").search_text == "tampered"

    forced = sync(changed, force=True)
    assert RefreshRun.objects.get(id=forced["run"]).rows_written == 1
    assert Source.objects.get(id="MarinSkyRL:a").search_text != "tampered"
    assert not SourceChange.objects.filter(run_id=forced["run"]).exists()


def document(rows):
    return json.dumps(
        {"schema_version": 1, "revision": catalog_revision(rows), "sources": rows}
    ).encode("utf-8")


def test_a_proven_digest_stands_for_validation_and_only_under_the_same_rules(monkeypatch):
    """The digest proves a row passed these rules: validation trusts it, and a change to the rule
    files gives every row another digest (so the rows are validated again)."""
    row = make_row("MarinSkyRL:a", task_count=-1)  # invalid
    with pytest.raises(CatalogInvalid, match="invalid task_count"):
        validate_bytes(document([row]))
    proven = digest_of(row)
    assert validate_bytes(document([row]), proven=lambda: {proven}).snapshots[0].digests == (
        proven,
    )

    monkeypatch.setattr(validated_rows, "rules_fingerprint", lambda: b"other rules")
    assert digest_of(row) != proven
    with pytest.raises(CatalogInvalid, match="invalid task_count"):
        validate_bytes(document([row]), proven=lambda: {proven})


def test_the_fingerprint_covers_the_rule_files():
    from pathlib import Path

    here = Path(validated_rows.__file__).parent
    assert all((here / name).is_file() for name in validated_rows.RULE_FILES)
    assert {"catalog_artifact.py", "schema/catalog.schema.json"} <= set(validated_rows.RULE_FILES)


def test_the_canonical_bytes_written_as_the_payload_read_back_as_the_row(write_catalog):
    """The sync hands the database each row's canonical bytes (ASCII, every other character
    escaped, a character beyond the Basic Multilingual Plane as a surrogate pair): what is stored
    is the row itself, whatever the path (new, changed, forced)."""
    row = make_row(
        "MarinSkyRL:a",
        display_name='naïve · 数学 😀 \x7f \\ "quoted"',
        grading_scope={"task_assets": {"blend": {"x": 1e-05, "y": 2.5}}},
    )
    sync(write_catalog([row]))
    assert Source.objects.get(id="MarinSkyRL:a").payload == row
    changed = {**row, "notes": "tab\there 😀"}
    for force in (False, True):
        sync(write_catalog([changed]), force=force)
        source = Source.objects.get(id="MarinSkyRL:a")
        assert source.payload == changed and source.display_name == changed["display_name"]
