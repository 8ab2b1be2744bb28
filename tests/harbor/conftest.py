"""The real-container tier: real Harbor trials in a real engine (``-m harbor`` selects it)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviews.production.examples.marinskyrl import build_checkout
from tests.harbor.machinery import Machinery, load, unavailable_reason
from tests.harbor.tasks import task_files, write_task
from tests.model_server import ModelServer
from tests.production.review_model import ReviewModel

# A Harbor source of the packaged catalog (a native Task Trove release).
SOURCE_ID = "Task Trove:AweAI-Team__CalibForge"
REPOSITORY = "open-athena/task-trove"
REVISION = "ec049a4fb541ffbe5bbccb803e826563f5718dbf"


@pytest.fixture(scope="session")
def machinery() -> Machinery:
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    return load()


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.fixture(scope="session")
def marinskyrl_checkout(tmp_path_factory) -> Path:
    """The MarinSkyRL-shaped checkout make_review requires for every native route."""
    return build_checkout(tmp_path_factory.mktemp("native") / "MarinSkyRL")


@pytest.fixture
def review_config(tmp_path, machinery, model_server, marinskyrl_checkout, monkeypatch):
    """Writes a review config (the agent, and a source: by default one harbor_directory task)
    with the engine in make_review's environment, as a reviewer exports it."""
    monkeypatch.setenv("DOCKER_HOST", machinery.docker_host)
    monkeypatch.setenv("DOCKER_CONFIG", machinery.docker_config)
    monkeypatch.setenv("ATLAS_TEST_MODEL_KEY", "sk-harbor-tier")
    model_server.default = ReviewModel()
    write_task(tmp_path / "tasks" / "add", task_files(image=machinery.images["tiny"]))

    def write(agent: str, source: dict | None = None):
        config = {
            "model": {"name": "test/solver-judge", "base_url": model_server.base_url,
                      "timeout": 30, "revision": "a" * 40, "api_key_env": "ATLAS_TEST_MODEL_KEY",
                      "parameters": {"temperature": 0.0, "max_tokens": 512},
                      "review_parameters": {"temperature": 0.0, "max_tokens": 4096},
                      "retry_backoff_seconds": 0.01},
            "runtime": {"marinskyrl_checkout": str(marinskyrl_checkout),
                        "gym_python": sys.executable, "harbor_python": machinery.harbor_python,
                        "max_turns": 50, "agent_timeout": 300, "worker_timeout": 900,
                        "harbor_agent": {"name": agent, "kwargs": {}},
                        "harbor_environment": {
                            "extra_docker_compose": [machinery.no_network_overlay]}},
            "source": source or {
                "source_id": SOURCE_ID, "repository": REPOSITORY, "revision": REVISION,
                "tasks_path": str(tmp_path / "tasks"), "format": "harbor_directory"},
        }  # fmt: skip
        path = tmp_path / f"review-{agent}.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        return path

    return write
