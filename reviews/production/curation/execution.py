"""Running cases through the native worker: the same launcher, worker script, interpreter and
checkout a review uses (``reviews.production.runtime.launcher``), with the solver's turns answered
by the replay endpoint instead of a model.

Each case gets its own task folder of the case run directory (``tasks/NNNN/execution-NNN``, the
layout ``make_review`` writes, so the publisher archives the same execution files) and a
``replay.json`` beside the execution recording every answer served.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reviews.production.curation.cases import Case, Observation
from reviews.production.curation.replay import REPLAY_MODEL, ReplayServer
from reviews.production.curation.saved_runs import SavedAttempt, SavedRun
from reviews.production.format.path_safety import resolves_inside
from reviews.production.runtime.concurrency import interruptible
from reviews.production.runtime.config import (
    RUNTIME_PATHS,
    read_config_document,
    resolve_runtime,
)
from reviews.production.runtime.errors import (
    CHECKOUT_REQUIRED,
    CurationRefused,
    ReviewProductionError,
)
from reviews.production.runtime.hosts import AttemptHosts, native_bytecode_cache
from reviews.production.runtime.identity import MARINSKYRL_TREES, checkout_identity
from reviews.production.runtime.launcher import GRACE_SECONDS, Interrupted, run_attempt
from reviews.production.runtime.rundir import task_folder, write_json_file
from reviews.production.runtime.tasks import RECORD_FIELDS, Task

REPLAY_FILE = "replay.json"
# A second Ctrl-C ends the process before it can remove its staging folder; the next run into
# the same output does (``rundir.StagedOutput``).
FORCED = "Interrupted again: stopping now; nothing was kept (the next run clears what is left)."
MAX_WORDS = 300  # of a worker's last stderr line, quoted in a refusal
# What a saved input's runtime may not bring from the machine that recorded it: where the
# interpreters and checkouts are on this one, how long this machine waits, and how it runs
# Harbor's containers (an environment config names a class to import, host folders to mount
# and Compose overlays, any of which would run or expose what the recording machine chose).
LOCAL_RUNTIME_KEYS = (
    "marinskyrl_checkout", "gym_python", "harbor_checkout", "harbor_python", "workers",
    "worker_timeout", "agent_timeout", "harbor_environment",
)  # fmt: skip
NEEDS_CONFIG = (
    "pass --config with a review config whose runtime names this machine's MarinSkyRL "
    "checkout and interpreters"
)


def local_runtime(*, config: Path | None, run: SavedRun) -> dict[str, Any]:
    """This machine's runtime: the runtime block of ``config`` (a review config on this machine),
    else the one ``run`` recorded — only for a run made here. A run fetched from an Atlas, or one
    whose recorded runtime leads into the run itself, names interpreters, scripts and checkouts
    someone else chose: running them would run the publisher's code, so ``--config`` is then
    required."""
    if config is not None:
        path, raw = read_config_document(path=config)
        return resolve_runtime(runtime=raw.get("runtime"), base=path.parent)
    if run.fetched_from is not None:
        raise CurationRefused(
            f"The run was fetched from {run.fetched_from}: its runtime names another machine's "
            f"interpreters and checkouts; {NEEDS_CONFIG}"
        )
    recorded = run.recorded_runtime
    if recorded is None:
        raise CurationRefused(f"The run records no runtime for this machine; {NEEDS_CONFIG}")
    for key, value in runtime_paths(recorded):
        if resolves_inside(value, run.root):
            raise CurationRefused(
                f"The run's runtime.{key} lies inside the run ({value}): a run made here never "
                f"carries its own interpreter, script or checkout; {NEEDS_CONFIG}"
            )
    return recorded


def runtime_paths(runtime: dict[str, Any]) -> list[tuple[str, str]]:
    """Every interpreter, script, path entry and checkout a runtime names, by its key."""
    found = [(key, runtime[key]) for key in RUNTIME_PATHS if isinstance(runtime.get(key), str)]
    workers = runtime.get("workers")
    for route, worker in (workers if isinstance(workers, dict) else {}).items():
        if not isinstance(worker, dict):
            continue
        for key in ("python", "script"):
            if isinstance(worker.get(key), str):
                found.append((f"workers.{route}.{key}", worker[key]))
        entries = worker.get("pythonpath")
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, str):
                found.append((f"workers.{route}.pythonpath", entry))
    environment = runtime.get("harbor_environment")
    overlays = environment.get("extra_docker_compose") if isinstance(environment, dict) else None
    for overlay in overlays if isinstance(overlays, list) else []:
        if isinstance(overlay, str):
            found.append(("harbor_environment.extra_docker_compose", overlay))
    return found


def case_runtime(*, saved: dict[str, Any], local: dict[str, Any]) -> dict[str, Any]:
    """The runtime the saved attempt ran with (environment config, turn cap, reward mode), with
    this machine's paths and timeouts — never a path the saved input names, even one this
    machine's runtime leaves unset — checked by the rules a review config meets."""
    runtime = {key: value for key, value in saved.items() if key not in LOCAL_RUNTIME_KEYS}
    runtime.update({key: local[key] for key in LOCAL_RUNTIME_KEYS if key in local})
    try:
        return resolve_runtime(runtime=runtime, base=Path("/"))
    except ReviewProductionError as exc:
        raise CurationRefused(
            f"The saved input's runtime is not one a review runs: {exc}"
        ) from None


