"""What a sync of a changed artifact skips: a stored row whose payload is the incoming row's is
left alone (unless the sync is forced); any other stored payload — a raw write included — is
compared and rewritten. No digest stands for the payload: the payload itself is compared."""

from __future__ import annotations

import pytest

from atlas.models import RefreshRun, Source, SourceChange
from atlas.services.sync import sync_catalog
from tests.conftest import make_row

pytestmark = pytest.mark.django_db


def sync(path, *, force=False):
    return sync_catalog(catalog_path=path, force=force, trigger="command")


def test_a_raw_payload_write_is_undone_by_the_next_sync(write_catalog):
    a, b = make_row("MarinSkyRL:a", task_count=5), make_row("MarinSkyRL:b", task_count=6)
    sync(write_catalog([a, b]))
    Source.objects.filter(id="MarinSkyRL:a").update(payload={**a, "task_count": 1})

    # Row a is unchanged in the next artifact; only b changed. The sync compares a's stored
    # payload, finds it is not the artifact's and restores it.
    result = sync(write_catalog([a, {**b, "task_count": 7}]))
    source = Source.objects.get(id="MarinSkyRL:a")
    assert source.payload == a and source.task_count == 5
    history = dict(
        SourceChange.objects.filter(run_id=result["run"]).values_list("source_id", "fields")
    )
    assert history["MarinSkyRL:a"] == {"task_count": [1, 5]}
    assert RefreshRun.objects.get(id=result["run"]).rows_written == 2


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize(("stored", "incoming"), [(1, True), (1, 1.0), (0, False)])
def test_payloads_equal_only_with_their_types(write_catalog, stored, incoming, force):
    """``1 == True == 1.0`` in Python; a stored payload is the row only with the same JSON types,
    in an unforced sync and in a forced one alike."""
    row = make_row("MarinSkyRL:a", extra={"x": stored})
    sync(write_catalog([row]))
    changed = {**row, "extra": {"x": incoming}}
    result = sync(write_catalog([changed]), force=force)
    assert RefreshRun.objects.get(id=result["run"]).rows_written == 1
    kept = Source.objects.get(id="MarinSkyRL:a").payload["extra"]["x"]
    assert (kept, type(kept)) == (incoming, type(incoming))


def test_rows_with_the_stored_payload_are_skipped_unless_the_sync_is_forced(write_catalog):
    """An unchanged row is not rewritten: its display state is kept current by every other
    writer. A forced sync recomputes it (here: repairs a tampered display column)."""
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


def test_every_row_is_validated_again_whatever_is_stored(write_catalog):
    """A row stored before is no proof: a changed artifact's every row meets the rules in force."""
    from atlas.services.sync import SyncRejected

    a, b = make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b")
    sync(write_catalog([a, b]))
    Source.objects.filter(id="MarinSkyRL:a").update(payload={**a, "task_count": -1})
    with pytest.raises(SyncRejected, match="invalid task_count"):
        sync(write_catalog([{**a, "task_count": -1}, {**b, "notes": "n"}]))


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


def test_a_forced_sync_records_a_changed_row_against_its_stored_payload(write_catalog):
    """A forced sync compares every stored payload first; a row that differs is written with its
    history (old and new values), the others only when their display state changed."""
    a, b = make_row("MarinSkyRL:a", task_count=5), make_row("MarinSkyRL:b", task_count=6)
    sync(write_catalog([a, b]))
    result = sync(write_catalog([{**a, "task_count": 7}, b]), force=True)
    assert RefreshRun.objects.get(id=result["run"]).rows_written == 1
    history = dict(
        SourceChange.objects.filter(run_id=result["run"]).values_list("source_id", "fields")
    )
    assert history == {"MarinSkyRL:a": {"task_count": [5, 7]}}
    assert Source.objects.get(id="MarinSkyRL:a").task_count == 7


@pytest.mark.parametrize("force", [False, True])
def test_a_row_stored_inactive_or_under_another_origin_is_rewritten(write_catalog, force):
    """Equal payloads are not enough: the stored row must be active under the incoming origin
    (forced or not)."""
    a, b = make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b", task_count=1)
    sync(write_catalog([a, b]))
    Source.objects.filter(id="MarinSkyRL:a").update(active=False)
    result = sync(write_catalog([a, {**b, "task_count": 2}]), force=force)
    assert RefreshRun.objects.get(id=result["run"]).rows_written == 2
    assert Source.objects.get(id="MarinSkyRL:a").active
    recorded = dict(
        SourceChange.objects.filter(run_id=result["run"]).values_list("source_id", "kind")
    )
    assert recorded == {"MarinSkyRL:a": "returned", "MarinSkyRL:b": "changed"}
    Source.objects.filter(id="MarinSkyRL:a").update(origin="Task Trove")
    result = sync(write_catalog([a, b]), force=force)
    assert RefreshRun.objects.get(id=result["run"]).rows_written == 2
    assert Source.objects.get(id="MarinSkyRL:a").origin == "MarinSkyRL"


def test_stored_rows_are_checked_in_batches_of_the_stored_batch_size(write_catalog, monkeypatch):
    """A forced sync asks the display context providers about the stored rows a batch at a time,
    ``STORED_BATCH_SIZE`` rows per batch (the providers cost a few queries per batch)."""
    from atlas import contributions
    from atlas.services import sync as sync_module

    rows = [make_row(f"MarinSkyRL:{i:05d}", task_count=i) for i in range(7)]
    sync(write_catalog(rows))
    asked: list[int] = []

    def count(*, sources, contexts):
        asked.append(len(sources))
        return {}

    monkeypatch.setattr(contributions, "_context_providers", list(contributions._context_providers))
    contributions.register_display_context(name="test.count", provider=count)
    monkeypatch.setattr(sync_module, "STORED_BATCH_SIZE", 3)
    sync(write_catalog(rows), force=True)
    assert asked == [3, 3, 1]
