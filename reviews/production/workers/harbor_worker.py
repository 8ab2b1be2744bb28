"""Harbor worker: one trial of one Harbor task through ``harbor``'s
trial API (``TrialConfig`` → ``Trial.create`` → ``Trial.run``).

Run by ``runtime.harbor_python`` as ``<python> harbor_worker.py <input.json> <execution dir>`` with
``<harbor>/src`` and the MarinSkyRL checkout on ``PYTHONPATH``. Needs Harbor's environment provider
(e.g. local Docker). Standalone: it never imports Django or the project.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import packed_task_cache
from worker_support import EventLog, NativeCapture, error_outcome, warm_imports, write_json

OFFLINE_AGENT = "offline_terminus:OfflineTerminus2"
TOLERANCE = 1e-9


class ReviewRuleError(Exception):
    """A configuration the review must refuse, in the words of the review config's own check
    (``reviews/production/config.py``, which this native-interpreter script cannot import); the
    worker prints the message to stderr and exits 2."""


def trial_name(*, execution_dir: Path) -> str:
    """A distinct trial name for every attempt: the execution directory's own hash."""
    digest = hashlib.sha256(str(execution_dir.resolve()).encode("utf-8")).hexdigest()
    return "review-" + digest[:20]


def component_verification(rewards: Any) -> dict[str, Any]:
    """Finite component rewards in [0, 1] → their mean; passed only when all equal 1."""
    values = list(rewards.values()) if isinstance(rewards, dict) else None
    if not values or not all(
        isinstance(v, int | float)
        and not isinstance(v, bool)
        and math.isfinite(v)
        and 0.0 <= v <= 1.0
        for v in values
    ):
        raise ValueError(f"Component rewards must be finite numbers in [0, 1]: {rewards!r}")
    return {
        "status": "verified",
        "score": sum(values) / len(values),
        "passed": all(abs(v - 1.0) <= TOLERANCE for v in values),
        "score_min": 0.0,
        "score_max": 1.0,
        "reason": None,
        "diagnostics": {
            "native_rewards": rewards,
            "score_aggregation": "component_mean",
            "pass_criterion": "all_components_equal_one",
        },
    }


def scalar_verification(rewards: Any) -> dict[str, Any]:
    """The native verifier's score as it is."""
    if not isinstance(rewards, dict) or not rewards:
        return {"status": "unavailable", "score": None, "passed": None,
                "reason": "The verifier reported no reward", "diagnostics": {}}  # fmt: skip
    score = rewards["reward"] if "reward" in rewards else next(iter(rewards.values()))
    return {
        "status": "verified",
        "score": float(score),
        "passed": float(score) >= 1.0,
        "reason": f"Native verifier reward {float(score):g}",
        "diagnostics": {"native_rewards": rewards},
    }


def materialize_packed_task(
    *, packed: dict[str, Any], execution_dir: Path, events: EventLog | None = None
) -> Path:
    """The ``packed_task`` unpacked under ``packed-task-cache/`` (``packed_task_cache``)."""
    target, materializer = packed_task_cache.materialize(packed=packed, execution_dir=execution_dir)
    if events is not None:
        events.write("packed_task", materializer=materializer, task_path=str(target))
    return target


def agent_config(*, data: dict[str, Any]) -> dict[str, Any]:
    model, runtime = data["model"], data["config"]
    agent = runtime["harbor_agent"]
    kwargs = {
        **agent.get("kwargs", {}),
        "api_base": model["base_url"],
        "llm_call_kwargs": model["parameters"],
        "max_turns": runtime["max_turns"],
        "store_all_messages": True,
        "enable_episode_logging": True,
        "trajectory_dump_cadence": "per_turn",
    }
    config: dict[str, Any] = {
        "model_name": f"openai/{model['name']}",
        "kwargs": kwargs,
        "override_timeout_sec": float(runtime["agent_timeout"]),
    }
    if agent["name"] == OFFLINE_AGENT:
        config["import_path"] = OFFLINE_AGENT
    else:
        config["name"] = agent["name"]
    return config


