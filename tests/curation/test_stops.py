"""The curators' commands stop the same way: a Ctrl-C or a full disk ends them with one line
(never a traceback) and leaves nothing — no output folder, no staging folder beside it — so the
same command runs again into the same output. Each runs as a curator runs it: ``manage.py`` in
its own process, the real gsm8k verifier behind it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from atlas.services.sync import sync_catalog
from tests.curation.conftest import ISSUE_URL, task_folder_of
from tests.curation.test_refusals import assert_nothing_left, publish
from tests.production.conftest import SOURCE_ID
from tests.production.helpers import load, make_review

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 180.0  # generous: the machine may be busy


def manage(*args: str) -> list[str]:
    return [sys.executable, str(ROOT / "manage.py"), *args]


def wait_for(condition, *, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def command_lines(stderr: str, command: str = "reproduce_defect") -> list[str]:
    """What the command said besides its progress lines (``<command>: …``)."""
    return [line for line in stderr.splitlines() if line and not line.startswith(f"{command}: ")]


def reproduce_args(run: Path, output: Path, *extra: str) -> list[str]:
    return [
        "reproduce_defect", "--run-dir", str(run), "--attempt", task_folder_of(run, 2006),
        "--kind", "verifier", "--issue-url", ISSUE_URL, "--expect", "accepted",
        "--output", str(output), *extra,
    ]  # fmt: skip


def slow_interpreter_config(run: Path, root: Path) -> tuple[Path, Path]:
    """The run's own config whose Gym interpreter first says it started (a marker file), then
    waits, then runs: the case is surely running when the test interrupts it."""
    marker = root / "started"
    wrapper = root / "slow-python"
    wrapper.write_text(
        f'#!/bin/sh\ntouch "{marker}"\nsleep 60\nexec "{sys.executable}" "$@"\n', encoding="utf-8"
    )
    wrapper.chmod(0o755)
    config = load(run / "run.json")["config"]
    config["runtime"]["gym_python"] = str(wrapper)
    path = root / "slow-config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path, marker


def interrupted(
    command: list[str], *, marker: Path, what: str, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """``command`` started, Ctrl-C once ``marker`` exists (the event the stop must meet): its
    status, stdout and stderr."""
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for(marker.exists, what=what)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, stdout, stderr


def test_ctrl_c_stops_reproduce_defect_with_one_line_and_leaves_nothing(
    buggy_run, defect_checkout, tmp_path
):
    config, marker = slow_interpreter_config(buggy_run, tmp_path)
    output = tmp_path / "reproduction"
    status, _, stderr = interrupted(
        manage(*reproduce_args(buggy_run, output, "--config", str(config))),
        marker=marker,
        what="the case's interpreter to start",
    )
    assert "Traceback" not in stderr
    assert command_lines(stderr) == [
        f"CommandError: reproduce_defect: interrupted; nothing was kept in {output}"
    ]
    assert status == 130
    assert_nothing_left(output)
    # The same command, uninterrupted, runs into the same output.
    finished = subprocess.run(
        manage(*reproduce_args(buggy_run, output)), cwd=ROOT, capture_output=True, text=True
    )
    assert finished.returncode == 0, finished.stderr
    assert load(output / "reproduction.json")["reproduced"] is True


def test_ctrl_c_while_a_curator_command_loads_is_one_line_too(tmp_path):
    """Django and a command load for a second or two on a busy machine: a Ctrl-C then is one
    line and the shell's status, never a traceback of the import under way. (The tools that run
    without the project's settings — validate_fix and the like — load no settings to wait in;
    publish_review, which writes the catalog, does.)"""
    marker = tmp_path / "loading"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.curation.settings_that_wait",
        "ATLAS_TEST_LOADING_MARKER": str(marker),
    }
    output = tmp_path / "resolution"
    command = manage("publish_review", "--run-dir", str(output), "--atlas-id", SOURCE_ID)
    status, stdout, stderr = interrupted(
        command, marker=marker, what="Django to load the settings", env=env
    )
    assert (status, stderr, stdout) == (130, "Interrupted\n", "")
    assert not output.exists()


def on_small_disk(disk: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    """``command`` run in a private mount namespace with a 48 KiB tmpfs on ``disk``, followed by
    a listing of what the disk holds after it (its stdout); skipped where the machine does not
    allow such a mount."""
    unshare = shutil.which("unshare")
    mount = f"mount -t tmpfs -o size=48k tmpfs {shlex.quote(str(disk))}"
    if unshare is None or subprocess.run([unshare, "-m", "sh", "-c", mount]).returncode != 0:
        pytest.skip("this machine does not allow a private tmpfs mount (unshare -m)")
    script = (
        f"{mount} && {shlex.join(command)}; status=$?; ls -A {shlex.quote(str(disk))}; exit $status"
    )
    return subprocess.run(
        [unshare, "-m", "sh", "-c", script], cwd=ROOT, capture_output=True, text=True
    )


def assert_stopped_by_the_full_disk(
    finished: subprocess.CompletedProcess[str], *, command: str, output: Path
) -> None:
    """One line, no traceback, exit 1, and the disk empty again."""
    assert "Traceback" not in finished.stderr
    lines = command_lines(finished.stderr, command)
    assert len(lines) == 1, finished.stderr
    assert lines[0].startswith(f"CommandError: {command} stopped: No space left on device")
    assert lines[0].endswith(f"; nothing was kept in {output}")
    assert finished.returncode == 1
    assert finished.stdout.strip() == ""


def test_a_full_disk_stops_reproduce_defect_with_one_line_and_leaves_nothing(
    buggy_run, defect_checkout, tmp_path
):
    disk = tmp_path / "disk"
    disk.mkdir()
    output = disk / "reproduction"
    finished = on_small_disk(disk, manage(*reproduce_args(buggy_run, output)))
    assert_stopped_by_the_full_disk(finished, command="reproduce_defect", output=output)


@pytest.mark.django_db(transaction=True)
def test_a_full_disk_stops_fetch_review_with_one_line_and_leaves_nothing(
    buggy_run, packaged_catalog, live_server, tmp_path
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    review_id = publish(buggy_run)["review_id"]
    disk = tmp_path / "disk"
    disk.mkdir()
    output = disk / "copy"
    command = manage(
        "fetch_review", "--atlas", live_server.url, "--review-id", review_id,
        "--output", str(output),
    )  # fmt: skip
    assert_stopped_by_the_full_disk(
        on_small_disk(disk, command), command="fetch_review", output=output
    )
    # With room, the same command copies it.
    fetched = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert fetched.returncode == 0, fetched.stderr
    assert load(output / "atlas-review.json")["review_id"] == review_id


def validate_fix_inputs(
    *, buggy_run: Path, defect_checkout, separator_config: Path, client, root: Path
) -> tuple[Path, Path, Path]:
    """What validate_fix reads, made as a curator makes it: the reproduction (published and
    confirmed), a fresh review at the fixed checkout and the source's saved row."""
    publish(buggy_run)
    reproduction = root / "reproduction"
    subprocess.run(manage(*reproduce_args(buggy_run, reproduction)), cwd=ROOT, check=True,
                   capture_output=True)  # fmt: skip
    publish(reproduction)
    call_command(
        "confirm_verifier_issue", "--atlas-id", SOURCE_ID, "--issue-url", ISSUE_URL,
        "--review-run-dir", str(reproduction), stdout=StringIO(), stderr=StringIO(),
    )  # fmt: skip
    row = root / "row.json"
    row.write_text(json.dumps(client.get(f"/api/sources/{SOURCE_ID}/").json()), encoding="utf-8")
    defect_checkout.at(defect_checkout.fixed)
    fixed = root / "review-fixed"
    make_review(
        "--config", str(separator_config), "--n", "2", "--seed", "7", "--output", str(fixed)
    )  # fmt: skip
    return reproduction, fixed, row


