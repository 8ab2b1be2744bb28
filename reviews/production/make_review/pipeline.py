"""One ``make_review`` run: the stages in order — sample, attempt, judge, synthesise, validate.

Tasks run concurrently (``jobs``) but every file a task writes depends only on that task, call
numbers are per stage, and the collection is assembled in sample order, so a concurrent run writes
the same files as a sequential one apart from timestamps.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import Any, TextIO

from reviews.production.format.collection_checks import shipped_validator
from reviews.production.make_review import records
from reviews.production.make_review.judges import JUDGE_COUNT
from reviews.production.make_review.options import (
    DEFAULT_JOBS,
    DEFAULT_MAX_EVIDENCE_BYTES,
    RunOptions,
)
from reviews.production.make_review.reuse import reuse_sources
from reviews.production.make_review.run import Run, RunResult, TaskOutcome
from reviews.production.make_review.stages.attempt import attempt
from reviews.production.make_review.stages.judge import judge, write_panel
from reviews.production.make_review.stages.sample import check_or_write_identity, plan
from reviews.production.make_review.stages.synthesise import synthesise
from reviews.production.make_review.stages.validate import revalidate, write_collection
from reviews.production.runtime.concurrency import INTERRUPTED, interruptible, run_concurrently
from reviews.production.runtime.config import load_config
from reviews.production.runtime.errors import ReviewProductionError, require_positive
from reviews.production.runtime.grading import verifyit_pin
from reviews.production.runtime.hosts import AttemptHosts
from reviews.production.runtime.identity import snapshot_id
from reviews.production.runtime.model_client import ModelClient
from reviews.production.runtime.progress import Progress
from reviews.production.runtime.rundir import (
    COLLECTION_FILE,
    RunLock,
    prepare_output,
    write_json_file,
)
from reviews.production.runtime.sampling import Sample

__all__ = ["DEFAULT_JOBS", "DEFAULT_MAX_EVIDENCE_BYTES", "RunOptions", "RunResult", "make_review"]

MISSING_REVISION = (
    "make_review: warning: source.revision is not set, so the review records no dataset "
    "revision (its subject is named by this run's snapshot) and cannot show which dataset commit "
    "it covers; set source.revision to the dataset's Hugging Face commit"
)
# The context and output room prompts were sized to, and the calls allowed in flight at once.
ENDPOINT_FILE = "endpoint.json"


def make_review(
    *, options: RunOptions, stderr: TextIO | None = None, hosts: AttemptHosts | None = None
) -> RunResult:
    """Produce (or resume) a run directory; raises ``ReviewProductionError`` with the reason.
    ``hosts``: the run's attempt hosts when the caller started them early (closed with the run,
    as its own would be)."""
    require_positive(n=options.n, jobs=options.jobs, max_evidence_bytes=options.max_evidence_bytes)
    config = load_config(path=options.config)
    if config.source.get("revision") is None:
        # Before any work: a run without it cannot say which dataset commit it reviewed.
        (stderr or sys.stderr).write(MISSING_REVISION + "\n")
    output = Path(os.path.abspath(os.path.expanduser(str(options.output))))
    run = Run(config=config, options=options, output=output, stderr=stderr, hosts=hosts)
    with (
        interruptible(stop=run.stop, command="make_review"),
        reuse_sources(options.reuse) as reused,
        contextlib.closing(run.hosts),  # ends every process the attempt hosts started
    ):
        try:
            # Everything that can refuse the inputs runs before the output directory is
            # created: a refused command leaves no half-made folder that the next attempt would
            # have to --resume.
            identity = plan(run=run, reused=reused)
            prepare_output(output=output, resume=options.resume)
            lock = RunLock(output)
            lock.acquire()
            try:
                return _execute(run, identity=identity)
            finally:
                lock.release()
        except KeyboardInterrupt:  # a Ctrl-C outside the task pool (sampling, synthesis)
            run.stop.set()
            raise ReviewProductionError(INTERRUPTED) from None


def _execute(run: Run, *, identity: dict[str, Any]) -> RunResult:
    check_or_write_identity(run=run, identity=identity)
    run.snapshot = snapshot_id(identity=identity)
    run.marinskyrl = identity["marinskyrl"]
    run.harbor = identity.get("harbor")
    if (run.output / COLLECTION_FILE).is_file():
        return RunResult(output=run.output, review_count=revalidate(run_dir=run.output))
    if run.reuse is not None:
        run.reuse.write(run.output)
    run.source_subject = records.source_subject(
        repository=run.source["repository"],
        dataset_revision=run.source["revision"],
        source_id=run.source["source_id"],
        snapshot=run.snapshot,
    )
    run.evidence = records.EvidenceWriter(run.output)
    run.pin = verifyit_pin(checkout=Path(run.runtime["marinskyrl_checkout"]))
    client = ModelClient(
        model=run.config.model, stop=run.stop, connections=run.options.jobs * JUDGE_COUNT
    )
    run.client = client
    run.progress = Progress(
        total=len(run.sample.tasks),
        stats=client.stats,
        stream=run.stderr,
        activities=run.activities,
        solver_calls=run.solver_calls,
        concurrency=client.concurrency,
        tick_seconds=run.options.tick_seconds,
    )
    client.on_note = run.progress.note
    # Prompts are sized to the endpoint's context (configured or reported by the server).
    run.room = client.prompt_room()
    write_json_file(
        run.output / ENDPOINT_FILE, {**run.room.record(), **client.concurrency_record()}
    )
    # jsonschema's format checkers take seconds to import; do it while the first native
    # attempts run in their own processes instead of on the first judge's path.
    threading.Thread(target=shipped_validator, daemon=True).start()
    run.judge_pool = concurrent.futures.ThreadPoolExecutor(
        max_workers=run.options.jobs * JUDGE_COUNT
    )
    run.progress.start()
    try:
        outcomes = _panel(run, run.sample)
        collection = synthesise(run=run, outcomes=outcomes)
        write_collection(collection=collection, run_dir=run.output)
        return RunResult(output=run.output, review_count=len(collection["reviews"]))
    finally:
        run.hosts.close()
        run.judge_pool.shutdown(wait=True)
        run.progress.finish()
        client.close()


def _panel(run: Run, sample: Sample) -> list[TaskOutcome]:
    """Every sampled task attempted and judged, ``jobs`` at a time, in sample order."""
    numbered = list(enumerate(sample.tasks))
    done: dict[int, TaskOutcome] = {}
    run.progress.update("starting")

    def finished(_index: int, outcome: TaskOutcome) -> None:
        done[outcome.number] = outcome
        write_panel(run=run, done=done)
        run.progress.update(f"task {outcome.number:04d} judged", task_done=True)

    def work(item: tuple[int, Any]) -> TaskOutcome:
        number, task = item
        outcome = attempt(run=run, number=number, task=task)
        return outcome if outcome.reused else judge(run=run, outcome=outcome)

    return run_concurrently(
        items=numbered, work=work, jobs=run.options.jobs, stop=run.stop, finished=finished
    )