def check_checkout(*, runtime: dict[str, Any], expected: dict[str, Any], purpose: str) -> dict:
    """The local checkout's identity, refused unless it is the ``expected`` one (commit, Python
    tree, dirtiness) — the code that ran is the code that runs again."""
    checkout = runtime.get("marinskyrl_checkout")
    if not checkout:
        raise CurationRefused(CHECKOUT_REQUIRED)
    identity = checkout_identity(checkout=Path(checkout), trees=MARINSKYRL_TREES)
    if identity["commit"] != expected["commit"]:
        raise CurationRefused(
            f"{purpose}: check out MarinSkyRL {expected['commit']} in {checkout} "
            f"(it is at {identity['commit']})"
        )
    if identity["python_tree_sha256"] != expected.get("python_tree_sha256"):
        raise CurationRefused(
            f"{purpose}: the Python tree of {checkout} differs from the executed one at "
            f"{expected['commit'][:12]}"
        )
    if identity["dirty"] != bool(expected.get("dirty")):
        raise CurationRefused(
            f"{purpose}: {checkout} has uncommitted changes; commit or stash them"
            if identity["dirty"]
            else f"{purpose}: the executed checkout had uncommitted changes that {checkout} lacks"
        )
    return identity


def replay_task(attempt: SavedAttempt) -> Task:
    """The saved task record as a task, its files taken from the saved execution."""
    record = dict(attempt.task)
    if record.get("task_dir"):
        saved = attempt.execution_dir / "task"
        if not saved.is_dir():
            raise CurationRefused(
                f"{attempt.execution_path}: the saved attempt's task files (task/) are missing"
            )
        # The case copies these files (links followed) into its own evidence: none may lead
        # out of the run.
        root = attempt.run_dir.resolve()
        for path in [saved, *saved.rglob("*")]:
            if not resolves_inside(path, root):
                raise CurationRefused(
                    f"{attempt.execution_path}: a saved task file leads out of the run: "
                    f"{path.relative_to(attempt.run_dir).as_posix()}"
                )
        record["task_dir"] = str(saved)
    dataset = (record.get("packed_task") or {}).get("dataset_path")
    if isinstance(dataset, str) and not Path(dataset).exists():
        raise CurationRefused(
            f"{attempt.execution_path}: its packed task dataset {dataset} is not on this machine"
        )
    try:
        return Task(**{key: value for key, value in record.items() if key in RECORD_FIELDS})
    except TypeError:
        raise CurationRefused(
            f"{attempt.execution_path}: the saved input's task record is incomplete"
        ) from None