@pytest.mark.django_db
def test_a_full_disk_stops_validate_fix_with_one_line_and_leaves_nothing(
    buggy_run, defect_checkout, separator_config, packaged_catalog, client, tmp_path
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    reproduction, fixed, row = validate_fix_inputs(
        buggy_run=buggy_run, defect_checkout=defect_checkout, separator_config=separator_config,
        client=client, root=tmp_path,
    )  # fmt: skip
    disk = tmp_path / "disk"
    disk.mkdir()
    output = disk / "resolution"
    command = manage(
        "validate_fix", "--confirming", str(reproduction), "--review", str(fixed),
        "--atlas-row", str(row), "--skip-control", "saved_wrong", "--output", str(output),
    )  # fmt: skip
    assert_stopped_by_the_full_disk(
        on_small_disk(disk, command), command="validate_fix", output=output
    )


@pytest.mark.django_db
def test_ctrl_c_stops_validate_fix_with_one_line_and_leaves_nothing(
    buggy_run, defect_checkout, separator_config, packaged_catalog, client, tmp_path
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    reproduction, fixed, row = validate_fix_inputs(
        buggy_run=buggy_run, defect_checkout=defect_checkout, separator_config=separator_config,
        client=client, root=tmp_path,
    )  # fmt: skip
    config, marker = slow_interpreter_config(fixed, tmp_path)
    output = tmp_path / "resolution"
    arguments = [
        "validate_fix", "--confirming", str(reproduction), "--review", str(fixed),
        "--atlas-row", str(row), "--skip-control", "saved_wrong", "--output", str(output),
    ]  # fmt: skip
    status, stdout, stderr = interrupted(
        manage(*arguments, "--config", str(config)),
        marker=marker,
        what="a case's interpreter to start",
    )
    assert "Traceback" not in stderr
    assert command_lines(stderr, "validate_fix") == [
        f"CommandError: validate_fix: interrupted; nothing was kept in {output}"
    ]
    assert (status, stdout) == (130, "")
    assert_nothing_left(output)
    # The same command, uninterrupted, runs into the same output.
    finished = subprocess.run(manage(*arguments), cwd=ROOT, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    assert load(output / "validation" / "validation.json")["fix_validated"] is True
