import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from atlas.models import Refresh, RefreshRun, Source
from atlas.services.sync import SyncRejected, sync_catalog
from tests.conftest import make_row

pytestmark = pytest.mark.django_db


def sync(path, force=False):
    return sync_catalog(catalog_path=path, force=force, trigger="command")


def test_first_sync_writes_every_source_and_one_refresh_per_origin(write_catalog):
    rows = [
        make_row("MarinSkyRL:a"),
        make_row("MarinSkyRL:b"),
        make_row("Task Trove:c", tags=["agentic", "multi-turn"]),
    ]
    result = sync(write_catalog(rows))
    assert result["busy"] is False
    assert [r["origin"] for r in result["results"]] == ["MarinSkyRL", "Task Trove"]
    assert all(r["changed"] for r in result["results"])
    assert Source.objects.filter(active=True).count() == 3
    assert dict(Refresh.objects.values_list("origin", "row_count")) == {
        "MarinSkyRL": 2,
        "Task Trove": 1,
    }
    run = RefreshRun.objects.get(id=result["run"])
    assert run.outcome == "synced" and run.rows_written == 3


def test_unchanged_artifact_only_touches_checked_at(write_catalog):
    path = write_catalog([make_row("MarinSkyRL:a")])
    sync(path)
    before = Refresh.objects.get(origin="MarinSkyRL")
    result = sync(path)
    after = Refresh.objects.get(origin="MarinSkyRL")
    assert result["results"][0]["changed"] is False
    assert after.synced_at == before.synced_at and after.checked_at > before.checked_at
    run = RefreshRun.objects.get(id=result["run"])
    assert run.outcome == "unchanged" and run.rows_written == 0


def test_forced_sync_rewrites_even_when_unchanged(write_catalog):
    path = write_catalog([make_row("MarinSkyRL:a")])
    sync(path)
    result = sync(path, force=True)
    assert result["results"][0]["changed"] is True
    assert RefreshRun.objects.get(id=result["run"]).forced is True


