"""The native workers' own rules (§6.3–§6.8). The worker modules are standalone scripts; tests load
them the way their interpreter does, with their folder first on ``sys.path``."""

from __future__ import annotations

import ast
import importlib
import json
import math
import sys
from pathlib import Path

import pytest

from tests.production.conftest import gsm8k_rows, write_parquet
from tests.production.helpers import load, make_review
from tests.production.review_model import ReviewModel

WORKERS = Path(__file__).resolve().parents[2] / "reviews" / "production" / "workers"


@pytest.fixture(scope="module")
def workers():
    sys.path.insert(0, str(WORKERS))
    try:
        yield (
            importlib.import_module("gym_worker"),
            importlib.import_module("harbor_worker"),
            importlib.import_module("worker_support"),
        )
    finally:
        sys.path.remove(str(WORKERS))


def test_workers_never_import_the_project():
    project = {"django", "reviews", "atlas", "difficulty", "tests"}
    for path in WORKERS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not {name.split(".")[0] for name in names} & project, (path, names)


def test_chat_options_from_environment_metadata(workers):
    gym, _, _ = workers
    metadata = {
        "model": "x", "input": [], "store": True, "temperature": 0.3,
        "max_output_tokens": 100,
        "tools": [{"type": "function", "name": "run", "description": "d", "parameters": {}},
                  {"type": "function", "function": {"name": "kept"}}],
    }  # fmt: skip
    options = gym.chat_options(metadata=metadata, parameters={})
    assert options == {
        "temperature": 0.3,
        "max_completion_tokens": 100,
        "tools": [
            {"type": "function", "function": {"name": "run", "description": "d", "parameters": {}}},
            {"type": "function", "function": {"name": "kept"}},
        ],
    }
    assert "max_completion_tokens" not in gym.chat_options(
        metadata=metadata, parameters={"max_tokens": 10}
    )


def test_gym_verification_rules(workers):
    gym, _, _ = workers
    verdict = {"reward": 1.0, "done": True, "metadata": {}}
    assert gym.Attempt._verification("gsm8k", verdict, 3)["status"] == "verified"
    for env_id in ("preference", "prompt_only"):
        assert gym.Attempt._verification(env_id, verdict, 3)["status"] == "unavailable"
    assert gym.Attempt._verification("gsm8k", None, 3) == {
        "status": "unavailable", "score": None, "passed": None,
        "reason": "Turn cap of 3 reached without a terminal verdict", "diagnostics": {},
    }  # fmt: skip
    pending = {**verdict, "metadata": {"cohort_reward_pending": True}}
    assert gym.Attempt._verification("gsm8k", pending, 3)["status"] == "unavailable"


def test_component_rewards(workers):
    _, harbor, _ = workers
    result = harbor.component_verification({"a": 1.0, "b": 0.5})
    assert result == {
        "status": "verified", "score": 0.75, "passed": False, "score_min": 0.0,
        "score_max": 1.0, "reason": None,
        "diagnostics": {"native_rewards": {"a": 1.0, "b": 0.5},
                        "score_aggregation": "component_mean",
                        "pass_criterion": "all_components_equal_one"},
    }  # fmt: skip
    assert harbor.component_verification({"a": 1.0, "b": 1.0 - 1e-12})["passed"] is True
    for bad in ({}, {"a": 1.5}, {"a": math.nan}, {"a": True}, None):
        with pytest.raises(ValueError):
            harbor.component_verification(bad)
    assert harbor.scalar_verification({"reward": 0.0})["score"] == 0.0
    assert harbor.scalar_verification(None)["status"] == "unavailable"


