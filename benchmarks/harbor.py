"""Benchmark: the Harbor route, real trials in a real Docker engine (engine start excluded: the
engine runs throughout).

- floor: ``harbor trial start`` of one oracle task with the no-network overlay — the bare CLI,
  a fresh process as a user runs it; median of ``--repeats`` runs.
- the route's attempt: the same task through make_review's launcher and the project's Harbor
  worker (``run_attempt`` with the run's attempt hosts, as make_review runs it); median of the
  same number of runs; reported against the floor (goal ≤ 1.25×: the route adds little to a
  trial).
- throughput: ``make_review`` over ``--tasks`` oracle tasks (three judges each from a local
  scripted model server) with ``--jobs 4`` against ``--jobs 1`` in tasks per minute (goal ≥ 1.5×
  on 2 cores: the trials' waits overlap).

Needs the machinery (``scripts/harbor/machinery.sh up DIR``, then
``ATLAS_HARBOR_MACHINERY=DIR/machinery.json``); without it each row says why. Run:
``DJANGO_SETTINGS_MODULE=config.settings_test .venv/bin/python benchmarks/harbor.py``
(no database is used).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.report import Row, emit  # noqa: E402

BENCHMARK = "harbor"
FIGURES = ("attempt through the Harbor route", "make_review throughput at --jobs 4")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=8)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings_test")
    import django

    django.setup()
    from tests.harbor.machinery import load, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        for figure in FIGURES:
            emit(row=Row(benchmark=BENCHMARK, figure=figure, value=None, unit="", note=reason))
        return
    machinery = load()
    os.environ.update(DOCKER_HOST=machinery.docker_host, DOCKER_CONFIG=machinery.docker_config)
    with tempfile.TemporaryDirectory(prefix="atlas-bench-harbor-") as scratch:
        root = Path(scratch)
        measure_attempts(machinery=machinery, root=root, repeats=args.repeats)
        measure_throughput(machinery=machinery, root=root, tasks=args.tasks)


def write_tasks(*, machinery, folder: Path, count: int) -> Path:
    from tests.harbor.tasks import task_files, write_task

    for index in range(count):
        write_task(folder / f"add-{index:02d}", task_files(image=machinery.images["tiny"]))
    return folder


def measure_attempts(*, machinery, root: Path, repeats: int) -> None:
    from reviews.production.runtime.hosts import AttemptHosts, native_bytecode_cache
    from reviews.production.runtime.launcher import run_attempt
    from reviews.production.runtime.tasks import read_tasks

    tasks = write_tasks(machinery=machinery, folder=root / "one", count=1)
    bare_config = root / "bare.json"
    bare_config.write_text(json.dumps({
        "task": {"path": str(tasks / "add-00")},
        "environment": {"extra_docker_compose": [machinery.no_network_overlay]},
    }))  # fmt: skip
    harbor = Path(machinery.harbor_python).parent / "harbor"
    bare = []
    for run in range(repeats):
        started = time.perf_counter()
        subprocess.run(
            [str(harbor), "trial", "start", "-a", "oracle", "-c", str(bare_config),
             "--trials-dir", str(root / f"bare-{run}")],
            check=True, capture_output=True,
        )  # fmt: skip
        bare.append(time.perf_counter() - started)
    runtime = config(machinery=machinery, root=root)["runtime"]
    source = {"format": "harbor_directory", "tasks_path": str(tasks), "repository": "bench",
              "revision": None, "source_id": "bench:harbor"}  # fmt: skip
    (task,) = list(read_tasks(source=source))
    routed = []
    hosts = AttemptHosts(cache_dir=native_bytecode_cache())
    try:
        for run in range(repeats):
            started = time.perf_counter()
            attempt = run_attempt(run_dir=root / "route", number=run, task=task,
                                  model=config(machinery=machinery, root=root)["model"],
                                  runtime=runtime, stop=threading.Event(), hosts=hosts)  # fmt: skip
            routed.append(time.perf_counter() - started)
            if attempt["verification"].get("passed") is not True:
                raise SystemExit(f"the routed attempt was not verified: {attempt}")
    finally:
        hosts.close()
    emit(row=Row(benchmark=BENCHMARK, figure=FIGURES[0], value=statistics.median(routed),
                 unit="s", baseline="bare `harbor trial start`",
                 baseline_value=statistics.median(bare), goal_operator="<=", goal=1.25,
                 note=f"median of {repeats}"))  # fmt: skip


def config(*, machinery, root: Path, base_url: str = "http://127.0.0.1:9/v1") -> dict:
    from reviews.production.examples.marinskyrl import build_checkout

    checkout = root / "MarinSkyRL"
    if not checkout.exists():
        build_checkout(checkout)
    return {
        "model": {"name": "bench/judge", "base_url": base_url, "timeout": 30,
                  "revision": "a" * 40, "parameters": {"temperature": 0.0, "max_tokens": 512},
                  "review_parameters": {"temperature": 0.0, "max_tokens": 4096}},
        "runtime": {"marinskyrl_checkout": str(checkout), "gym_python": sys.executable,
                    "harbor_python": machinery.harbor_python, "max_turns": 50,
                    "agent_timeout": 300, "worker_timeout": 900,
                    "harbor_agent": {"name": "oracle", "kwargs": {}},
                    "harbor_environment": {"extra_docker_compose": [machinery.no_network_overlay]},
                    "harbor_verifier": {}, "harbor_reward_mode": "scalar"},
    }  # fmt: skip


def measure_throughput(*, machinery, root: Path, tasks: int) -> None:
    from django.core.management import call_command

    from tests.model_server import ModelServer
    from tests.production.review_model import ReviewModel

    folder = write_tasks(machinery=machinery, folder=root / "many", count=tasks)
    rates = {}
    with ModelServer(default=ReviewModel()) as server:
        for jobs in (1, 4):
            document = config(machinery=machinery, root=root, base_url=server.base_url)
            document["source"] = {"source_id": "bench:harbor", "repository": "bench",
                                  "revision": None, "tasks_path": str(folder),
                                  "format": "harbor_directory"}  # fmt: skip
            path = root / f"review-{jobs}.json"
            path.write_text(json.dumps(document))
            started = time.perf_counter()
            call_command("make_review", "--config", str(path), "--n", str(tasks),
                         "--output", str(root / f"run-jobs-{jobs}"), "--jobs", str(jobs),
                         stdout=io.StringIO(), stderr=io.StringIO())  # fmt: skip
            rates[jobs] = tasks / (time.perf_counter() - started) * 60
    emit(row=Row(benchmark=BENCHMARK, figure=FIGURES[1], value=rates[4], unit="tasks/min",
                 baseline="--jobs 1", baseline_value=rates[1], goal_operator=">=", goal=1.5,
                 note=f"{tasks} oracle tasks, 3 judges each"))  # fmt: skip


if __name__ == "__main__":
    main()
