"""Real Harbor trials in a real engine through the project's Harbor worker: the oracle agent
(the task's own solution) is verified, the nop agent fails, a packed TaskTrove reference is
unpacked and run, and bad input ends as a named attempt error with what it left kept."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.harbor.tasks import CHECK_OFFLINE, task_files, write_task
from tests.harbor.worker import WORKER, harbor_task, run_worker, runtime
from tests.production.harbor_standin import reference, task_archive, tasktrove_dataset

pytestmark = [pytest.mark.harbor, pytest.mark.slow]

# Every option a review asks of an agent; the oracle and nop agents declare none of them.
REQUESTED = ["api_base", "enable_episode_logging", "llm_call_kwargs", "max_turns",
             "store_all_messages", "trajectory_dump_cadence"]  # fmt: skip


def attempt_at(machinery, tmp_path, files: dict[str, str], *, agent: str = "oracle"):
    """One finished attempt at a task made of ``files``."""
    task = write_task(tmp_path / "add", files)
    attempt = run_worker(machinery, folder=tmp_path / "run", task=harbor_task(task),
                         config=runtime(machinery, agent=agent))  # fmt: skip
    assert attempt.returncode == 0, attempt.stderr
    return attempt


def test_the_oracle_agent_is_verified_with_reward_one(machinery, tmp_path):
    attempt = attempt_at(machinery, tmp_path, task_files(image=machinery.images["tiny"]))
    record = attempt.record
    assert record["verification"] == {
        "status": "verified", "score": 1.0, "passed": True,
        "reason": "Native verifier reward 1", "diagnostics": {"native_rewards": {"reward": 1.0}},
    }  # fmt: skip
    assert record["verifier_executed"] is True and record["done"] is True
    assert record["turns"] == 0
    assert record["agent_options_dropped"] == REQUESTED
    trial = attempt.trial_dir()
    assert (trial / "verifier" / "reward.txt").read_text().strip() == "1"
    result = (attempt.execution / "harbor-result.json").read_text()
    assert '"verifier_result"' in result and '"exception_info": null' in result
    names = [event["event"] for event in attempt.events()]
    assert names == ["agent_options", "trial_start", "trial_end"]


def test_the_nop_agent_fails_with_reward_zero(machinery, tmp_path):
    attempt = attempt_at(
        machinery, tmp_path, task_files(image=machinery.images["tiny"]), agent="nop"
    )
    verification = attempt.verification
    assert verification["status"] == "verified"
    assert verification["score"] == 0.0 and verification["passed"] is False
    assert attempt.record["verifier_executed"] is True


def test_a_partial_reward_passes_as_marinskyrl_grades(machinery, tmp_path):
    partial = "#!/bin/bash\necho 0.25 > /logs/verifier/reward.txt\n"
    attempt = attempt_at(
        machinery, tmp_path, task_files(image=machinery.images["tiny"], test=partial), agent="nop"
    )
    verification = attempt.verification
    assert verification["score"] == 0.25 and verification["passed"] is True


def test_an_image_that_fails_to_build_is_an_error_with_its_build_log(machinery, tmp_path):
    files = task_files(image=machinery.images["tiny"],
                       dockerfile_lines=("RUN echo compiling-the-task && exit 3",))  # fmt: skip
    attempt = attempt_at(machinery, tmp_path, files)
    record = attempt.record
    verification = record["verification"]
    assert verification["status"] == "error" and verification["score"] is None
    assert verification["reason"] == "verification unavailable after RuntimeError"
    diagnostics = verification["diagnostics"]
    assert diagnostics["phase"] == "environment_setup"
    assert diagnostics["log"] == "environment-setup.log"
    log = (attempt.execution / "environment-setup.log").read_text()
    assert "compiling-the-task" in log and "returned a non-zero code: 3" in log
    assert record["verifier_executed"] is False and record["done"] is False


def test_a_task_without_its_tests_is_an_error(machinery, tmp_path):
    attempt = attempt_at(machinery, tmp_path, task_files(image=machinery.images["tiny"], test=None))
    # Harbor refuses the task as it loads it, before any container starts.
    verification = attempt.verification
    assert verification["status"] == "error"
    assert verification["reason"].startswith("FileNotFoundError: Task directory ")
    assert verification["reason"].endswith("does not contain tests/test.sh.")
    assert attempt.record["verifier_executed"] is False


def test_a_garbage_reward_file_is_an_error(machinery, tmp_path):
    garbage = "#!/bin/bash\necho 'seven, probably' > /logs/verifier/reward.txt\n"
    attempt = attempt_at(
        machinery, tmp_path, task_files(image=machinery.images["tiny"], test=garbage)
    )
    verification = attempt.verification
    assert verification["status"] == "error"
    assert verification["reason"] == "verification unavailable after VerifierOutputParseError"
    assert attempt.record["verifier_executed"] is True
    reward = attempt.trial_dir() / "verifier" / "reward.txt"
    assert reward.read_text().strip() == "seven, probably"


def test_no_engine_leaves_the_task_unattempted_and_a_retry_runs_it(machinery, tmp_path):
    task = write_task(tmp_path / "add", task_files(image=machinery.images["tiny"]))
    down = run_worker(machinery, folder=tmp_path / "down", task=harbor_task(task),
                      config=runtime(machinery),
                      DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock")  # fmt: skip
    assert down.returncode == 75, down.stderr
    assert not (down.execution / "attempt.json").exists()
    record = json.loads((down.execution / "solver-unavailable.json").read_text())
    assert record["unavailable"] == "Container engine"
    assert record["reason"].startswith(f"unix://{tmp_path}/no-engine.sock: ")
    assert [event["event"] for event in down.events()] == ["solver_unavailable"]
    # The same task again once the engine answers: nothing was recorded against it.
    again = run_worker(machinery, folder=tmp_path / "again", task=harbor_task(task),
                       config=runtime(machinery))  # fmt: skip
    assert again.verification["status"] == "verified" and again.verification["passed"] is True


def test_the_no_network_overlay_is_what_cuts_the_network(machinery, tmp_path):
    task = write_task(tmp_path / "net", task_files(image=machinery.images["tiny"],
                                                   test=CHECK_OFFLINE))  # fmt: skip
    scores = {}
    for network in (False, True):
        attempt = run_worker(machinery, folder=tmp_path / f"network-{network}",
                             task=harbor_task(task),
                             config=runtime(machinery, agent="nop", network=network))  # fmt: skip
        scores[network] = attempt.verification["score"]
    assert scores == {False: 1.0, True: 0.0}


def test_a_packed_tasktrove_reference_is_materialised_and_run(machinery, tmp_path):
    # The task's own Dockerfile bakes the answer in: the nop agent passes only if the archive's
    # environment was built and its tests ran in it.
    files = task_files(image=machinery.images["tiny"], solution=None,
                       dockerfile_lines=("RUN echo 7 > /app/answer.txt",))  # fmt: skip
    other = {**files, "instruction.md": "Another task.\n"}
    dataset = tasktrove_dataset(tmp_path / "data" / "tasktrove.parquet", [
        {"source": "terminal-bench", "path": "tasks/other", "task_binary": task_archive(other)},
        {"source": "terminal-bench", "path": "tasks/other-2", "task_binary": task_archive(other)},
        {"source": "terminal-bench", "path": "tasks/add", "task_binary": task_archive(files)},
    ])  # fmt: skip
    packed = reference(dataset, row_group=1, row=0, source="terminal-bench", path="tasks/add")
    task = {"id": "add", "route": "harbor", "task_dir": None, "packed_task": packed}
    attempt = run_worker(machinery, folder=tmp_path / "run", task=task,
                         config=runtime(machinery, agent="nop"))  # fmt: skip
    assert attempt.returncode == 0, attempt.stderr
    assert attempt.verification["status"] == "verified" and attempt.verification["passed"] is True
    events = attempt.events()
    assert events[0]["event"] == "packed_task" and events[0]["materializer"] == "project"
    unpacked = attempt.execution / "packed-task-cache" / "tasks"
    (instruction,) = unpacked.glob("*/*/instruction.md")
    assert instruction.read_text() == files["instruction.md"]
    start = next(event for event in events if event["event"] == "trial_start")
    assert start["task_path"] == str(instruction.parent)


def test_the_registry_harbor_is_identified_without_a_commit(machinery):
    probe = WORKER.with_name("harbor_identity.py")
    done = subprocess.run([machinery.harbor_python, str(probe)], capture_output=True, text=True,
                          check=True)  # fmt: skip
    identity = json.loads(done.stdout)
    assert (identity["package"], identity["version"]) == ("harbor", "0.25.0")
    assert identity["modified"] == [] and identity["file_count"] > 100
    assert identity["direct_url"] is None  # from the registry, not a checkout or a local path


@pytest.mark.parametrize(("typed", "score"), [("7", 1.0), ("8", 0.0)])
def test_saved_keystrokes_are_replayed_without_a_model(machinery, tmp_path, typed, score):
    task = write_task(tmp_path / "add", task_files(image=machinery.images["tiny"]))
    keystrokes = ["cd /app\n", f"echo {typed} > answer.txt\n", "C-c", "cat answer.txt\n"]
    attempt = run_worker(
        machinery, folder=tmp_path / "run", task=harbor_task(task),
        config=runtime(machinery, agent="command_replay:CommandReplay",
                       kwargs={"keystrokes": keystrokes}),
    )  # fmt: skip
    assert attempt.returncode == 0, attempt.stderr
    assert attempt.verification["score"] == score
    replay = json.loads((attempt.trial_dir() / "agent" / "command-replay.json").read_text())
    assert replay["skipped"] == ["C-c"] and replay["return_code"] == 0
    assert replay["stdout"].strip() == typed  # the shell kept its working directory
    options = next(e for e in attempt.events() if e["event"] == "agent_options")
    assert options["passed"] == ["keystrokes"] and options["model_name"] is None
