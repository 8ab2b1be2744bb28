"""Running the project's Harbor worker as make_review's launcher does: the Harbor interpreter,
``harbor_worker.py <input.json> <execution dir>``, the engine named by the environment."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.harbor.machinery import Machinery

WORKER = (
    Path(__file__).resolve().parents[2] / "reviews" / "production" / "workers" / "harbor_worker.py"
)
MODEL_KEY_ENV = "ATLAS_TEST_MODEL_KEY"
# Generous: a trial builds an image and starts a container on a machine shared with others.
WORKER_DEADLINE = 900


@dataclass(frozen=True)
class Attempt:
    returncode: int
    execution: Path
    stderr: str

    @property
    def record(self) -> dict[str, Any]:
        return json.loads((self.execution / "attempt.json").read_text(encoding="utf-8"))

    @property
    def verification(self) -> dict[str, Any]:
        return self.record["verification"]

    def events(self) -> list[dict[str, Any]]:
        with (self.execution / "verifier-trace.jsonl").open(encoding="utf-8") as stream:
            return [json.loads(line) for line in stream]

    def trial_dir(self) -> Path:
        (found,) = self.execution.glob("review-*")
        return found


def runtime(
    machinery: Machinery, *, agent: str = "oracle", kwargs: dict | None = None,
    network: bool = False, **extra: Any,
) -> dict[str, Any]:  # fmt: skip
    environment = {} if network else {"extra_docker_compose": [machinery.no_network_overlay]}
    return {
        "harbor_agent": {"name": agent, "kwargs": kwargs or {}},
        "harbor_environment": environment,
        "harbor_verifier": {},
        "harbor_reward_mode": "scalar",
        "max_turns": 6,
        "agent_timeout": 300,
        **extra,
    }


def model(base_url: str = "http://127.0.0.1:9/v1") -> dict[str, Any]:
    return {
        "name": "test/terminus",
        "base_url": base_url,
        "timeout": 60,
        "api_key_env": MODEL_KEY_ENV,
        "parameters": {"temperature": 0.0, "max_tokens": 512},
    }


def run_worker(
    machinery: Machinery, *, folder: Path, task: dict[str, Any], config: dict[str, Any],
    solver: dict[str, Any] | None = None, **environment: str,
) -> Attempt:  # fmt: skip
    execution = folder / "execution-000"
    execution.mkdir(parents=True)
    data = {"task": task, "model": solver or model(), "config": config}
    (folder / "input.json").write_text(json.dumps(data), encoding="utf-8")
    done = subprocess.run(
        [machinery.harbor_python, str(WORKER), str(folder / "input.json"), str(execution)],
        cwd=execution, capture_output=True, text=True, timeout=WORKER_DEADLINE,
        env=machinery.environment(**{MODEL_KEY_ENV: "sk-harbor-tier", **environment}),
    )  # fmt: skip
    (execution / "worker.stderr").write_text(done.stderr, encoding="utf-8")
    return Attempt(returncode=done.returncode, execution=execution, stderr=done.stderr)


def harbor_task(task_dir: Path, *, task_id: str = "add") -> dict[str, Any]:
    return {"id": task_id, "route": "harbor", "task_dir": str(task_dir)}
