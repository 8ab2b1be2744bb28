"""Benchmark: make_difficulty against a local model server with a fixed latency per call.

3 roles × n tasks at --jobs J, one solver call per attempt, through the standard-library worker
that speaks the native worker contract (one solver call, a string comparison as verifier; the
``contract`` route of ``benchmarks/make_review.py``), so the figure measures make_difficulty's own
orchestration — sampling, code identity, launching workers, the report — not a verifier's CPU.

Figure: wall time of one run. Ideal: ``3 · n · latency / J`` (every call overlapped J at a time,
nothing else costing time). Goal: ideal / wall ≥ 0.7.

Run: ``DJANGO_SETTINGS_MODULE=config.settings_test .venv/bin/python benchmarks/make_difficulty.py``
(no database is used); ``make bench`` runs it too and puts its row in the table.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import django  # noqa: E402

django.setup()

from benchmarks.make_review import CONTRACT_WORKER, ServerProcess  # noqa: E402
from benchmarks.report import emit_against_ideal  # noqa: E402
from difficulty.production.pipeline import DifficultyOptions, make_difficulty  # noqa: E402
from difficulty.registry import current_protocol  # noqa: E402
from tests.production.conftest import (  # noqa: E402
    DATASET_REVISION,
    REPOSITORY,
    SOURCE_ID,
    build_checkout,
    gsm8k_rows,
    write_parquet,
)

GOAL = 0.7  # the goal emit_against_ideal judges the ratio by


def write_inputs(root: Path, server: ServerProcess, checkout: Path, rows: int) -> Path:
    """A qualifying Atlas row, its current review's collection, tasks and the config."""
    review = root / "review" / "quality-reviews.json"
    review.parent.mkdir(parents=True)
    review.write_text(json.dumps({"subjects": [], "reviews": []}), encoding="utf-8")
    row = {
        "id": SOURCE_ID,
        "active": True,
        "quality": "good",
        "review_stale": False,
        "verifier_issues": [],
        "review_id": hashlib.sha256(review.read_bytes()).hexdigest(),
        "dataset_revision": DATASET_REVISION,
    }
    (root / "atlas-row.json").write_text(json.dumps(row), encoding="utf-8")
    worker = root / "contract_worker.py"
    worker.write_text(CONTRACT_WORKER, encoding="utf-8")
    protocol = current_protocol()
    roles = {
        role.size: {
            "base_url": server.base_url,
            "model": role.model,
            "provider": role.provider,
            "timeout": 60,
        }
        for role in protocol.roles
    }
    config = {
        "roles": roles,
        "runtime": {
            "marinskyrl_checkout": str(checkout),
            "gym_python": sys.executable,
            "max_turns": 1,
            "worker_timeout": 600,
            "gym_config": {"gsm8k": {"verifyit_enabled": False}},
            "workers": {
                "skyrl_gym": {"python": sys.executable, "script": str(worker), "pythonpath": []}
            },
        },
        "source": {
            "source_id": SOURCE_ID,
            "repository": REPOSITORY,
            "revision": DATASET_REVISION,
            "tasks_path": str(write_parquet(root / "data" / "train.parquet", gsm8k_rows(rows))),
            "format": "skyrl_prepared",
            "grading_snapshot": str(root / "atlas-row.json"),
            "current_review": str(review),
        },
    }
    path = root / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def measure(*, n: int, jobs: int, latency: float, root: Path) -> dict:
    checkout = build_checkout(root / "MarinSkyRL")
    server = ServerProcess(latency)
    try:
        config = write_inputs(root, server, checkout, rows=max(2 * n, 8))
        started = time.perf_counter()
        result = make_difficulty(
            options=DifficultyOptions(
                config=config, atlas_id=SOURCE_ID, n=n, output=root / "run", jobs=jobs
            ),
            stderr=io.StringIO(),
        )
        wall = time.perf_counter() - started
    finally:
        server.close()
    calls = len(list((root / "run").rglob("solver/turn-*")))
    ideal = calls * latency / jobs
    return {
        "roles": len(result.report["models"]),
        "n": n,
        "jobs": jobs,
        "latency_ms": latency * 1000,
        "calls": calls,
        "wall_s": round(wall, 2),
        "ideal_s": round(ideal, 2),
        "ideal_over_wall": round(ideal / wall, 2),
        "goal": GOAL,
        "met": ideal / wall >= GOAL,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--latency", type=float, default=1.0)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-make-difficulty-") as temporary:
        report = measure(
            n=options.n, jobs=options.jobs, latency=options.latency, root=Path(temporary)
        )
    print(
        f"make_difficulty 3 roles × {report['n']} tasks, --jobs {report['jobs']}, "
        f"{report['latency_ms']:.0f} ms per call: wall {report['wall_s']} s, ideal "
        f"{report['ideal_s']} s, ratio {report['ideal_over_wall']} (goal ≥ {GOAL}): "
        + ("met" if report["met"] else "not met")
    )
    print(json.dumps(report))
    # The `make bench` table: calls per second against the latency-bound ideal (the floor).
    emit_against_ideal(
        benchmark="make_difficulty",
        figure=f"model calls per second, 3 roles × n={report['n']}, jobs={report['jobs']}",
        calls=report["calls"],
        wall=report["wall_s"],
        ideal=report["ideal_s"],
    )


if __name__ == "__main__":
    main()
