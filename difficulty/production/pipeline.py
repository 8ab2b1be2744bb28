"""One ``make_difficulty`` run: check the source and the config against the protocol, attempt the
shared sample with each role's model through the native workers, and write the report.

Every (role, task) attempt is independent, so they run ``jobs`` at a time; each writes only its
own ``difficulty/<size>/tasks/NNNN/`` folder, so a concurrent run writes the same files as a
sequential one apart from timestamps. A finished attempt is never repeated: ``--resume`` reuses
it, and a finished run makes no model call at all.
"""

from __future__ import annotations

import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from difficulty.attestation import ATTESTATION_PATH
from difficulty.production.config import (
    DifficultyConfig,
    learned_verifier_settings,
    load_difficulty_config,
)
from difficulty.production.errors import DifficultyProductionError, UsageError
from difficulty.production.execution import code_identity, launch_attempt, load_sample
from difficulty.production.followups import FollowUp, file_followups, followup_root
from difficulty.production.outcomes import task_outcome
from difficulty.production.qualification import (
    atlas_row,
    check_qualifies,
    current_review_collection,
)
from difficulty.production.report import (
    arm_run_identity,
    context_record,
    difficulty_report,
    model_entry,
    run_identity_path,
    tasks_sha256,
)
from difficulty.production.resume import check_or_record_identity
from difficulty.registry import ROLE_SIZES, Protocol, get_registry
from difficulty.reports import CONTEXT_PATH, REPORT_PATH
from reviews.production.runtime.concurrency import run_concurrently
from reviews.production.runtime.errors import CHECKOUT_REQUIRED, require_positive
from reviews.production.runtime.grading import grading_identity
from reviews.production.runtime.hosts import AttemptHosts, native_bytecode_cache
from reviews.production.runtime.identity import round_trip, sha256_file
from reviews.production.runtime.launcher import GRACE_SECONDS, Interrupted, start_hosts
from reviews.production.runtime.model_client import CallStats
from reviews.production.runtime.progress import Progress
from reviews.production.runtime.rundir import (
    RunLock,
    json_text,
    prepare_output,
    read_json,
    write_json_file,
    write_text_file,
)
from reviews.production.runtime.sampling import Sample

DEFAULT_JOBS = 4


@dataclass(frozen=True)
class DifficultyOptions:
    config: Path
    atlas_id: str
    n: int
    output: Path
    seed: int = 42
    resume: bool = False
    jobs: int = DEFAULT_JOBS
    protocol: str | None = None
    followup: FollowUp | None = None
    grace_seconds: float = GRACE_SECONDS


@dataclass(frozen=True)
class DifficultyResult:
    output: Path
    report: dict[str, Any]
    attempts_run: int
    attestation: dict[str, Any] | None

    @property
    def report_path(self) -> Path:
        return self.output / REPORT_PATH


def measurement_protocol(*, protocol_id: str | None) -> Protocol:
    """The current protocol, or the named one when it defines limits and roles to apply."""
    registry = get_registry()
    protocol = registry.current if protocol_id is None else registry.get(protocol_id)
    if protocol is None:
        raise UsageError(f"Unknown protocol {protocol_id}")
    if not protocol.roles or not protocol.limits:
        raise UsageError(
            f"Protocol {protocol.id} records no limits or roles to measure with; "
            f"the current protocol is {registry.current.id}"
        )
    return protocol


def make_difficulty(
    *, options: DifficultyOptions, stderr: TextIO | None = None
) -> DifficultyResult:
    """Produce (or resume) a difficulty run directory; raises ``DifficultyProductionError``."""
    require_positive(n=options.n, jobs=options.jobs)
    protocol = measurement_protocol(protocol_id=options.protocol)
    followup = options.followup
    config = load_difficulty_config(
        path=options.config,
        protocol=protocol,
        changed_models=followup.changed_models() if followup else None,
    )
    # Everything that can refuse runs before the output directory is created.
    row = atlas_row(source=config.source, atlas_id=options.atlas_id)
    check_qualifies(row=row)
    if config.source.get("revision") != row.get("dataset_revision"):
        raise DifficultyProductionError(
            "source.revision differs from the Atlas source's current data revision"
        )
    collection = current_review_collection(source=config.source, row=row)
    if not config.runtime.get("marinskyrl_checkout"):
        raise DifficultyProductionError(CHECKOUT_REQUIRED)
    sample = load_sample(source=config.source, n=options.n, seed=options.seed)
    # Attempts fork from a warm host per route that compiled into the native bytecode cache
    # (as make_review's do); closing the hosts ends every process they started. The hosts
    # start importing now, while the run identity is computed.
    hosts = AttemptHosts(cache_dir=native_bytecode_cache())
    run = _Run(
        options=options,
        protocol=protocol,
        config=config,
        row=row,
        collection=collection,
        sample=sample,
        stderr=stderr,
        hosts=hosts,
    )
    try:
        start_hosts(hosts=hosts, tasks=sample.tasks, runtime=run.runtime)
        identity = run.identity()
        output = Path(os.path.abspath(os.path.expanduser(str(options.output))))
        prepare_output(output=output, resume=options.resume)
        lock = RunLock(output)
        lock.acquire()
        try:
            return run.execute(
                output=output, identity=identity, root=followup_root(output) if followup else None
            )
        finally:
            lock.release()
    finally:
        hosts.close()


