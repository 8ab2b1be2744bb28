"""Terminus-2 in a real container through the project's Harbor worker, its model the tests'
model server answering in Terminus's JSON format: the agent's commands run in the task's
container and the task's own tests grade what they did. Offline Terminus brings its tmux from
pinned packages into a container without a network."""

from __future__ import annotations

import json

import pytest

from tests.harbor.tasks import CHECK_ANSWER_OFFLINE, task_files, write_task
from tests.harbor.worker import harbor_task, model, run_worker, runtime
from tests.model_server import completion

pytestmark = [pytest.mark.harbor, pytest.mark.slow]

# What Terminus-2 0.25 does not declare: passing them would fail the trial at Trial.create.
UNDECLARED = ["enable_episode_logging", "trajectory_dump_cadence"]


def terminus_reply(*, commands: list[str], complete: bool) -> dict:
    """One Terminus turn: analysis, plan, keystrokes and whether the task is complete."""
    return completion(json.dumps({
        "analysis": "The answer is not written yet." if commands else "The answer is in place.",
        "plan": "Write the total into /app/answer.txt." if commands else "Confirm completion.",
        "commands": [{"keystrokes": command, "duration": 0.5} for command in commands],
        "task_complete": complete,
    }))  # fmt: skip


def script_solution(server) -> None:
    # Terminus asks for a second confirmation before it accepts task_complete.
    server.enqueue(
        terminus_reply(commands=["echo 7 > /app/answer.txt\n"], complete=True),
        terminus_reply(commands=[], complete=True),
    )


def test_terminus_solves_a_task_with_the_model_server(machinery, model_server, tmp_path):
    script_solution(model_server)
    task = write_task(tmp_path / "add", task_files(image=machinery.images["debian_tmux"]))
    attempt = run_worker(
        machinery, folder=tmp_path / "run", task=harbor_task(task),
        config=runtime(machinery, agent="terminus-2", kwargs={
            "record_terminal_session": False,
            "model_info": {"max_input_tokens": 32768, "max_output_tokens": 512},
        }),
        solver=model(model_server.base_url),
    )  # fmt: skip
    assert attempt.returncode == 0, attempt.stderr
    record = attempt.record
    assert record["verification"]["status"] == "verified", record
    assert record["verification"]["passed"] is True and record["verification"]["score"] == 1.0
    assert record["agent_options_dropped"] == UNDECLARED
    assert record["turns"] == 2
    calls = [r for r in model_server.requests if r.path.endswith("/chat/completions")]
    assert len(calls) == 2
    first = calls[0]
    assert first.body["model"] == "test/terminus" and first.body["temperature"] == 0.0
    assert "Write the sum of 4 and 3" in first.user_text
    assert first.headers.get("authorization") == "Bearer sk-harbor-tier"
    # The second call carries what the terminal showed after the first turn's command.
    assert "echo 7 > /app/answer.txt" in calls[1].user_text
    trial = attempt.trial_dir()
    assert (trial / "agent" / "trajectory.json").is_file()
    options = next(e for e in attempt.events() if e["event"] == "agent_options")
    assert options["dropped"] == UNDECLARED and "api_base" in options["passed"]


def test_offline_terminus_installs_its_tools_without_a_network(machinery, model_server, tmp_path):
    script_solution(model_server)
    files = task_files(image=machinery.images["debian"], test=CHECK_ANSWER_OFFLINE)
    task = write_task(tmp_path / "add", files)
    packages = machinery.offline_packages
    attempt = run_worker(
        machinery, folder=tmp_path / "run", task=harbor_task(task),
        config=runtime(machinery, agent="offline_terminus:OfflineTerminus2", kwargs={
            "debian_package_manifest": packages["manifest"],
            "debian_package_manifest_sha256": packages["sha256"],
            "record_terminal_session": False,
        }),
        solver=model(model_server.base_url),
    )  # fmt: skip
    assert attempt.returncode == 0, attempt.stderr
    record = attempt.record
    assert record["verification"]["status"] == "verified", record
    assert record["verification"]["passed"] is True
    tooling = json.loads((attempt.trial_dir() / "agent" / "offline-tooling.json").read_text())
    assert tooling["return_code"] == 0 and tooling["stdout"].strip().splitlines()[-1].startswith(
        "tmux "
    )
    names = {package["filename"].split("_")[0] for package in tooling["packages"]}
    assert "tmux" in names
