"""The sample stage: the seeded sample, the grading identity, what an earlier run lends and the
run identity — everything that can refuse the inputs, computed before the output exists."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from reviews.production.format.collection_checks import SCHEMA_PATH
from reviews.production.make_review.reuse import ReusePlan
from reviews.production.make_review.run import Run
from reviews.production.runtime.config import identity_difference
from reviews.production.runtime.errors import CHECKOUT_REQUIRED, ReviewProductionError
from reviews.production.runtime.grading import grading_identity
from reviews.production.runtime.identity import (
    MARINSKYRL_TREES,
    checkout_identity,
    folder_hashes,
    gym_verification_contract,
    harbor_identity,
    implementation_hashes,
    round_trip,
    schema_sha256,
    sha256_file,
)
from reviews.production.runtime.launcher import start_hosts, start_routes
from reviews.production.runtime.rundir import RUN_FILE, SCHEMA_COPY, read_json, write_json_file
from reviews.production.runtime.sampling import Sample, sample_tasks
from reviews.production.runtime.tasks import GYM_ROUTE, HARBOR_ROUTE, expected_routes, read_tasks


def plan(*, run: Run, reused: list[tuple[str, Path]]) -> dict[str, Any]:
    """The sample, the grading identity, what is reused and the run identity (nothing is
    written)."""
    # The warm hosts import the route's libraries while the rows are read and the identity is
    # computed: the format's route at once, any other route the sample names once it is drawn.
    start_routes(hosts=run.hosts, routes=expected_routes(source=run.source), runtime=run.runtime)
    sample = sample_tasks(
        candidates=read_tasks(source=run.source), n=run.options.n, seed=run.options.seed
    )
    run.sample = sample
    start_hosts(hosts=run.hosts, tasks=sample.tasks, runtime=run.runtime)
    run.grading = grading_of(run=run, sample=sample)
    identity = _identity(run, sample)
    run.reuse = None
    if reused or run.options.rejudge:
        run.reuse = ReusePlan.read(
            roots=reused,
            sample=sample,
            runtime=run.runtime,
            rejudge=list(run.options.rejudge),
            tree=identity["marinskyrl"]["python_tree_sha256"],
        )
        identity["reuse"] = round_trip(run.reuse.identity())
    return identity


def grading_of(*, run: Run, sample: Sample) -> dict[str, Any] | None:
    snapshot = run.source.get("grading_snapshot")
    if not snapshot:
        return None
    return grading_identity(
        snapshot_path=Path(snapshot),
        source=run.source,
        runtime=run.runtime,
        tasks=list(sample.tasks),
    )


def _identity(run: Run, sample: Sample) -> dict[str, Any]:
    checkout = run.runtime.get("marinskyrl_checkout")
    if not checkout:
        raise ReviewProductionError(CHECKOUT_REQUIRED)
    tasks_path = Path(run.source["tasks_path"])
    selected: dict[str, str] = {}
    packed: dict[str, str] = {}
    for task in sample.tasks:
        if task.task_dir:
            selected.update(folder_hashes(folder=Path(task.task_dir)))
        dataset = (task.packed_task or {}).get("dataset_path")
        if isinstance(dataset, str) and dataset not in packed:
            packed[dataset] = sha256_file(Path(dataset))
    identity: dict[str, Any] = {
        "config_path": str(run.config.path),
        "config": run.config.resolved,
        "tasks": [task.record() for task in sample.tasks],
        "n": run.options.n,
        "seed": run.options.seed,
        "population": sample.population,
        "schema_sha256": schema_sha256(),
        "implementation": implementation_hashes(),
        "marinskyrl": checkout_identity(checkout=Path(checkout), trees=MARINSKYRL_TREES),
        "grading": run.grading,
        "input_sha256": sha256_file(tasks_path) if tasks_path.is_file() else None,
        "selected_task_files": dict(sorted(selected.items())),
        "packed_input_files": dict(sorted(packed.items())),
    }
    if any(task.route == GYM_ROUTE for task in sample.tasks):
        identity["gym_verification_contract"] = gym_verification_contract(checkout=Path(checkout))
    if any(task.route == HARBOR_ROUTE for task in sample.tasks):
        identity["harbor"] = harbor_identity(runtime=run.runtime)
    return round_trip(identity)


def check_or_write_identity(*, run: Run, identity: dict[str, Any]) -> None:
    run_file = run.output / RUN_FILE
    if run_file.is_file():
        # The judging-only model settings may change between invocations (a higher
        # max_tokens, another dialect): each call records the body it sent.
        difference = identity_difference(read_json(run_file), identity)
        if difference is not None:
            raise ReviewProductionError(
                f"Cannot resume: {difference} since this run started; a resume needs the same "
                "inputs. Restore it, or give --output a new folder for a run with the change"
            )
        return
    write_json_file(run_file, identity)
    shutil.copyfile(SCHEMA_PATH, run.output / SCHEMA_COPY)
