"""make_difficulty's attempts fork from a warm attempt host per route, record what
a fresh interpreter records, and leave no process behind when the run ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from difficulty.production.pipeline import DifficultyOptions
from difficulty.production.pipeline import make_difficulty as run_make_difficulty
from reviews.production.runtime.launcher import GYM_WORKER
from tests.difficulty.production.conftest import SOURCE_ID
from tests.production.test_attempt_hosts import wait_dead

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def attempt_processes(run_dir: Path) -> list[tuple[int, int, list[str]]]:
    """Each running process whose working directory is in the run (an attempt's is its
    ``execution-NNN``): its pid, its parent's pid and its parent's command line."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
            stat = Path(f"/proc/{entry}/stat").read_text()
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            command = Path(f"/proc/{parent}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
        if cwd.startswith(f"{run_dir}/"):
            found.append((int(entry), parent, [part.decode() for part in command if part]))
    return found


def test_attempts_fork_from_one_warm_host_record_as_fresh_ones_and_leave_nothing(
    tmp_path, write_config, model_server, checkout
):
    run_dir = tmp_path / "run"
    seen: list[tuple[int, int, list[str]]] = []
    for model, responder in list(model_server.models.items()):

        def observed(request, responder=responder):
            # Asked while the attempt runs: which process is it, and who started it?
            seen.extend(attempt_processes(run_dir))
            return responder(request)

        model_server.models[model] = observed
    options = DifficultyOptions(
        config=write_config(), atlas_id=SOURCE_ID, n=2, output=run_dir, jobs=2
    )
    result = run_make_difficulty(options=options)
    assert result.attempts_run == 6
    # Every attempt was forked by the same warm host of the Gym route, not started fresh.
    hosts = {parent: command for _pid, parent, command in seen}
    assert len(hosts) == 1, hosts
    [command] = hosts.values()
    assert Path(command[1]).name == "attempt_host.py" and command[2:4] == ["serve", GYM_WORKER]
    attempts = {pid for pid, _parent, _command in seen}
    assert len(attempts) >= 3 and os.getpid() not in hosts
    # Nothing the run started outlives it: neither the host nor any attempt.
    assert wait_dead([*hosts, *attempts]) == []
    # Each forked attempt records what the same input gives in a fresh interpreter, and the
    # report counts those verdicts.
    outcomes = [o for model in result.report["models"] for o in model["task_outcomes"]]
    assert len(outcomes) == 6
    for index, outcome in enumerate(outcomes):
        execution = run_dir / outcome["execution_path"]
        again = tmp_path / f"fresh-{index}"
        again.mkdir()
        subprocess.run(
            [sys.executable, GYM_WORKER, str(execution / "input.json"), str(again)],
            env={**os.environ, "PYTHONPATH": os.pathsep.join(
                (f"{checkout}/skyrl-gym", f"{checkout}/skyrl-train", str(checkout))
            ), "PYTHONDONTWRITEBYTECODE": "1"},
            check=True, cwd=again, capture_output=True,
        )  # fmt: skip
        forked, fresh = load(execution / "attempt.json"), load(again / "attempt.json")
        for key in ("verification", "verifier_executed", "done", "turns", "stop_reason"):
            assert forked[key] == fresh[key], key
        assert outcome["verification"] == fresh["verification"]
        assert code_index(execution) == code_index(again)
    solved = {m["size"]: m["solved"] for m in result.report["models"]}
    assert solved["hosted"] == 2 and solved["small"] <= solved["large"] <= 2


def code_index(execution: Path) -> list[tuple[str, bool, str]]:
    return [
        (entry["module"], entry["called_in_attempt"], entry["sha256"])
        for entry in load(execution / "native-code-index.json")
    ]
