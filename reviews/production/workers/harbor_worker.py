"""Harbor worker: one trial of one Harbor task through ``harbor``'s
trial API (``TrialConfig`` → ``Trial.create`` → ``Trial.run``).

Run by ``runtime.harbor_python`` as ``<python> harbor_worker.py <input.json> <execution dir>`` with
Harbor importable (installed in that interpreter's environment, or ``<harbor>/src`` on
``PYTHONPATH``) and the MarinSkyRL checkout on ``PYTHONPATH``. Needs Harbor's environment provider:
for Docker, a reachable engine (``DOCKER_HOST``) and the Compose plugin (``DOCKER_CONFIG``).
Standalone: it never imports Django or the project.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# litellm (imported by Harbor's agents) otherwise tries to download its model cost map on
# import and retries for about ten seconds when, as on a review machine, it cannot.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import packed_task_cache
from worker_support import (
    EventLog,
    NativeCapture,
    error_outcome,
    solver_unavailable_exit,
    warm_imports,
    write_json,
)

OFFLINE_AGENT = "offline_terminus:OfflineTerminus2"
TOLERANCE = 1e-9
# The phases of a Harbor trial, in order, as its result records their timings.
PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier")
MESSAGE_CHARACTERS = 2000
ENVIRONMENT_LOG = "environment-setup.log"
ENGINE_CHECK_SECONDS = 60


class EngineUnavailable(Exception):
    """The container engine did not answer: no attempt was made, so the worker exits as the
    launcher recognises an attempt to retry on resume (``worker_support.SOLVER_UNAVAILABLE_EXIT``),
    without ``attempt.json``."""


class ReviewRuleError(Exception):
    """A configuration the review must refuse, in the words of the review config's own check
    (``reviews/production/runtime/config.py``, which this native-interpreter script cannot import);
    the worker prints the message to stderr and exits 2."""


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


def harbor_verification(*, document: dict[str, Any], components: bool) -> dict[str, Any]:
    """The trial's verdict by MarinSkyRL's rules (``verification_from_harbor_result``): no
    verifier result after an exception is an error, without one unavailable; a result without
    ``rewards["reward"]`` is an error; otherwise the reward is the score, passed when above 0.
    MarinSkyRL's own function reads a ``stdout`` the installed Harbor's result does not have, so
    the worker applies its rules to the result document instead of calling it."""
    verifier_result = document.get("verifier_result")
    exception = document.get("exception_info")
    if verifier_result is None:
        if exception is not None:
            return exception_verification(exception=exception, document=document)
        return {"status": "unavailable", "score": None, "passed": None,
                "reason": "Harbor returned no verifier result", "diagnostics": {}}  # fmt: skip
    rewards = verifier_result.get("rewards")
    if components:
        return component_verification(rewards)
    if not isinstance(rewards, dict) or "reward" not in rewards:
        return {"status": "error", "score": None, "passed": None,
                "reason": "Harbor verifier result is malformed",
                "diagnostics": {"missing_field": "rewards.reward",
                                "native_rewards": rewards}}  # fmt: skip
    score = float(rewards["reward"])
    if not math.isfinite(score):
        raise ValueError(f"Native reward is not finite: {rewards['reward']!r}")
    return {
        "status": "verified",
        "score": score,
        "passed": score > 0.0,
        "reason": f"Native verifier reward {score:g}",
        "diagnostics": {"native_rewards": rewards},
    }


def failed_phase(document: dict[str, Any]) -> str | None:
    """The last phase of the trial that started: where an exception stopped it."""
    started = [phase for phase in PHASES if (document.get(phase) or {}).get("started_at")]
    return started[-1] if started else None


def exception_verification(*, exception: dict[str, Any], document: dict[str, Any]) -> dict:
    kind = str(exception.get("exception_type") or "Exception")
    message = str(exception.get("exception_message") or "")
    diagnostics: dict[str, Any] = {
        "exception_type": kind,
        "exception_message": message[:MESSAGE_CHARACTERS],
        "phase": failed_phase(document),
    }
    return {
        "status": "error",
        "score": None,
        "passed": None,
        "reason": f"verification unavailable after {kind}",
        "diagnostics": diagnostics,
    }


def materialize_packed_task(
    *, packed: dict[str, Any], execution_dir: Path, events: EventLog | None = None
) -> Path:
    """The ``packed_task`` unpacked under ``packed-task-cache/`` (``packed_task_cache``)."""
    target, materializer = packed_task_cache.materialize(packed=packed, execution_dir=execution_dir)
    if events is not None:
        events.write("packed_task", materializer=materializer, task_path=str(target))
    return target


def declared_options(agent_class: type) -> frozenset[str] | None:
    """The option names the agent's options model declares (field names and their aliases);
    ``None`` for a Harbor whose agents have no options model, which passes every option on."""
    if not hasattr(agent_class, "options_model"):
        return None
    model = agent_class.options_model
    if model is None:
        return frozenset()  # Harbor ignores every option of an agent without a model
    names: set[str] = set()
    for name, field in model.model_fields.items():
        names.add(name)
        for alias in (field.alias, field.validation_alias):
            if isinstance(alias, str):
                names.add(alias)
            else:
                choices = getattr(alias, "choices", ())
                names.update(choice for choice in choices if isinstance(choice, str))
    return frozenset(names)


def requested_options(*, data: dict[str, Any]) -> dict[str, Any]:
    """What a review asks of the agent: the configured kwargs, the endpoint, the model
    parameters and the turn cap, every message kept and logs as the reference runner keeps
    them (options the installed Harbor may not know; ``agent_config`` drops those)."""
    model, runtime = data["model"], data["config"]
    return {
        **runtime["harbor_agent"].get("kwargs", {}),
        "api_base": model["base_url"],
        "llm_call_kwargs": model["parameters"],
        "max_turns": runtime["max_turns"],
        "store_all_messages": True,
        "enable_episode_logging": True,
        "trajectory_dump_cadence": "per_turn",
    }


def agent_config(
    *, data: dict[str, Any], declared: frozenset[str] | None, uses_model: bool
) -> tuple[dict, list]:
    """The trial's agent configuration and the requested options its agent does not declare
    (never passed: an options model that forbids unknown keys would fail the trial). An agent
    that talks to no model (the oracle, nop) gets no model name: Harbor would import litellm
    only to parse it."""
    model, runtime = data["model"], data["config"]
    requested = requested_options(data=data)
    dropped = [] if declared is None else sorted(set(requested) - declared)
    config: dict[str, Any] = {
        "kwargs": {name: value for name, value in requested.items() if name not in dropped},
        "override_timeout_sec": float(runtime["agent_timeout"]),
    }
    if uses_model:
        config["model_name"] = f"openai/{model['name']}"
    config.update(agent_reference(runtime["harbor_agent"]["name"]))
    return config, dropped


def talks_to_a_model(agent_class: type) -> bool:
    """Harbor declares an agent's model connection (``MODEL_CONNECTION``); ``None`` means the
    agent calls no model. A Harbor without the declaration gets the model name as before."""
    return getattr(agent_class, "MODEL_CONNECTION", True) is not None


def agent_reference(name: str) -> dict[str, str]:
    """``import_path`` for the offline agent (imported from the worker's folder), else ``name``."""
    return {"import_path": name} if name == OFFLINE_AGENT else {"name": name}


def check_engine(*, environment: Any) -> None:
    """A Docker environment needs its engine: asked once before the trial, so an engine that is
    down leaves the task unattempted rather than recorded as a failed attempt."""
    if getattr(environment.type, "value", environment.type) != "docker":
        return
    try:
        done = subprocess.run(
            ["docker", "version", "--format", "{{.Server.Version}}"],
            capture_output=True, text=True, timeout=ENGINE_CHECK_SECONDS,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineUnavailable(str(exc)) from None
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        where = os.environ.get("DOCKER_HOST", "the default socket")
        detail = lines[-1] if lines else f"docker exited {done.returncode}"
        raise EngineUnavailable(f"{where}: {detail}")


@dataclass(frozen=True)
class PreparedTrial:
    config: Any  # Harbor's TrialConfig
    trial_class: Any  # Harbor's Trial
    dropped: list[str]


def prepare_trial(*, data: dict[str, Any], execution_dir: Path, events: EventLog) -> PreparedTrial:
    """Everything before the trial, outside the native-code capture: Harbor and the agent are
    imported here because the capture's profile hook made their imports several times slower."""
    from harbor.agents.factory import AgentFactory
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
    environment = EnvironmentConfig(**runtime.get("harbor_environment", {}))
    check_engine(environment=environment)
    task = data["task"]
    if task.get("packed_task"):
        task_path = materialize_packed_task(
            packed=task["packed_task"], execution_dir=execution_dir, events=events
        )
    else:
        task_path = Path(task["task_dir"])
    agent_class = AgentFactory.get_agent_class_from_config(
        AgentConfig(**agent_reference(runtime["harbor_agent"]["name"]))
    )
    agent, dropped = agent_config(
        data=data, declared=declared_options(agent_class), uses_model=talks_to_a_model(agent_class)
    )
    events.write("agent_options", passed=sorted(agent["kwargs"]), dropped=dropped,
                 model_name=agent.get("model_name"))  # fmt: skip
    config = TrialConfig(
        task=TaskConfig(path=task_path),
        trial_name=trial_name(execution_dir=execution_dir),
        trials_dir=execution_dir,
        agent=AgentConfig(**agent),
        environment=environment,
        verifier=VerifierConfig(**verifier),
    )
    return PreparedTrial(config=config, trial_class=Trial, dropped=dropped)


async def run_trial(
    *, prepared: PreparedTrial, data: dict[str, Any], execution_dir: Path, events: EventLog
) -> dict:
    config = prepared.config
    name = config.trial_name
    events.write("trial_start", trial_name=name, task_path=str(config.task.path))
    trial = await prepared.trial_class.create(config)
    result = await trial.run()
    document = json.loads(result.model_dump_json())
    write_json(execution_dir / "harbor-result.json", document)
    events.write("trial_end", trial_name=name, exception=document.get("exception_info"))
    outcome = _outcome(document=document, data=data, trial_dir=execution_dir / name)
    outcome["agent_options_dropped"] = prepared.dropped
    if outcome["verification"]["diagnostics"].get("phase") == "environment_setup":
        # Harbor keeps a failed build's output only inside the exception's message.
        exception = document["exception_info"]
        (execution_dir / ENVIRONMENT_LOG).write_text(
            f"{exception['exception_type']}\n{exception['exception_message']}\n", "utf-8"
        )
        outcome["verification"]["diagnostics"]["log"] = ENVIRONMENT_LOG
    return outcome


def _outcome(*, document: dict[str, Any], data: dict[str, Any], trial_dir: Path) -> dict:
    timings = [document.get("verifier")] + [
        step.get("verifier") for step in document.get("step_results") or []
    ]
    executed = any(isinstance(t, dict) and t.get("started_at") for t in timings)
    verification = harbor_verification(
        document=document,
        components=data["config"].get("harbor_reward_mode") == "skill2env_components",
    )
    tooling = trial_dir / "agent" / "offline-tooling.json"
    if (
        data["config"]["harbor_agent"]["name"] == OFFLINE_AGENT
        and tooling.is_file()
        and json.loads(tooling.read_text("utf-8")).get("return_code") != 0
    ):
        raise RuntimeError("Offline agent tooling failed to install")
    metadata = (document.get("agent_result") or {}).get("metadata") or {}
    episodes = metadata.get("n_episodes")
    return {
        "verification": verification,
        "verifier_executed": executed,
        "done": document.get("exception_info") is None,
        # Terminus counts its model turns as episodes; an agent that reports none made none.
        "turns": episodes if isinstance(episodes, int) and not isinstance(episodes, bool) else 0,
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
    try:
        prepared = prepare_trial(data=data, execution_dir=directory, events=events)
        capture.start()
        try:
            outcome = asyncio.run(
                run_trial(prepared=prepared, data=data, execution_dir=directory, events=events)
            )
        finally:
            capture.stop()
    except ReviewRuleError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except EngineUnavailable as exc:
        return solver_unavailable_exit(
            events=events, execution_dir=directory, exc=exc, what="Container engine"
        )
    except Exception as exc:
        outcome = error_outcome(events=events, exc=exc, turns=0)
    try:
        capture.write(directory)
    except Exception as exc:
        outcome = error_outcome(events=events, exc=exc, turns=0)
    write_json(directory / "attempt.json", outcome)
    shutil.rmtree(directory / "__pycache__", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
