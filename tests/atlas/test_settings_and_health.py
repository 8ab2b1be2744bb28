"""Production settings (DEBUG=0) and the /healthz endpoint."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

import pytest

from atlas.models import RefreshRun
from atlas.services.sync import SyncRejected, sync_catalog
from tests.conftest import ROOT, make_row


def manage(*args: str, **env_overrides: str) -> subprocess.CompletedProcess:
    env = {
        key: value
        for key, value in os.environ.items()
        if key
        not in {
            "SECRET_KEY",
            "DJANGO_SETTINGS_MODULE",
            "DEBUG",
            "DATABASE_URL",
            "ALLOWED_HOSTS",
            "SECURE_SSL_REDIRECT",
            # set for the in-process browser tests only; a deployment never has it
            "DJANGO_ALLOW_ASYNC_UNSAFE",
        }
    }
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_check_deploy_passes_without_warnings_in_production_shape():
    key = secrets.token_urlsafe(48)  # 64 characters, many distinct
    assert len(key) >= 50
    done = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="0",
        SECRET_KEY=key,
        ALLOWED_HOSTS="atlas.example.org",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout
    assert "WARNINGS" not in done.stdout + done.stderr


@pytest.mark.slow
def test_check_deploy_flags_the_development_shape():
    # The same command must be able to fail: with DEBUG on, the deploy checks warn.
    done = manage("check", "--deploy", "--fail-level", "WARNING", DEBUG="1")
    assert done.returncode != 0
    assert "security.W018" in done.stdout + done.stderr  # DEBUG=True in deployment


@pytest.mark.slow
def test_secret_key_is_required_when_debug_is_off():
    done = manage("check", DEBUG="0")
    assert done.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in done.stderr


@pytest.mark.slow
def test_invalid_debug_value_is_rejected():
    done = manage("check", DEBUG="maybe", SECRET_KEY="x" * 60)
    assert done.returncode != 0
    assert "DEBUG must be a boolean" in done.stderr


@pytest.mark.slow
def test_the_embedded_database_keeps_a_write_ahead_log(tmp_path):
    # A commit appends to the log without waiting for the disk: a fresh `make run` migrates in
    # about seventy commits.
    done = manage(
        "shell",
        "-c",
        "from django.db import connection\n"
        "with connection.cursor() as cursor:\n"
        "    modes = [cursor.execute(f'PRAGMA {name}').fetchone()[0]"
        " for name in ('journal_mode', 'synchronous')]\n"
        "print(*modes)",
        DATABASE_URL=f"sqlite:///{tmp_path / 'atlas.sqlite3'}",
        DEBUG="1",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].split() == ["wal", "1"]  # synchronous NORMAL is 1


@pytest.mark.django_db
def test_healthz_before_any_sync(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"status": "ok", "origins": [], "last_run": None}


@pytest.mark.django_db
def test_healthz_reports_the_last_refresh_state(client, write_catalog):
    rows = [
        make_row("MarinSkyRL:a"),
        make_row("MarinSkyRL:b"),
        make_row("Task Trove:t", tags=["agentic", "multi-turn"]),
    ]
    result = sync_catalog(catalog_path=write_catalog(rows), force=False, trigger="command")
    body = client.get("/healthz").json()
    assert body["status"] == "ok"
    assert [(o["origin"], o["revision"], o["row_count"]) for o in body["origins"]] == [
        ("MarinSkyRL", result["revision"], 2),
        ("Task Trove", result["revision"], 1),
    ]
    assert all(o["checked_at"] and o["synced_at"] for o in body["origins"])
    run = RefreshRun.objects.get(id=result["run"])
    assert body["last_run"] == {
        "started_at": run.started_at.isoformat(),
        "trigger": "command",
        "forced": False,
        "outcome": "synced",
        "error": None,
    }

    # A later failed sync is the last run; the saved refreshes stay as they were.
    with pytest.raises(SyncRejected):
        sync_catalog(
            catalog_path=write_catalog(rows, revision="0" * 64), force=True, trigger="task"
        )
    body = client.get("/healthz").json()
    assert body["last_run"]["outcome"] == "failed"
    assert body["last_run"]["trigger"] == "task" and body["last_run"]["forced"] is True
    assert body["last_run"]["error"] == "Catalog revision does not match its sources"
    assert [o["row_count"] for o in body["origins"]] == [2, 1]
