"""Fixtures for review production: a MarinSkyRL-shaped git checkout built from the installed
``skyrl_gym`` package and prepared gsm8k Parquet rows (``reviews.production.examples.marinskyrl``,
shared with ``make demo``), the test model server and a config writer."""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas.artifact.catalog_artifact import write_document
from reviews.production.examples.marinskyrl import (  # noqa: F401 - shared with the demo and the scripts
    DATASET_REVISION,
    GIT_ENV,
    REPOSITORY,
    SOURCE_ID,
    VERIFYIT_PIN,
    build_checkout,
    commit_all,
    git,
    gsm8k_blocks,
    gsm8k_rows,
    write_parquet,
)
from reviews.production.runtime.hosts import BYTECODE_CACHE_ENV
from tests.model_server import ModelServer
from tests.production.review_model import ReviewModel

API_KEY_ENV = "ATLAS_TEST_MODEL_KEY"
API_KEY = "sk-test-secret-7f3a9c1e5b"


def run_folder(tmp_path_factory) -> Path:
    """The test run's own temporary folder, shared by its xdist workers (each worker's base
    folder is inside it): what is built there once serves every worker."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def exclusive(lock_path: Path) -> Iterator[None]:
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session")
def session_checkout(tmp_path_factory) -> Path:
    """Built once per test run: the first worker to need it builds it, the others wait."""
    folder = run_folder(tmp_path_factory) / "native"
    folder.mkdir(exist_ok=True)
    target, built = folder / "MarinSkyRL", folder / "built"
    with exclusive(folder / "lock"):
        if not built.exists():
            shutil.rmtree(target, ignore_errors=True)  # a worker that died half-way
            build_checkout(target)
            built.touch()
    return target


@pytest.fixture
def checkout(session_checkout, tmp_path) -> Path:
    """A private copy (with its git history) that a test may edit."""
    target = tmp_path / "MarinSkyRL"
    shutil.copytree(session_checkout, target, symlinks=True)
    return target


@pytest.fixture(scope="session")
def bytecode_cache(tmp_path_factory) -> Path:
    """One per test run: every worker's native interpreters compile numpy and pandas once
    (Python writes each cached file atomically, so workers may share it)."""
    cache = run_folder(tmp_path_factory) / "native-bytecode"
    cache.mkdir(exist_ok=True)
    return cache


@pytest.fixture(autouse=True)
def _native_bytecode_cache(bytecode_cache, monkeypatch) -> None:
    """Native interpreters compile into the session's cache, never the user's."""
    monkeypatch.setenv(BYTECODE_CACHE_ENV, str(bytecode_cache))


def pinned_catalog(tmp_path: Path, packaged_rows: list[dict], commit: str) -> Path:
    """The packaged catalog with the gsm8k row pinning the example checkout at ``commit`` with
    verifyit off, as these reviews run (``reviews.identity``: a review is current only where
    what it executed is what the row pins) — what the registry would pin for this checkout."""
    rows = copy.deepcopy(packaged_rows)
    row = next(r for r in rows if r["id"] == SOURCE_ID)
    row["grading_scope"] = {**row["grading_scope"], "mode": "legacy", "marinskyrl_revision": commit}
    path = tmp_path / f"catalog-pinned-{commit[:12]}.json"
    write_document(rows=rows, output=path)
    return path


@pytest.fixture
def packaged_catalog(tmp_path, packaged_rows, checkout) -> Path:
    """The packaged catalog with gsm8k pinning this checkout's commit, where the reviews run."""
    return pinned_catalog(tmp_path, packaged_rows, git(checkout, "rev-parse", "HEAD").strip())


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
    return config_writer(folder=tmp_path, checkout=checkout, base_url=model_server.base_url)


def config_writer(*, folder: Path, checkout: Path, base_url: str) -> ConfigWriter:
    """``write_config`` for a fixture of any scope: configs (and inputs) written into ``folder``,
    reviewing with ``checkout`` against the model server at ``base_url``."""

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
            tasks_path = write_parquet(folder / "data" / "train.parquet", gsm8k_rows(rows))
        config = {
            "model": {
                "name": "test/solver-judge",
                "base_url": base_url,
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
        path = folder / name
        path.write_text(json.dumps(config, indent=2), encoding="utf-8")
        return path

    return write
