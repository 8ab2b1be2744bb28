"""The collector pause around bulk work: nested and failing blocks restore what was there."""

from __future__ import annotations

import gc
import os

import pytest

from atlas.db.gc_pause import collector_paused
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


@pytest.mark.slow
def test_the_wsgi_application_freezes_what_it_loaded():
    """Requests never pay for walking the loaded project: config.wsgi freezes it (gc.freeze),
    and collects its first generation less often than every 700 allocations (a list's rows
    alone make thousands), the other generations as they were."""
    import subprocess
    import sys

    probe = (
        "import gc; default = gc.get_threshold(); import config.wsgi; "
        "print(gc.get_freeze_count(), gc.isenabled(), *default, *gc.get_threshold())"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"}
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    frozen, enabled, *thresholds = shown.stdout.split()
    assert int(frozen) > 10_000 and enabled == "True"
    default, served = [int(n) for n in thresholds[:3]], [int(n) for n in thresholds[3:]]
    assert served[0] >= 10_000 > default[0]
    assert served[1:] == default[1:]
