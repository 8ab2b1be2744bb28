"""Difficulty execution: the task loader, the worker launcher and the MarinSkyRL code-identity
check — the three roots whose definitions (with everything they reference and import) the
execution-implementation attestation compares between the original run's
copy of this file and the one executing a resume. Keep them here, in this one file, so that
edits elsewhere (quality-review code, reports, the command) never read as changed execution.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from reviews.production.runtime.hosts import AttemptHosts
from reviews.production.runtime.identity import (
    MARINSKYRL_TREES,
    checkout_identity,
    harbor_identity,
    sha256_file,
    wing_hashes,
)
from reviews.production.runtime.launcher import WorkerTimeout, attempt_path, run_attempt
from reviews.production.runtime.rundir import read_json, write_json_file
from reviews.production.runtime.sampling import Sample, sample_tasks
from reviews.production.runtime.tasks import HARBOR_ROUTE, Task, read_tasks

ROOTS = ("load_sample", "launch_attempt", "code_identity")
ARMS_DIR = "difficulty"
PACKAGE_DIR = Path(__file__).resolve().parent
COMMAND_MODULE = PACKAGE_DIR.parent / "management" / "commands" / "make_difficulty.py"
# The rooms of make_review's wing that make_difficulty runs: its runtime, the run-directory
# contract and the native workers.
RUNTIME_ROOMS = ("format", "runtime", "workers")


def load_sample(*, source: dict[str, Any], n: int, seed: int) -> Sample:
    """The one seeded sample every role attempts (make_review's reservoir over the source)."""
    return sample_tasks(candidates=read_tasks(source=source), n=n, seed=seed)


def arm_folder(*, run_dir: Path, size: str) -> Path:
    return run_dir / ARMS_DIR / size


def launch_attempt(
    *,
    run_dir: Path,
    root: Path,
    size: str,
    number: int,
    task: Task,
    model: dict[str, Any],
    runtime: dict[str, Any],
    stop: threading.Event,
    grace_seconds: float,
    hosts: AttemptHosts | None = None,
) -> tuple[dict[str, Any], bool]:
    """The role's attempt at sampled task ``number``: the saved one when it finished, else one
    native worker run under ``difficulty/<size>/`` (forked from the run's warm host for its
    route when ``hosts`` has one, else in a fresh interpreter, as the launcher decides).
    Returns the attempt with its ``execution_path`` relative to ``root`` (the run directory, or
    the original run a follow-up is filed in) and whether a worker ran."""
    arm = arm_folder(run_dir=run_dir, size=size)
    attempt = read_json(attempt_path(run_dir=arm, number=number))
    ran = attempt is None
    if attempt is None:
        try:
            attempt = run_attempt(
                run_dir=arm,
                number=number,
                task=task,
                model=model,
                runtime=runtime,
                stop=stop,
                grace_seconds=grace_seconds,
                hosts=hosts,
            )
        except WorkerTimeout as timeout:
            attempt = timed_out_attempt(arm=arm, number=number, timeout=timeout)
    prefix = arm.relative_to(root).as_posix()
    return {**attempt, "execution_path": f"{prefix}/{attempt['execution_path']}"}, ran


def timed_out_attempt(*, arm: Path, number: int, timeout: WorkerTimeout) -> dict[str, Any]:
    """A worker stopped at ``worker_timeout`` is this attempt's outcome under the stated
    settings, not a failure of the run: an ``error`` verification (unverified) with stop reason
    ``timeout``, saved like a finished attempt so a resume keeps it."""
    execution = timeout.execution
    trace = execution / "verifier-trace.jsonl"
    attempt = {
        "verification": {
            "status": "error",
            "score": None,
            "passed": None,
            "reason": str(timeout),
            "diagnostics": {"exception_type": "WorkerTimeout"},
        },
        "verifier_executed": trace.is_file() and '"verify_start"' in trace.read_text("utf-8"),
        "done": False,
        "turns": len(list((execution / "solver").glob("turn-*"))),
        "stop_reason": "timeout",
        "execution_path": execution.relative_to(arm).as_posix(),
    }
    write_json_file(execution / "attempt.json", attempt)
    write_json_file(attempt_path(run_dir=arm, number=number), attempt)
    return attempt


def code_identity(*, runtime: dict[str, Any], tasks: tuple[Task, ...]) -> dict[str, Any]:
    """The native checkouts (commit, dirty state, Python tree hash) the attempts execute, and
    whole-file hashes of the production code that runs them."""
    identity: dict[str, Any] = {
        "marinskyrl": checkout_identity(
            checkout=Path(runtime["marinskyrl_checkout"]), trees=MARINSKYRL_TREES
        ),
        "harbor": None,
        "implementation": implementation_hashes(),
    }
    if any(task.route == HARBOR_ROUTE for task in tasks):
        identity["harbor"] = harbor_identity(runtime=runtime)
    return identity


def implementation_hashes() -> dict[str, str]:
    """Whole-file SHA-256 of make_difficulty, its package and the shared runtime."""
    hashes = {"make_difficulty.py": sha256_file(COMMAND_MODULE)}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if "__pycache__" not in path.parts:
            relative = path.relative_to(PACKAGE_DIR).as_posix()
            hashes[f"difficulty_production/{relative}"] = sha256_file(path)
    return {**hashes, **wing_hashes(rooms=RUNTIME_ROOMS)}
