"""The native worker launcher.

A worker runs as ``<python> <script> <input.json> <execution dir>`` in its own process group, so a
Ctrl-C at the terminal reaches make_review only and the launcher decides how the worker stops:
SIGINT to the group, a grace period, then SIGKILL. Every attempt gets a fresh ``execution-NNN``
directory, so a failed attempt is never overwritten.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviews.production.runtime.concurrency import tracked_group
from reviews.production.runtime.config import load_config
from reviews.production.runtime.errors import CHECKOUT_REQUIRED, ReviewProductionError
from reviews.production.runtime.hosts import (
    CONTRACT_WARM_MODULES,
    GYM_WARM_MODULES,
    AttemptHosts,
    HostSpec,
    hosted,
    native_bytecode_cache,
)
from reviews.production.runtime.rundir import task_folder, write_json_file
from reviews.production.runtime.tasks import GYM_ROUTE, HARBOR_ROUTE, Task, expected_routes

# The native workers are a room of the wing beside this one.
WORKERS_DIR = Path(__file__).resolve().parent.parent / "workers"
GYM_WORKER = str(WORKERS_DIR / "gym_worker.py")
GRACE_SECONDS = 15.0
POLL_SECONDS = 0.05


class Interrupted(KeyboardInterrupt):
    """The run was interrupted; the worker was stopped and the task stays unfinished."""


class WorkerTimeout(ReviewProductionError):
    """The worker exceeded ``worker_timeout`` and was stopped; ``execution`` keeps what it saved
    (make_review retries the task on resume; make_difficulty records it as the attempt)."""

    def __init__(self, message: str, *, execution: Path) -> None:
        super().__init__(message)
        self.execution = execution


class SolverUnavailable(ReviewProductionError):
    """The solver could not be reached (refused, reset, timed out, a retryable status after every
    retry): the worker made no finished attempt, so the task stays unfinished (no
    ``tasks/NNNN/attempt.json``), no judge assesses it and a resume retries it."""


# The worker's exit status for "solver unavailable" (worker_support.SOLVER_UNAVAILABLE_EXIT).
SOLVER_UNAVAILABLE_EXIT = 75
SOLVER_UNAVAILABLE_FILE = "solver-unavailable.json"
# How every attempt that did not finish ends its message: the task stays for ``--resume``.
RESUME_RETRIES = "Resume retries this unfinished task."


@dataclass(frozen=True)
class WorkerRoute:
    python: str
    script: str
    pythonpath: tuple[str, ...]


def worker_route(*, route: str, runtime: dict[str, Any]) -> WorkerRoute:
    """Configured routes first (they may replace a built-in), then the Gym and Harbor workers."""
    configured = runtime.get("workers", {}).get(route)
    if configured is not None:
        return WorkerRoute(
            python=configured["python"],
            script=configured["script"],
            pythonpath=tuple(configured["pythonpath"]),
        )
    checkout = runtime.get("marinskyrl_checkout")
    if route in (GYM_ROUTE, HARBOR_ROUTE) and not checkout:
        raise ReviewProductionError(CHECKOUT_REQUIRED)
    gym_paths = (f"{checkout}/skyrl-gym", f"{checkout}/skyrl-train", str(checkout))
    if route == GYM_ROUTE:
        if not runtime.get("gym_python"):
            raise ReviewProductionError("runtime.gym_python is required for Gym tasks")
        return WorkerRoute(runtime["gym_python"], GYM_WORKER, gym_paths)
    if route == HARBOR_ROUTE:
        if not runtime.get("harbor_python"):
            raise ReviewProductionError("runtime.harbor_python is required for Harbor tasks")
        # A Harbor checkout goes first on the path; a registry install is the interpreter's own.
        checkout_src = (
            (f"{runtime['harbor_checkout']}/src",) if runtime.get("harbor_checkout") else ()
        )
        return WorkerRoute(
            runtime["harbor_python"],
            str(WORKERS_DIR / "harbor_worker.py"),
            (*checkout_src, *gym_paths),
        )
    raise ReviewProductionError(f"No native worker for route {route}")


def host_spec(*, route: WorkerRoute) -> HostSpec:
    """The route's attempt host: the built-in Gym worker's warms up with the Gym library, any
    other with the standard library's JSON and HTTP client."""
    return HostSpec(
        python=route.python,
        script=route.script,
        pythonpath=route.pythonpath,
        warm=GYM_WARM_MODULES if route.script == GYM_WORKER else CONTRACT_WARM_MODULES,
    )