def test_harbor_trial_settings(workers, tmp_path):
    _, harbor, _ = workers
    a = harbor.trial_name(execution_dir=tmp_path / "execution-000")
    b = harbor.trial_name(execution_dir=tmp_path / "execution-001")
    assert a.startswith("review-") and len(a) == 27 and a != b
    data = {
        "model": {"name": "Qwen/Q", "base_url": "http://m/v1", "parameters": {"top_p": 0.9}},
        "config": {"harbor_agent": {"name": "terminus-2", "kwargs": {"x": 1}},
                   "max_turns": 4, "agent_timeout": 90},
    }  # fmt: skip
    config = harbor.agent_config(data=data)
    assert config == {
        "model_name": "openai/Qwen/Q",
        "name": "terminus-2",
        "override_timeout_sec": 90.0,
        "kwargs": {"x": 1, "api_base": "http://m/v1", "llm_call_kwargs": {"top_p": 0.9},
                   "max_turns": 4, "store_all_messages": True, "enable_episode_logging": True,
                   "trajectory_dump_cadence": "per_turn"},
    }  # fmt: skip
    data["config"]["harbor_agent"]["name"] = "offline_terminus:OfflineTerminus2"
    assert harbor.agent_config(data=data)["import_path"] == "offline_terminus:OfflineTerminus2"


def test_packed_task_is_materialised(workers, tmp_path):
    _, harbor, _ = workers
    dataset = tmp_path / "packed.jsonl"
    dataset.write_text(
        json.dumps({"id": "t9", "files": {"instruction.md": "Do.", "tests/test.sh": "exit 0"}})
        + "\n"
    )
    target = harbor.materialize_packed_task(
        packed={"dataset_path": str(dataset), "key": "t9"}, execution_dir=tmp_path / "exe"
    )
    assert target == tmp_path / "exe/packed-task-cache/t9"
    assert (target / "tests/test.sh").read_text() == "exit 0"
    dataset.write_text(json.dumps({"id": "t9", "files": {"../escape": "x"}}) + "\n")
    with pytest.raises(ValueError, match="escapes"):
        harbor.materialize_packed_task(
            packed={"dataset_path": str(dataset), "key": "t9"}, execution_dir=tmp_path / "e2"
        )


@pytest.mark.slow
def test_multi_turn_environment_with_observations(tmp_path, write_config, model_server):
    model_server.default = ReviewModel(wrong=True)
    rows = [{**row, "env_class": "gsm8k_multi_turn"} for row in gsm8k_rows(1)]
    config = write_config(tasks_path=write_parquet(tmp_path / "mt.parquet", rows))
    output = tmp_path / "run"
    make_review("--config", str(config), "--n", "1", "--output", str(output))
    execution = output / "tasks/0000/execution-000"
    trace = load(execution / "solver-trace.json")
    assert trace["turns"] == 2 and trace["done"] is True
    assert [m["role"] for m in trace["messages"]] == ["user", "assistant", "user", "assistant"]
    assert (execution / "solver/turn-001/request.json").is_file()
    verification = load(execution / "attempt.json")["verification"]
    assert verification["status"] == "verified" and verification["passed"] is False
    assert verification["score"] == pytest.approx(0.1)
    events = [json.loads(line)["event"] for line in (execution / "verifier-trace.jsonl").open()]
    assert events == ["verify_start", "verify_end"] * 2


@pytest.mark.slow
def test_an_exception_in_the_worker_is_an_error_verification(tmp_path, write_config):
    rows = [{**row, "env_class": "no_such_env"} for row in gsm8k_rows(1)]
    config = write_config(tasks_path=write_parquet(tmp_path / "x.parquet", rows))
    output = tmp_path / "run"
    make_review("--config", str(config), "--n", "1", "--output", str(output))
    attempt = load(output / "tasks/0000/attempt.json")
    assert attempt["verification"]["status"] == "error"
    assert attempt["verification"]["diagnostics"]["exception_type"]
    assert attempt["verifier_executed"] is False
    event = json.loads((output / "tasks/0000/execution-000/verifier-trace.jsonl").read_text())
    assert event["event"] == "execution_error" and "Traceback" in event["traceback"]
    runtime = next(
        r for r in load(output / "quality-reviews.json")["reviews"]
        if r["method"] == "runtime_execution"
    )  # fmt: skip
    assert runtime["verdict"] == "inconclusive" and runtime["tests_executed"] is False
    assert runtime["summary"].startswith("Native skyrl_gym verification: error.")