class _Run:
    def __init__(
        self,
        *,
        options: DifficultyOptions,
        protocol: Protocol,
        config: DifficultyConfig,
        row: dict[str, Any],
        collection: dict[str, Any],
        sample: Sample,
        stderr: TextIO | None,
        hosts: AttemptHosts,
    ) -> None:
        self.options = options
        self.protocol = protocol
        self.config = config
        self.row = row
        self.collection = collection
        self.sample = sample
        self.stderr = stderr
        self.hosts = hosts
        self.stop = threading.Event()
        followup = options.followup
        self.sizes = followup.sizes() if followup else ROLE_SIZES
        self.parameters = {
            size: (followup.parameters(protocol=protocol, size=size) if followup else None)
            or protocol.applied_parameters(protocol.required_role(size))
            for size in self.sizes
        }
        self.runtime = self._worker_runtime()

    # --- identity and resume ---

    def identity(self) -> dict[str, Any]:
        tasks = self.sample.tasks
        tasks_path = Path(self.config.source["tasks_path"])
        return round_trip(
            {
                "atlas_id": self.options.atlas_id,
                "protocol_id": self.protocol.id,
                "followup": self.options.followup.record() if self.options.followup else None,
                "config_path": str(self.config.path),
                "config": self.config.resolved,
                "parameters": self.parameters,
                "tasks": [task.record() for task in tasks],
                "tasks_sha256": tasks_sha256(tasks),
                "n": self.options.n,
                "seed": self.options.seed,
                "population": self.sample.population,
                "input_sha256": sha256_file(tasks_path) if tasks_path.is_file() else None,
                "atlas_review_id": self.row.get("review_id"),
                "grading": self._grading(),
                "code": code_identity(runtime=self.config.runtime, tasks=tasks),
            }
        )

    def _grading(self) -> dict[str, Any] | None:
        """make_review's grading check when the row carries a
        grading manifest: the executed checkout must be what the Atlas captured."""
        if not isinstance(self.row.get("grading_manifest"), dict):
            return None
        with tempfile.TemporaryDirectory() as folder:
            snapshot = Path(folder) / "atlas-row.json"
            snapshot.write_text(json_text(self.row), encoding="utf-8")
            return grading_identity(
                snapshot_path=snapshot,
                source=self.config.source,
                runtime=self.config.runtime,
                tasks=list(self.sample.tasks),
            )

    # --- the run ---

    def execute(
        self, *, output: Path, identity: dict[str, Any], root: Path | None
    ) -> DifficultyResult:
        self.output = output
        # Evidence paths are relative to the directory that will be published.
        self.root = root or output
        self.prefix = "" if root is None else f"{output.relative_to(root).as_posix()}/"
        self.identity_record = identity
        attestation = check_or_record_identity(output=output, identity=identity)
        if attestation is not None and not attestation["matching"] and self.stderr:
            self.stderr.write(
                "make_difficulty: the execution code differs from the original run; publication "
                "needs changed_code_validation in "
                f"{output / ATTESTATION_PATH}\n"
            )
        saved = read_json(output / REPORT_PATH)
        if isinstance(saved, dict):
            return DifficultyResult(
                output=output, report=saved, attempts_run=0, attestation=attestation
            )
        attempts, ran = self._attempts()
        report = self._write_records(attempts)
        return DifficultyResult(
            output=output, report=report, attempts_run=ran, attestation=attestation
        )

    def _worker_runtime(self) -> dict[str, Any]:
        runtime = dict(self.config.runtime)
        judge = self.config.learned_verifier
        if judge is not None:
            # Handed to environments that grade with a learned verifier; its settings are the
            # protocol's verifier requirement, never the config's.
            runtime["learned_verifier"] = judge.worker_model(
                parameters=learned_verifier_settings(self.protocol)
            )
        return runtime

    def _attempts(self) -> tuple[dict[tuple[str, int], dict[str, Any]], int]:
        work = [
            (size, number, task)
            for size in self.sizes
            for number, task in enumerate(self.sample.tasks)
        ]
        stats = CallStats()
        progress = Progress(
            total=len(work), stats=stats, stream=self.stderr, command="make_difficulty"
        )
        progress.update("starting")
        ran = 0

        def finished(index: int, result: tuple[dict[str, Any], bool]) -> None:
            nonlocal ran
            size, number, _task = work[index]
            attempt, worker_ran = result
            if worker_ran:
                ran += 1
                for _turn in range(int(attempt.get("turns") or 0)):
                    stats.record(seconds=0.0)
            progress.update(f"{size} task {number:04d} attempted", task_done=True)

        try:
            results = run_concurrently(
                items=work,
                work=lambda item: self._attempt(*item),
                jobs=self.options.jobs,
                stop=self.stop,
                finished=finished,
            )
        finally:
            progress.finish()
        attempts = {
            (size, number): result[0]
            for (size, number, _), result in zip(work, results, strict=True)
        }
        return attempts, ran

    def _attempt(self, size: str, number: int, task: Any) -> tuple[dict[str, Any], bool]:
        if self.stop.is_set():
            raise Interrupted()
        endpoint = self.config.roles[size]
        return launch_attempt(
            run_dir=self.output,
            root=self.root,
            size=size,
            number=number,
            task=task,
            model=endpoint.worker_model(parameters=self.parameters[size]),
            runtime=self.runtime,
            stop=self.stop,
            grace_seconds=self.options.grace_seconds,
            hosts=self.hosts,
        )

    def _verifier_configuration(self) -> dict[str, Any]:
        tasks = self.sample.tasks
        environments = sorted({task.env_id for task in tasks if task.env_id})
        configuration: dict[str, Any] = {
            "native_verifier": {
                "routes": sorted({task.route for task in tasks}),
                "environments": environments,
                "gym_config": {
                    env: self.config.runtime["gym_config"].get(env, {}) for env in environments
                },
            }
        }
        judge = self.config.learned_verifier
        if judge is not None:
            configuration["learned_verifier"] = {
                "model": judge.model,
                "provider": judge.provider,
                **learned_verifier_settings(self.protocol),
                "max_output_tokens": self.protocol.limits["max_output_tokens"],
            }
        return configuration

    def _write_records(self, attempts: dict[tuple[str, int], dict[str, Any]]) -> dict[str, Any]:
        models = []
        for size in self.sizes:
            endpoint = self.config.roles[size]
            outcomes = [
                task_outcome(run_dir=self.root, task=task, attempt=attempts[(size, number)])
                for number, task in enumerate(self.sample.tasks)
            ]
            write_json_file(
                self.output / run_identity_path(size),
                arm_run_identity(
                    endpoint=endpoint,
                    parameters=self.parameters[size],
                    protocol=self.protocol,
                    config=self.config,
                    identity=self.identity_record,
                ),
            )
            models.append(
                model_entry(
                    size=size,
                    endpoint=endpoint,
                    parameters=self.parameters[size],
                    protocol=self.protocol,
                    outcomes=outcomes,
                    verifier_configuration=self._verifier_configuration(),
                )
            )
        write_json_file(
            self.output / CONTEXT_PATH,
            context_record(collection=self.collection, review_id=str(self.row.get("review_id"))),
        )
        report = difficulty_report(
            atlas_id=self.options.atlas_id,
            protocol=self.protocol,
            sample=self.sample,
            seed=self.options.seed,
            source=self.config.source,
            models=models,
            quality_sample_size=sum(
                1 for s in self.collection.get("subjects", []) if s.get("level") == "task"
            ),
            prefix=self.prefix,
        )
        followup = self.options.followup
        if followup is not None:
            report = followup.annotate(
                report=report,
                protocol=self.protocol,
                report_path=f"{self.prefix}{REPORT_PATH}",
                original_report_path=REPORT_PATH if self.root != self.output else None,
            )
        # Written last: its existence marks the run as finished.
        write_text_file(self.output / REPORT_PATH, json_text(report))
        if followup is not None and self.root != self.output:
            file_followups(root=self.root, entries=report["followups"])
        return report