def test_removed_source_is_retired_with_curated_columns_and_revived(write_catalog):
    sync(write_catalog([make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b")]))
    Source.objects.filter(id="MarinSkyRL:b").update(quality="good", traces=3, review_id="r" * 64)
    sync(write_catalog([make_row("MarinSkyRL:a")]))
    retired = Source.objects.get(id="MarinSkyRL:b")
    assert retired.active is False
    assert (retired.quality, retired.traces, retired.review_id) == ("good", 3, "r" * 64)
    sync(write_catalog([make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b")]))
    revived = Source.objects.get(id="MarinSkyRL:b")
    assert revived.active is True and revived.quality == "good" and revived.traces == 3


def test_payload_update_keeps_curated_columns(write_catalog):
    sync(write_catalog([make_row("MarinSkyRL:a", task_count=10)]))
    Source.objects.filter(id="MarinSkyRL:a").update(quality="some_issues", difficulty="x")
    sync(write_catalog([make_row("MarinSkyRL:a", task_count=20)]))
    source = Source.objects.get(id="MarinSkyRL:a")
    assert source.payload["task_count"] == 20 and source.task_count == 20
    assert (source.quality, source.difficulty) == ("some_issues", "x")


def test_vanished_origin_is_retired(write_catalog):
    sync(
        write_catalog(
            [make_row("MarinSkyRL:a"), make_row("Task Trove:t", tags=["agentic", "multi-turn"])]
        )
    )
    result = sync(write_catalog([make_row("MarinSkyRL:a")]))
    assert result["retired_origins"] == ["Task Trove"]
    assert not Refresh.objects.filter(origin="Task Trove").exists()
    assert Source.objects.get(id="Task Trove:t").active is False


def test_source_moving_origin_ends_active_under_new_origin(write_catalog):
    sync(
        write_catalog(
            [make_row("MarinSkyRL:a"), make_row("Task Trove:t", tags=["agentic", "multi-turn"])]
        )
    )
    moved = make_row("Task Trove:t", tags=["agentic", "multi-turn"])
    moved["origin"] = "Alpha"
    sync(write_catalog([make_row("MarinSkyRL:a"), moved]))
    source = Source.objects.get(id="Task Trove:t")
    assert (source.origin, source.active) == ("Alpha", True)


def test_invalid_artifact_records_failed_run_and_changes_nothing(write_catalog):
    path = write_catalog([make_row("MarinSkyRL:a")])
    sync(path)
    snapshot = list(Source.objects.values())
    bad = write_catalog([make_row("MarinSkyRL:a", task_count=5)], revision="0" * 64)
    with pytest.raises(SyncRejected, match="Catalog revision does not match its sources"):
        sync(bad)
    assert list(Source.objects.values()) == snapshot
    failed = RefreshRun.objects.order_by("-id").first()
    assert (
        failed.outcome == "failed" and failed.error == "Catalog revision does not match its sources"
    )


def test_exception_midway_rolls_back_everything(write_catalog, monkeypatch):
    sync(
        write_catalog(
            [
                make_row("MarinSkyRL:a", task_count=1),
                make_row("Task Trove:t", tags=["agentic", "multi-turn"]),
            ]
        )
    )
    snapshot = list(Source.objects.order_by("id").values())
    refreshes = list(Refresh.objects.values())
    import atlas.services.sync as sync_module

    real = sync_module._rewrite_origin

    def explode_on_second(snapshot_arg, *args):
        if snapshot_arg.origin == "Task Trove":
            raise RuntimeError("disk on fire")
        return real(snapshot_arg, *args)

    monkeypatch.setattr(sync_module, "_rewrite_origin", explode_on_second)
    with pytest.raises(RuntimeError):
        sync(
            write_catalog(
                [
                    make_row("MarinSkyRL:a", task_count=2),
                    make_row("Task Trove:t", tags=["agentic", "multi-turn"], task_count=9),
                ]
            )
        )
    assert list(Source.objects.order_by("id").values()) == snapshot
    assert list(Refresh.objects.values()) == refreshes
    assert RefreshRun.objects.order_by("-id").first().error == "Sync failed: RuntimeError"


def test_busy_lock_answers_at_once_and_writes_nothing(write_catalog):
    from django.db import connection, transaction

    from atlas.db.locks import catalog_refresh_lock

    path = write_catalog([make_row("MarinSkyRL:a")])
    runs_before = RefreshRun.objects.count()
    # Hold the lock from a separate holder (a second file descriptor on SQLite).
    with transaction.atomic(), catalog_refresh_lock() as held:
        assert held
        if connection.vendor == "postgresql":
            pytest.skip(
                "PostgreSQL contention is tested with two connections in test_sync_postgres"
            )
        result = sync(path)
    assert result == {
        "busy": True,
        "message": "Another visitor is refreshing the catalog. Your saved data remains available.",
    }
    assert Source.objects.count() == 0
    assert RefreshRun.objects.count() == runs_before


@pytest.mark.django_db(transaction=True)
def test_the_lock_refuses_to_be_taken_outside_a_transaction():
    from django.db import transaction

    from atlas.db.locks import OUTSIDE_TRANSACTION, catalog_refresh_lock

    with pytest.raises(RuntimeError, match=OUTSIDE_TRANSACTION), catalog_refresh_lock():
        pytest.fail("entered without a transaction")
    # The refusal took nothing: the lock is free for the next transaction.
    with transaction.atomic(), catalog_refresh_lock() as held:
        assert held


def test_sync_command_prints_json_and_fails_with_the_message(write_catalog, capsys, tmp_path):
    call_command("sync_catalog", "--catalog", str(write_catalog([make_row("MarinSkyRL:a")])))
    printed = json.loads(capsys.readouterr().out)
    assert printed["busy"] is False and printed["results"][0]["origin"] == "MarinSkyRL"
    with pytest.raises(CommandError, match=r"Catalog artifact not found: .*missing\.json"):
        call_command("sync_catalog", "--catalog", str(tmp_path / "missing.json"))


def test_packaged_catalog_syncs_every_real_source(packaged_catalog):
    result = sync(packaged_catalog)
    assert Source.objects.filter(active=True).count() == 206
    assert {r["origin"] for r in result["results"]} == {"MarinSkyRL", "Task Trove"}
    assert Source.objects.filter(status="Excluded").count() == 50
    assert Source.objects.filter(kind="Generator").count() == 1


def test_sync_command_reports_progress_per_origin_on_stderr(write_catalog, capsys):
    path = write_catalog([make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b")])
    call_command("sync_catalog", "--catalog", str(path))
    first = capsys.readouterr()
    assert "MarinSkyRL: 2 rows, 2 written, 0 retired" in first.err
    assert json.loads(first.out)["busy"] is False  # stdout stays pure JSON
    call_command("sync_catalog", "--catalog", str(path))
    assert "MarinSkyRL: unchanged" in capsys.readouterr().err
    call_command("sync_catalog", "--catalog", str(path), "--verbosity", "0")
    assert capsys.readouterr().err == ""


def test_retiring_is_one_write_and_spares_a_source_moving_to_a_later_origin(write_catalog):
    """Missing rows are retired at the end of the sync, by their flag alone; a row missing from its
    old origin but listed under an origin processed later stays active."""
    sync(write_catalog([make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b")]))
    moved = make_row("MarinSkyRL:a", origin="Zoo")
    result = sync(write_catalog([moved]))
    sources = {s.id: (s.origin, s.active) for s in Source.objects.all()}
    assert sources == {"MarinSkyRL:a": ("Zoo", True), "MarinSkyRL:b": ("MarinSkyRL", False)}
    assert RefreshRun.objects.get(id=result["run"]).rows_written == 2


def test_a_retired_source_keeps_its_display_state_until_a_forced_sync_reapplies_it(
    write_catalog,
):
    """Retiring writes the flag alone: the display state does not depend on activity. A forced
    sync re-applies the display rules to inactive sources and writes only those that differ."""
    rows = [make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b"), make_row("MarinSkyRL:c")]
    sync(write_catalog(rows))
    shown = Source.objects.values("display_name", "search_text", "export_tags")
    before = {s["display_name"]: s for s in shown}
    result = sync(write_catalog(rows[:1]))
    assert RefreshRun.objects.get(id=result["run"]).rows_written == 2  # the two flags
    assert {s["display_name"]: s for s in shown} == before
    assert set(Source.objects.filter(active=False).values_list("id", flat=True)) == {
        "MarinSkyRL:b",
        "MarinSkyRL:c",
    }
    # A stored state that no longer follows the rules (as after a change of them) is rewritten.
    Source.objects.filter(id="MarinSkyRL:c").update(display_name="stale", search_text="stale")
    result = sync(write_catalog(rows[:1]), force=True)
    assert RefreshRun.objects.get(id=result["run"]).rows_written == 1
    assert Source.objects.get(id="MarinSkyRL:c").display_name == rows[2]["display_name"]
