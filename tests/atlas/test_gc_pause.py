"""The collector pause around bulk work: nested and failing blocks restore what was there."""

from __future__ import annotations

import gc

import pytest

from atlas.gc_pause import collector_paused
from atlas.services.sync import SyncRejected, sync_catalog
from tests.conftest import make_row


def test_nested_blocks_resume_the_collector_only_at_the_end():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block is still running
    assert gc.isenabled()


def test_a_failing_block_resumes_the_collector():
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_paused_before_stays_paused():
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.django_db
def test_syncs_leave_the_collector_running(write_catalog):
    sync_catalog(catalog_path=write_catalog([make_row("MarinSkyRL:a")]), force=False,
                 trigger="command")  # fmt: skip
    assert gc.isenabled()
    with pytest.raises(SyncRejected):
        sync_catalog(catalog_path=write_catalog([{"id": ""}]), force=False, trigger="command")
    assert gc.isenabled()
