"""``make test-real-server``'s script (``scripts/real_server_check.py``) stops on one Ctrl-C:
make_review stopped cleanly and not resumed, the server stopped (killed when it ignores SIGTERM),
the report of what was done so far written — driven with a real SIGINT against the tests' model
server run as a process of its own (``--server-command``) on a chosen port."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waiting import DEADLINE_SECONDS, wait_until

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_lines(root: Path) -> list[str]:
    logs = list(root.glob("*/server.log"))
    return logs[0].read_text(errors="replace").splitlines() if logs else []


def test_one_ctrl_c_stops_the_check_and_its_server_and_writes_the_report(tmp_path):
    port = free_port()
    stand_in = f"{sys.executable} -m tests.production.model_server_process --port {{port}} "
    command = [
        sys.executable, "scripts/real_server_check.py", "--server-command",
        stand_in + "--ignore-term", "--port", str(port), "--output", str(tmp_path / "checks"),
        "--model-name", "test/solver-judge", "--server-grace", "1", "--resumes", "2",
    ]  # fmt: skip
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"}
    with open(tmp_path / "script.log", "wb") as script_log:
        script = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=script_log, stderr=subprocess.STDOUT
        )
        try:
            # make_review's first call (the solver's) is held at the server: a call in flight.
            wait_until(
                lambda: any(line.startswith("held ") for line in server_lines(tmp_path / "checks")),
                what="a request held at the server",
            )
            os.kill(script.pid, signal.SIGINT)
            status = script.wait(DEADLINE_SECONDS)
        finally:
            if script.poll() is None:
                script.kill()
                script.wait()
    said = (tmp_path / "script.log").read_text(errors="replace")
    assert status == 130, said
    server_pid = next(
        int(line.split()[1])
        for line in server_lines(tmp_path / "checks")
        if line.startswith("pid ")
    )
    assert not Path(f"/proc/{server_pid}").exists()  # the server is gone, not left running
    report = json.loads(next((tmp_path / "checks").glob("*/real-server-report.json")).read_text())
    assert report["interrupted"] is True and report["finished"] is False
    # One make_review, stopped cleanly by the one SIGINT passed on; no resume was started.
    assert len(report["invocations"]) == 1, report["invocations"]
    assert report["invocations"][0]["status"] != 0
    assert "Interrupted; saved files remain in place" in report["invocations"][0]["line"]
    # The stand-in ignores SIGTERM, as a server finishing a generation does.
    assert report["server_process"]["ended"] == "killed (SIGKILL) after 1 s"
    assert report["server_process"]["port"] == port
    assert report["server_process"]["base_url"] == f"http://127.0.0.1:{port}/v1"
    assert report["calls"] >= 1  # the held solver call is in the report so far
    assert "interrupted after 1 make_review run(s); the report so far" in said