async def run_trial(*, data: dict[str, Any], execution_dir: Path, events: EventLog) -> dict:
    from harbor.models.trial.config import (
        AgentConfig,
        EnvironmentConfig,
        TaskConfig,
        TrialConfig,
        VerifierConfig,
    )
    from harbor.trial.trial import Trial

    runtime = data["config"]
    verifier = runtime.get("harbor_verifier", {})
    if verifier.get("disable") or verifier.get("import_path"):
        raise ReviewRuleError("Review must use the task native verifier, enabled")
    task = data["task"]
    if task.get("packed_task"):
        task_path = materialize_packed_task(
            packed=task["packed_task"], execution_dir=execution_dir, events=events
        )
    else:
        task_path = Path(task["task_dir"])
    name = trial_name(execution_dir=execution_dir)
    config = TrialConfig(
        task=TaskConfig(path=task_path),
        trial_name=name,
        trials_dir=execution_dir,
        agent=AgentConfig(**agent_config(data=data)),
        environment=EnvironmentConfig(**runtime.get("harbor_environment", {})),
        verifier=VerifierConfig(**verifier),
    )
    events.write("trial_start", trial_name=name, task_path=str(task_path))
    trial = await Trial.create(config)
    result = await trial.run()
    document = json.loads(result.model_dump_json())
    write_json(execution_dir / "harbor-result.json", document)
    events.write("trial_end", trial_name=name, exception=document.get("exception_info"))
    return _outcome(document=document, data=data, trial_dir=execution_dir / name)


def _outcome(*, document: dict[str, Any], data: dict[str, Any], trial_dir: Path) -> dict:
    timings = [document.get("verifier")] + [
        step.get("verifier") for step in document.get("step_results") or []
    ]
    executed = any(isinstance(t, dict) and t.get("started_at") for t in timings)
    if data["config"]["harbor_agent"]["name"] == OFFLINE_AGENT:
        tooling = json.loads((trial_dir / "agent" / "offline-tooling.json").read_text("utf-8"))
        if tooling.get("return_code") != 0:
            raise RuntimeError("Offline agent tooling failed to install")
    rewards = (document.get("verifier_result") or {}).get("rewards")
    verification: dict[str, Any]
    if not executed:
        verification = {"status": "unavailable", "score": None, "passed": None,
                        "reason": "The native verifier did not run", "diagnostics": {}}  # fmt: skip
    elif data["config"].get("harbor_reward_mode") == "skill2env_components":
        verification = component_verification(rewards)
    else:
        verification = scalar_verification(rewards)
    return {
        "verification": verification,
        "verifier_executed": executed,
        "done": document.get("exception_info") is None,
        "turns": None,
    }


def main(input_path: str, execution_dir: str) -> int:
    directory = Path(execution_dir)
    data = json.loads(Path(input_path).read_text(encoding="utf-8"))
    key_env = data["model"].get("api_key_env")
    if key_env and key_env in os.environ:
        # Harbor's agents read the OpenAI-compatible key from OPENAI_API_KEY.
        os.environ["OPENAI_API_KEY"] = os.environ[key_env]
    events = EventLog(directory / "verifier-trace.jsonl")
    warm_imports()
    capture = NativeCapture()
    capture.start()
    try:
        outcome = asyncio.run(run_trial(data=data, execution_dir=directory, events=events))
    except ReviewRuleError as exc:
        capture.stop()
        print(str(exc), file=sys.stderr)
        return 2
    except Exception as exc:
        capture.stop()
        outcome = error_outcome(events=events, exc=exc, turns=0)
    else:
        capture.stop()
    try:
        capture.write(directory)
    except Exception as exc:
        outcome = error_outcome(events=events, exc=exc, turns=0)
    write_json(directory / "attempt.json", outcome)
    shutil.rmtree(directory / "__pycache__", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