def prime_native_bytecode() -> None:
    """At install (``make install``): what a warm Gym host imports (pandas, numpy, pydantic and
    the rest of ``GYM_WARM_MODULES``), compiled by this interpreter into the native bytecode
    cache, as a run's host would compile it. The first run's host then starts in ~0.8 s of CPU
    instead of ~2.7 s; a route's other interpreter or checkout still compiles its own files on
    its first run."""
    hosts = AttemptHosts(cache_dir=native_bytecode_cache())
    try:
        hosts.host_for(HostSpec(python=sys.executable, script=GYM_WORKER, pythonpath=(),
                                warm=GYM_WARM_MODULES))  # fmt: skip
    except (ReviewProductionError, OSError):
        pass  # a cache left cold is filled by the first run, whose host reports its own failure
    finally:
        hosts.close()


def start_hosts(*, hosts: AttemptHosts, tasks: Iterable[Task], runtime: dict[str, Any]) -> None:
    """Start the warm hosts of these tasks' routes in the background (while the run computes
    its identity), so its first attempts do not each wait for a host's start-up. A route the
    runtime cannot run is left for its attempts to refuse, as they would anyway."""
    start_routes(hosts=hosts, routes={task.route for task in tasks}, runtime=runtime)


def start_routes(*, hosts: AttemptHosts, routes: Iterable[str], runtime: dict[str, Any]) -> None:
    """``start_hosts`` for routes named before any task is read (``tasks.expected_routes``)."""
    for name in sorted(set(routes)):
        try:
            route = worker_route(route=name, runtime=runtime)
        except ReviewProductionError:
            continue
        hosts.start(host_spec(route=route))


def start_configured_routes(*, hosts: AttemptHosts, config: Path) -> None:
    """``start_routes`` for the route the configured source's format implies, from the
    configuration file alone, before anything else of a run is loaded. A configuration the run
    will refuse starts nothing: the run reports it, in its own order."""
    try:
        loaded = load_config(path=config)
    except (ReviewProductionError, OSError, ValueError):
        return
    start_routes(hosts=hosts, routes=expected_routes(source=loaded.source), runtime=loaded.runtime)


def attempt_path(*, run_dir: Path, number: int) -> Path:
    return task_folder(run_dir=run_dir, number=number) / "attempt.json"


