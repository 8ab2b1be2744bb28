"""Fixtures for review production: a MarinSkyRL-shaped git checkout built from the installed
``skyrl_gym`` package, prepared gsm8k Parquet rows, the test model server and a config writer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import skyrl_gym

from tests.model_server import ModelServer
from tests.production.review_model import ReviewModel

VERIFYIT_PIN = "0123456789abcdef0123456789abcdef01234567"
SOURCE_ID = "MarinSkyRL:gsm8k"
REPOSITORY = "openai/gsm8k"
DATASET_REVISION = "740312add88f781978c0658806c59bc2815b9866"
API_KEY_ENV = "ATLAS_TEST_MODEL_KEY"
API_KEY = "sk-test-secret-7f3a9c1e5b"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Atlas Tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "Atlas Tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
}


def git(checkout: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(checkout), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    ).stdout


def commit_all(checkout: Path, message: str) -> str:
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", message)
    return git(checkout, "rev-parse", "HEAD").strip()


def build_checkout(root: Path) -> Path:
    """MarinSkyRL's layout: the Gym library (the real installed package), the trajectory runners
    and the source registry, committed in a fresh git repository."""
    package = Path(skyrl_gym.__file__).resolve().parent
    shutil.copytree(
        package, root / "skyrl-gym" / "skyrl_gym", ignore=shutil.ignore_patterns("__pycache__")
    )
    (root / "skyrl-gym" / "pyproject.toml").write_text(
        '[project]\nname = "skyrl-gym"\nversion = "0.4.0"\ndependencies = [\n'
        f'    "verifyit @ git+https://github.com/marin-community/verifyit@{VERIFYIT_PIN}",\n]\n',
        encoding="utf-8",
    )
    runners = root / "skyrl-train" / "skyrl_train" / "trajectory_runners"
    runners.mkdir(parents=True)
    (root / "skyrl-train" / "skyrl_train" / "__init__.py").write_text("", encoding="utf-8")
    (runners / "__init__.py").write_text(
        '"""Trajectory runners."""\n\nRUNNER_NAMES = ("single_turn",)\n', encoding="utf-8"
    )
    (root / "marinskyrl").mkdir()
    (root / "marinskyrl" / "__init__.py").write_text("", encoding="utf-8")
    (root / "marinskyrl" / "registry.py").write_text(
        f'SOURCES = {{"{SOURCE_ID}": "gsm8k"}}\n', encoding="utf-8"
    )
    # The registry of sources and their transforms, a file the native attestation compares.
    (root / "infra" / "rl_data").mkdir(parents=True)
    (root / "infra" / "__init__.py").write_text("", encoding="utf-8")
    (root / "infra" / "rl_data" / "__init__.py").write_text("", encoding="utf-8")
    (root / "infra" / "rl_data" / "sources.py").write_text(
        f'GSM8K_DATASET = "{REPOSITORY}"\nSOURCES = {{"gsm8k": GSM8K_DATASET}}\n', encoding="utf-8"
    )
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "MarinSkyRL test checkout")
    return root


@pytest.fixture(scope="session")
def session_checkout(tmp_path_factory) -> Path:
    return build_checkout(tmp_path_factory.mktemp("native") / "MarinSkyRL")


@pytest.fixture
def checkout(session_checkout, tmp_path) -> Path:
    """A private copy (with its git history) that a test may edit."""
    target = tmp_path / "MarinSkyRL"
    shutil.copytree(session_checkout, target, symlinks=True)
    return target


def gsm8k_rows(count: int, *, offset: int = 0) -> list[dict[str, Any]]:
    """Prepared rows in the shape SkyRL's gsm8k environment expects."""
    rows = []
    for index in range(offset, offset + count):
        a, b = 3 * index + 1, 2 * index + 5
        rows.append(
            {
                "data_source": REPOSITORY,
                "prompt": [
                    {
                        "role": "user",
                        "content": f"Compute {a} + {b}. Let's think step by step and output "
                        'the final answer after "####".',
                    }
                ],
                "env_class": "gsm8k",
                "reward_spec": {"method": "rule", "ground_truth": str(a + b)},
                "extra_info": {"split": "train", "index": index},
            }
        )
    return rows


def gsm8k_blocks(*, checkout: Path, tasks: Path, **runtime: Any) -> dict[str, dict[str, Any]]:
    """The ``runtime`` and ``source`` blocks of a config for the real gsm8k route."""
    return {
        "runtime": {
            "marinskyrl_checkout": str(checkout),
            "gym_python": sys.executable,
            "max_turns": 1,
            "gym_config": {"gsm8k": {"verifyit_enabled": False}},
            **runtime,
        },
        "source": {
            "source_id": SOURCE_ID,
            "repository": REPOSITORY,
            "revision": DATASET_REVISION,
            "tasks_path": str(tasks),
            "format": "skyrl_prepared",
        },
    }


def write_parquet(path: Path, rows: list[dict[str, Any]], *, row_group_size: int = 4) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=row_group_size)
    return path


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer(default=ReviewModel()) as server:
        yield server


@pytest.fixture
def api_key(monkeypatch) -> str:
    monkeypatch.setenv(API_KEY_ENV, API_KEY)
    return API_KEY


ConfigWriter = Callable[..., Path]


@pytest.fixture
def write_config(tmp_path, checkout, model_server, api_key) -> ConfigWriter:
    """Writes a config (and, unless given, a 6-row Parquet input) and returns its path."""

    def write(
        *,
        rows: int = 6,
        tasks_path: Path | None = None,
        source: dict[str, Any] | None = None,
        runtime: dict[str, Any] | None = None,
        model: dict[str, Any] | None = None,
        name: str = "review-config.json",
    ) -> Path:
        if tasks_path is None:
            tasks_path = write_parquet(tmp_path / "data" / "train.parquet", gsm8k_rows(rows))
        config = {
            "model": {
                "name": "test/solver-judge",
                "base_url": model_server.base_url,
                "timeout": 10,
                "revision": "a" * 40,
                "api_key_env": API_KEY_ENV,
                "parameters": {"temperature": 0.0, "max_tokens": 512},
                # The judges' answer budget: a coalescer call for 7 syntheses fits it.
                "review_parameters": {"temperature": 0.0, "max_tokens": 4096},
                "retry_backoff_seconds": 0.01,
                **(model or {}),
            },
            "runtime": {
                "marinskyrl_checkout": str(checkout),
                "gym_python": sys.executable,
                "max_turns": 2,
                "agent_timeout": 60,
                "worker_timeout": 120,
                "gym_config": {"gsm8k": {"verifyit_enabled": False}},
                **(runtime or {}),
            },
            "source": {
                "source_id": SOURCE_ID,
                "repository": REPOSITORY,
                "revision": DATASET_REVISION,
                "tasks_path": str(tasks_path),
                "format": "skyrl_prepared",
                **(source or {}),
            },
        }
        path = tmp_path / name
        path.write_text(json.dumps(config, indent=2), encoding="utf-8")
        return path

    return write
