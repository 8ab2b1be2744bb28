import os
import subprocess
import sys
from pathlib import Path

import pytest

from atlas.models import RefreshRun
from atlas.services.sync import sync_catalog
from tests.conftest import make_row

ROOT = Path(__file__).resolve().parents[2]


def beat_schedule(expression: str) -> subprocess.CompletedProcess:
    code = (
        "from django.conf import settings; "
        "s = settings.CELERY_BEAT_SCHEDULE['atlas-scheduled-sync'];"
        "c = s['schedule']; print(sorted(c.minute), sorted(c.hour), sorted(c.day_of_week),"
        " sorted(c.day_of_month), s['kwargs'])"
    )
    env = {**os.environ, "ATLAS_SYNC_SCHEDULE": expression}
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.slow
def test_schedule_fields_keep_their_cron_positions():
    weekly = beat_schedule("0 3 * * 1")
    assert weekly.returncode == 0, weekly.stderr
    assert weekly.stdout.split("[1, 2, 3")[0] == "[0] [3] [1] "
    assert "{'force': False, 'trigger': 'schedule'}" in weekly.stdout
    monthly = beat_schedule("30 4 15 * *")
    assert monthly.returncode == 0, monthly.stderr
    assert monthly.stdout.startswith("[30] [4] [0, 1, 2, 3, 4, 5, 6] [15]")


@pytest.mark.slow
def test_malformed_schedule_is_a_configuration_error():
    broken = beat_schedule("every day")
    assert broken.returncode != 0
    assert "ATLAS_SYNC_SCHEDULE must be a five-field cron expression" in broken.stderr


@pytest.mark.django_db
def test_an_origin_is_retired_once_and_later_syncs_are_unchanged(write_catalog):
    tasktrove = make_row("Task Trove:t", tags=["agentic", "multi-turn"])
    sync_catalog(
        catalog_path=write_catalog([make_row("MarinSkyRL:a"), tasktrove]),
        force=False, trigger="command",
    )  # fmt: skip
    path = write_catalog([make_row("MarinSkyRL:a")])
    first = sync_catalog(catalog_path=path, force=False, trigger="command")
    assert first["retired_origins"] == ["Task Trove"]
    again = sync_catalog(catalog_path=path, force=False, trigger="command")
    assert again["retired_origins"] == []
    assert RefreshRun.objects.get(id=again["run"]).outcome == "unchanged"


@pytest.mark.django_db
@pytest.mark.parametrize("parameter", ["page", "page_size"])
def test_non_ascii_digits_in_paging_are_ignored_on_the_page_and_refused_by_the_api(
    client, parameter
):
    assert client.get("/", {parameter: "²"}).status_code == 200
    answer = client.get("/api/sources/", {parameter: "²"})
    assert answer.status_code == 400 and parameter in answer.json()