def replay_model(*, saved: dict[str, Any], base_url: str, timeout: float) -> dict[str, Any]:
    """The solver block a worker is given: the saved parameters (the environment sees the same
    request options), the replay endpoint, no key, no retries."""
    return {
        "name": REPLAY_MODEL,
        "base_url": base_url,
        "timeout": timeout,
        "revision": None,
        "parameters": dict(saved.get("parameters") or {}),
        "api_key_env": None,
        "max_retries": 0,
        "retry_backoff_seconds": 0.0,
    }


def run_cases(
    *,
    run_dir: Path,
    cases: list[Case],
    local: dict[str, Any],
    progress: Callable[[str], None],
    command: str,
    grace_seconds: float = GRACE_SECONDS,
) -> list[Observation]:
    """Every case through its worker, in order; a worker that fails is that case's observation
    (the caller decides what it means). The first Ctrl-C stops the running worker and raises
    ``KeyboardInterrupt`` (the caller's staged output is then removed); a second ends the
    process at once."""
    stop = threading.Event()
    observations = []
    replay = ReplayServer()
    replay.start()
    # Cases fork from a warm host per route, as make_review's attempts do: a case then costs its
    # verification, not an interpreter start and the Gym library's imports.
    hosts = AttemptHosts(cache_dir=native_bytecode_cache())
    try:
        with interruptible(stop=stop, command=command, forced=FORCED):
            for case in cases:
                progress(f"case {case.number:04d}: {case.name}, expecting {case.expectation}")
                observations.append(
                    _run_case(
                        run_dir=run_dir,
                        case=case,
                        local=local,
                        replay=replay,
                        stop=stop,
                        grace_seconds=grace_seconds,
                        hosts=hosts,
                    )
                )
                progress(f"case {case.number:04d}: {observations[-1].described}")
    finally:
        hosts.close()
        replay.stop()
    return observations


def _run_case(
    *,
    run_dir: Path,
    case: Case,
    local: dict[str, Any],
    replay: ReplayServer,
    stop: threading.Event,
    grace_seconds: float,
    hosts: AttemptHosts,
) -> Observation:
    runtime = case_runtime(saved=case.attempt.config, local=local)
    if case.answer.agent is not None:
        runtime["harbor_agent"] = case.answer.agent  # a Harbor answer: the agent gives it
    base_url, token = replay.endpoint(answers=list(case.answer.responses))
    model = replay_model(
        saved=case.attempt.model, base_url=base_url, timeout=float(runtime["worker_timeout"])
    )
    folder = task_folder(run_dir=run_dir, number=case.number)
    before = _executions(folder)
    try:
        attempt = run_attempt(
            run_dir=run_dir,
            number=case.number,
            task=replay_task(case.attempt),
            model=model,
            runtime=runtime,
            stop=stop,
            grace_seconds=grace_seconds,
            hosts=hosts,
        )
    except Interrupted:
        raise
    except ReviewProductionError as exc:
        created = sorted(_executions(folder) - before)
        execution = created[-1] if created else None
        error = str(exc)
        if execution is not None:
            write_json_file(run_dir / execution / REPLAY_FILE, replay.record_of(token))
            error = worker_words(run_dir / execution) or error
        return Observation(case=case, execution_path=execution, attempt=None, worker_error=error)
    execution_path = attempt["execution_path"]
    write_json_file(run_dir / execution_path / REPLAY_FILE, replay.record_of(token))
    return Observation(case=case, execution_path=execution_path, attempt=attempt)


def worker_words(execution: Path) -> str | None:
    """The last line the worker wrote to its stderr: the reason a curator reads in the refusal
    (a refused run keeps no files to inspect)."""
    try:
        text = (execution / "worker.stderr").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return f"worker.stderr: {lines[-1][:MAX_WORDS]}" if lines else None


def _executions(folder: Path) -> set[str]:
    if not folder.is_dir():
        return set()
    root = folder.parent.parent
    return {
        os.path.relpath(path, root).replace(os.sep, "/")
        for path in folder.iterdir()
        if path.is_dir() and path.name.startswith("execution-")
    }