def run_attempt(
    *,
    run_dir: Path,
    number: int,
    task: Task,
    model: dict[str, Any],
    runtime: dict[str, Any],
    stop: threading.Event,
    grace_seconds: float = GRACE_SECONDS,
    hosts: AttemptHosts | None = None,
) -> dict[str, Any]:
    """Run the task's worker once in a new ``execution-NNN`` and mark the task done: forked
    from the run's warm host for the route when ``hosts`` has one, else in a fresh
    interpreter."""
    route = worker_route(route=task.route, runtime=runtime)
    folder = task_folder(run_dir=run_dir, number=number)
    folder.mkdir(parents=True, exist_ok=True)
    existing = [p for p in folder.iterdir() if p.is_dir() and p.name.startswith("execution-")]
    execution = folder / f"execution-{len(existing):03d}"
    execution.mkdir()
    record = task.record()
    if task.task_dir:
        # Symlinks dereferenced: the attempt's evidence holds the task files themselves.
        shutil.copytree(task.task_dir, execution / "task", symlinks=False)
        record["task_dir"] = str(execution / "task")
    write_json_file(execution / "input.json", {"task": record, "model": model, "config": runtime})
    stderr_path = execution / "worker.stderr"
    (execution / "worker.stdout").touch()
    spec = host_spec(route=route)
    with open(stderr_path, "ab") as stderr:
        try:
            with hosted(hosts=hosts, spec=spec, stderr=stderr) as (host, _warm):
                process = host.start(
                    input_path=execution / "input.json",
                    execution=execution,
                    stdout=execution / "worker.stdout",
                    stderr=stderr_path,
                )
                with tracked_group(process.pid):  # a second Ctrl-C kills it (concurrency.py)
                    returncode = _wait(
                        process=process,
                        timeout=float(runtime["worker_timeout"]),
                        stop=stop,
                        grace_seconds=grace_seconds,
                        stderr_path=stderr_path,
                    )
        except OSError as exc:
            raise ReviewProductionError(
                f"Cannot start native worker {route.python}: {exc}"
            ) from None
    attempt_file = execution / "attempt.json"
    if returncode == SOLVER_UNAVAILABLE_EXIT:
        raise SolverUnavailable(_unavailable_message(execution=execution, run_dir=run_dir))
    failed = f"Native worker failed; inspect {stderr_path}. {RESUME_RETRIES}"
    if returncode != 0 or not attempt_file.is_file():
        raise ReviewProductionError(failed)
    try:
        attempt = json.loads(attempt_file.read_text(encoding="utf-8"))
    except ValueError:
        raise ReviewProductionError(failed) from None
    attempt["execution_path"] = execution.relative_to(run_dir).as_posix()
    write_json_file(attempt_file, attempt)
    # Written last: its existence marks the task's attempt as done.
    write_json_file(attempt_path(run_dir=run_dir, number=number), attempt)
    return attempt


def _unavailable_message(*, execution: Path, run_dir: Path) -> str:
    try:
        record = json.loads((execution / SOLVER_UNAVAILABLE_FILE).read_text("utf-8"))
        reason = record["reason"]
    except (OSError, ValueError, KeyError, TypeError):
        record, reason = {}, "no reason recorded"
    # The worker names what was down: the solver endpoint, or a Harbor task's container engine.
    what = record.get("unavailable") if isinstance(record.get("unavailable"), str) else "Solver"
    where = execution.relative_to(run_dir).as_posix()
    return f"{what} unavailable ({reason}); {where} is not a finished attempt. {RESUME_RETRIES}"


def _wait(
    *,
    process: Any,
    timeout: float,
    stop: threading.Event,
    grace_seconds: float,
    stderr_path: Path,
) -> int:
    """Block on the worker's exit (no polling delay on the common path) while a watcher thread
    enforces the timeout and the run's stop signal."""
    reason: list[str] = []
    exited = threading.Event()

    def watch() -> None:
        deadline = time.monotonic() + timeout
        while not exited.wait(POLL_SECONDS):
            if stop.is_set() or time.monotonic() >= deadline:
                reason.append("interrupted" if stop.is_set() else "timeout")
                stop_group(process=process, grace_seconds=grace_seconds)
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        returncode = process.wait()
    except KeyboardInterrupt:
        exited.set()
        if process.poll() is None:
            stop_group(process=process, grace_seconds=grace_seconds)
        raise
    exited.set()
    watcher.join()
    if reason == ["interrupted"]:
        raise Interrupted()
    if reason == ["timeout"]:
        raise WorkerTimeout(
            f"Native worker timed out after {timeout:g} s; inspect {stderr_path}. {RESUME_RETRIES}",
            execution=stderr_path.parent,
        )
    return returncode


def stop_group(*, process: Any, grace_seconds: float) -> None:
    """SIGINT to the worker's process group, ``grace_seconds`` to finish, then SIGKILL."""
    try:
        os.killpg(process.pid, signal.SIGINT)
    except ProcessLookupError:
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace_seconds)
    # The whole group: a verifier's own children must not outlive the attempt.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
