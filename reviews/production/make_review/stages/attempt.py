"""The attempt stage: one task's native run (or the saved one on resume, or the earlier panel
cited with ``--reuse``) and the check of the verifyit package it ran."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from reviews.production.make_review.run import Run, TaskOutcome
from reviews.production.runtime.concurrency import SlotWaitStopped
from reviews.production.runtime.config import MODEL_FREE_AGENTS
from reviews.production.runtime.grading import check_task_verifyit
from reviews.production.runtime.launcher import Interrupted, attempt_path, run_attempt
from reviews.production.runtime.rundir import read_json
from reviews.production.runtime.tasks import HARBOR_ROUTE, Task


def attempt(*, run: Run, number: int, task: Task) -> TaskOutcome:
    if run.stop.is_set():
        raise Interrupted()
    if run.reuse is not None and run.reuse.reused(task):
        # Cited, not re-judged: the earlier panel with this run's ids and paths.
        attempted, reviews, tags = run.reuse.cite(
            task=task, subject_id=run.task_subject(task)["id"], run_dir=run.output
        )
        run.progress.update(f"task {number:04d} reused")
        return TaskOutcome(number, task, attempted, reviews=reviews, tags=tags, reused=True)
    attempted = read_json(attempt_path(run_dir=run.output, number=number))
    if attempted is None:
        with _solver_slot(run=run, task=task):
            attempted = _run(run=run, number=number, task=task)
        run.solver_turns += int(attempted.get("turns") or 0)
        run.progress.update(f"task {number:04d} attempted")
    outcome = TaskOutcome(number=number, task=task, attempt=attempted)
    index = read_json(run.output / attempted["execution_path"] / "native-code-index.json")
    enabled = task.route != HARBOR_ROUTE and bool(
        run.runtime["gym_config"].get(task.env_id or "", {}).get("verifyit_enabled")
    )
    outcome.verifyit = check_task_verifyit(
        task_id=task.id, index=index if isinstance(index, list) else [], enabled=enabled,
        pin=run.pin,
    )  # fmt: skip
    return outcome


@contextlib.contextmanager
def _solver_slot(*, run: Run, task: Task) -> Iterator[None]:
    """The solver talks to the judges' endpoint from the worker process, one call at a time: an
    attempt holds one of the endpoint's slots for its whole run, so solver and judge calls
    together never exceed ``model.max_concurrency``. A model-free agent (oracle, nop) holds
    none."""
    agent = run.runtime["harbor_agent"]["name"]
    if task.route == HARBOR_ROUTE and agent in MODEL_FREE_AGENTS:
        yield
        return
    try:
        with run.client.slots.held(stop=run.stop):
            yield
    except SlotWaitStopped:
        raise Interrupted() from None


def _run(*, run: Run, number: int, task: Task) -> dict:
    run.attempting[number] = time.monotonic()
    try:
        return run_attempt(
            run_dir=run.output,
            number=number,
            task=task,
            model=run.config.resolved["model"],
            runtime=run.runtime,
            stop=run.stop,
            grace_seconds=run.options.grace_seconds,
            hosts=run.hosts,
        )
    finally:
        run.attempting.pop(number, None)
