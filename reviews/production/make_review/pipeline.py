"""One ``make_review`` run: sample, attempt, judge, synthesise, validate.

Tasks run concurrently (``jobs``) but every file a task writes depends only on that task, call
numbers are per stage, and the collection is assembled in sample order, so a concurrent run writes
the same files as a sequential one apart from timestamps.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from reviews.production.format.collection_checks import (
    SCHEMA_PATH,
    CollectionRejected,
    check_collection,
    shipped_validator,
)
from reviews.production.make_review import records
from reviews.production.make_review.evidence import evidence_bundle
from reviews.production.make_review.judges import (
    CONSOLIDATION_PROMPT,
    JUDGE_COUNT,
    JUDGE_PROMPT,
    JudgeOutcome,
    judge_payload,
    run_judge,
)
from reviews.production.make_review.reuse import REUSE_FILE, ReusePlan, reuse_sources
from reviews.production.make_review.synthesis import Synthesis, run_coalescer
from reviews.production.runtime.concurrency import INTERRUPTED, interruptible, run_concurrently
from reviews.production.runtime.config import ReviewConfig, load_config, resumable_view
from reviews.production.runtime.errors import (
    CHECKOUT_REQUIRED,
    ReviewProductionError,
    require_positive,
)
from reviews.production.runtime.grading import (
    check_task_verifyit,
    grading_identity,
    single_verifyit,
    verifyit_pin,
)
from reviews.production.runtime.hosts import AttemptHosts, native_bytecode_cache
from reviews.production.runtime.identity import (
    HARBOR_TREES,
    MARINSKYRL_TREES,
    checkout_identity,
    folder_hashes,
    gym_verification_contract,
    implementation_hashes,
    round_trip,
    schema_sha256,
    sha256_file,
    snapshot_id,
)
from reviews.production.runtime.launcher import (
    GRACE_SECONDS,
    Interrupted,
    attempt_path,
    run_attempt,
    start_hosts,
)
from reviews.production.runtime.model_client import ModelClient
from reviews.production.runtime.progress import Progress
from reviews.production.runtime.rundir import (
    COLLECTION_FILE,
    MANIFEST_FILE,
    PANEL_FILE,
    RUN_FILE,
    SCHEMA_COPY,
    RunLock,
    artifact_manifest,
    prepare_output,
    read_json,
    task_folder,
    write_json_file,
    write_text_file,
)
from reviews.production.runtime.sampling import Sample, sample_tasks
from reviews.production.runtime.tasks import GYM_ROUTE, HARBOR_ROUTE, Task, read_tasks

DEFAULT_MAX_EVIDENCE_BYTES = 2_000_000
MISSING_REVISION = (
    "make_review: warning: source.revision is not set, so the review records no dataset "
    "revision (its subject is named by this run's snapshot) and cannot show which dataset commit "
    "it covers; set source.revision to the dataset's Hugging Face commit"
)
ENDPOINT_FILE = "endpoint.json"  # the context and output room prompts were sized to
DEFAULT_JOBS = 4


@dataclass(frozen=True)
class RunOptions:
    config: Path
    n: int
    output: Path
    seed: int = 42
    resume: bool = False
    max_evidence_bytes: int = DEFAULT_MAX_EVIDENCE_BYTES
    jobs: int = DEFAULT_JOBS
    grace_seconds: float = GRACE_SECONDS
    reuse: tuple[str, ...] = ()  # earlier runs (directories or review URLs) to cite
    rejudge: tuple[str, ...] = ()  # task ids the curator names for a fresh judgment
    # How often the progress line is redrawn while calls run (None: 1 s on a terminal, else 30 s).
    tick_seconds: float | None = None


@dataclass(frozen=True)
class RunResult:
    output: Path
    review_count: int

    @property
    def collection_path(self) -> Path:
        return self.output / COLLECTION_FILE


@dataclass
class TaskOutcome:
    number: int
    task: Task
    attempt: dict[str, Any]
    judges: list[JudgeOutcome] = field(default_factory=list)
    verifyit: dict[str, Any] | None = None
    # The task's runtime and judge reviews and their tags, built once its panel is complete.
    reviews: list[dict[str, Any]] = field(default_factory=list)
    tags: list[dict[str, Any]] = field(default_factory=list)


def make_review(*, options: RunOptions, stderr: TextIO | None = None) -> RunResult:
    """Produce (or resume) a run directory; raises ``ReviewProductionError`` with the reason."""
    require_positive(n=options.n, jobs=options.jobs, max_evidence_bytes=options.max_evidence_bytes)
    config = load_config(path=options.config)
    if config.source.get("revision") is None:
        # Before any work: a run without it cannot say which dataset commit it reviewed.
        (stderr or sys.stderr).write(MISSING_REVISION + "\n")
    output = Path(os.path.abspath(os.path.expanduser(str(options.output))))
    run = _Run(config=config, options=options, output=output, stderr=stderr)
    with (
        interruptible(stop=run.stop, command="make_review"),
        reuse_sources(options.reuse) as reused,
        contextlib.closing(run.hosts),  # ends every process the attempt hosts started
    ):
        try:
            # Everything that can refuse the inputs runs before the output directory is
            # created: a refused command leaves no half-made folder that the next attempt would
            # have to --resume.
            identity = run.plan(reused=reused)
            prepare_output(output=output, resume=options.resume)
            lock = RunLock(output)
            lock.acquire()
            try:
                return run.execute(identity=identity)
            finally:
                lock.release()
        except KeyboardInterrupt:  # a Ctrl-C outside the task pool (sampling, synthesis)
            run.stop.set()
            raise ReviewProductionError(INTERRUPTED) from None


class _Run:
    def __init__(
        self, *, config: ReviewConfig, options: RunOptions, output: Path, stderr: TextIO | None
    ) -> None:
        self.config = config
        self.options = options
        self.output = output
        self.stderr = stderr
        self.stop = threading.Event()
        self.runtime = config.runtime
        self.source = config.source
        self._attempting: dict[int, float] = {}
        self._solver_turns = 0
        # Attempts fork from a warm host per route that compiled into the native bytecode cache.
        self.hosts = AttemptHosts(cache_dir=native_bytecode_cache())

    # --- identity ---

    def plan(self, *, reused: list[tuple[str, Path]]) -> dict[str, Any]:
        """The sample, the grading identity, what is reused and the run identity (nothing is
        written)."""
        sample = sample_tasks(
            candidates=read_tasks(source=self.source), n=self.options.n, seed=self.options.seed
        )
        self.sample = sample
        # The warm hosts import the route's libraries while the identity is computed.
        start_hosts(hosts=self.hosts, tasks=sample.tasks, runtime=self.runtime)
        self.grading = self._grading(sample)
        identity = self._identity(sample)
        self.reuse: ReusePlan | None = None
        if reused or self.options.rejudge:
            self.reuse = ReusePlan.read(
                roots=reused,
                sample=sample,
                runtime=self.runtime,
                rejudge=list(self.options.rejudge),
                tree=identity["marinskyrl"]["python_tree_sha256"],
            )
            identity["reuse"] = round_trip(self.reuse.identity())
        return identity

    def execute(self, *, identity: dict[str, Any]) -> RunResult:
        sample = self.sample
        self._check_or_write_identity(identity)
        self.snapshot = snapshot_id(identity=identity)
        self.marinskyrl = identity["marinskyrl"]
        self.harbor = identity.get("harbor")
        existing = self.output / COLLECTION_FILE
        if existing.is_file():
            return self._revalidate(existing)
        if self.reuse is not None:
            self.reuse.write(self.output)
        self.source_subject = records.source_subject(
            repository=self.source["repository"],
            dataset_revision=self.source["revision"],
            source_id=self.source["source_id"],
            snapshot=self.snapshot,
        )
        self.evidence = records.EvidenceWriter(self.output)
        self.pin = verifyit_pin(checkout=Path(self.runtime["marinskyrl_checkout"]))
        client = ModelClient(
            model=self.config.model, stop=self.stop, connections=self.options.jobs * JUDGE_COUNT
        )
        self.client = client
        self.progress = Progress(
            total=len(sample.tasks),
            stats=client.stats,
            stream=self.stderr,
            activities=self._activities,
            solver_calls=self._solver_calls,
            tick_seconds=self.options.tick_seconds,
        )
        client.on_note = self.progress.note
        # Prompts are sized to the endpoint's context (configured or reported by the server).
        self.room = client.prompt_room()
        write_json_file(self.output / ENDPOINT_FILE, self.room.record())
        # jsonschema's format checkers take seconds to import; do it while the first native
        # attempts run in their own processes instead of on the first judge's path.
        threading.Thread(target=shipped_validator, daemon=True).start()
        self.judge_pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.options.jobs * JUDGE_COUNT
        )
        self.progress.start()
        try:
            outcomes = self._panel(sample)
            return self._finish(outcomes)
        finally:
            self.hosts.close()
            self.judge_pool.shutdown(wait=True)
            self.progress.finish()
            client.close()

    def _grading(self, sample: Sample) -> dict[str, Any] | None:
        snapshot = self.source.get("grading_snapshot")
        if not snapshot:
            return None
        return grading_identity(
            snapshot_path=Path(snapshot),
            source=self.source,
            runtime=self.runtime,
            tasks=list(sample.tasks),
        )

    def _identity(self, sample: Sample) -> dict[str, Any]:
        checkout = self.runtime.get("marinskyrl_checkout")
        if not checkout:
            raise ReviewProductionError(CHECKOUT_REQUIRED)
        tasks_path = Path(self.source["tasks_path"])
        selected: dict[str, str] = {}
        packed: dict[str, str] = {}
        for task in sample.tasks:
            if task.task_dir:
                selected.update(folder_hashes(folder=Path(task.task_dir)))
            dataset = (task.packed_task or {}).get("dataset_path")
            if isinstance(dataset, str) and dataset not in packed:
                packed[dataset] = sha256_file(Path(dataset))
        identity: dict[str, Any] = {
            "config_path": str(self.config.path),
            "config": self.config.resolved,
            "tasks": [task.record() for task in sample.tasks],
            "n": self.options.n,
            "seed": self.options.seed,
            "population": sample.population,
            "schema_sha256": schema_sha256(),
            "implementation": implementation_hashes(),
            "marinskyrl": checkout_identity(checkout=Path(checkout), trees=MARINSKYRL_TREES),
            "grading": self.grading,
            "input_sha256": sha256_file(tasks_path) if tasks_path.is_file() else None,
            "selected_task_files": dict(sorted(selected.items())),
            "packed_input_files": dict(sorted(packed.items())),
        }
        if any(task.route == GYM_ROUTE for task in sample.tasks):
            identity["gym_verification_contract"] = gym_verification_contract(
                checkout=Path(checkout)
            )
        if any(task.route == HARBOR_ROUTE for task in sample.tasks):
            harbor = self.runtime.get("harbor_checkout")
            if not harbor:
                raise ReviewProductionError("runtime.harbor_checkout is required for Harbor tasks")
            identity["harbor"] = checkout_identity(checkout=Path(harbor), trees=HARBOR_TREES)
        return round_trip(identity)

    def _check_or_write_identity(self, identity: dict[str, Any]) -> None:
        run_file = self.output / RUN_FILE
        if run_file.is_file():
            # The judging-only model settings may change between invocations (a higher
            # max_tokens, another dialect): each call records the body it sent.
            if resumable_view(read_json(run_file)) != resumable_view(identity):
                raise ReviewProductionError(
                    "Config, task sample, schema, or native code changed; "
                    "resume requires identical inputs"
                )
            return
        write_json_file(run_file, identity)
        shutil.copyfile(SCHEMA_PATH, self.output / SCHEMA_COPY)

    def _revalidate(self, path: Path) -> RunResult:
        collection = read_json(path)
        if collection is None:
            raise ReviewProductionError(f"Saved collection is not valid JSON: {path}")
        _validate(collection, self.output)
        return RunResult(output=self.output, review_count=len(collection["reviews"]))

    # --- the panel: attempts and judges ---

    def _panel(self, sample: Sample) -> list[TaskOutcome]:
        numbered = list(enumerate(sample.tasks))
        done: dict[int, TaskOutcome] = {}
        self.progress.update("starting")

        def finished(_index: int, outcome: TaskOutcome) -> None:
            done[outcome.number] = outcome
            self._write_panel(done)
            self.progress.update(f"task {outcome.number:04d} judged", task_done=True)

        return run_concurrently(
            items=numbered,
            work=lambda item: self._task(*item),
            jobs=self.options.jobs,
            stop=self.stop,
            finished=finished,
        )

    def _task(self, number: int, task: Task) -> TaskOutcome:
        if self.stop.is_set():
            raise Interrupted()
        if self.reuse is not None and self.reuse.reused(task):
            # Cited, not re-judged: the earlier panel with this run's ids and paths.
            attempt, reviews, tags = self.reuse.cite(
                task=task, subject_id=self._task_subject(task)["id"], run_dir=self.output
            )
            self.progress.update(f"task {number:04d} reused")
            return TaskOutcome(number, task, attempt, reviews=reviews, tags=tags)
        attempt = read_json(attempt_path(run_dir=self.output, number=number))
        if attempt is None:
            self._attempting[number] = time.monotonic()
            try:
                attempt = run_attempt(
                    run_dir=self.output,
                    number=number,
                    task=task,
                    model=self.config.resolved["model"],
                    runtime=self.runtime,
                    stop=self.stop,
                    grace_seconds=self.options.grace_seconds,
                    hosts=self.hosts,
                )
            finally:
                self._attempting.pop(number, None)
            self._solver_turns += int(attempt.get("turns") or 0)
            self.progress.update(f"task {number:04d} attempted")
        outcome = TaskOutcome(number=number, task=task, attempt=attempt)
        index = read_json(self.output / attempt["execution_path"] / "native-code-index.json")
        enabled = task.route != HARBOR_ROUTE and bool(
            self.runtime["gym_config"].get(task.env_id or "", {}).get("verifyit_enabled")
        )
        outcome.verifyit = check_task_verifyit(
            task_id=task.id, index=index if isinstance(index, list) else [], enabled=enabled,
            pin=self.pin,
        )  # fmt: skip
        try:
            bundle = evidence_bundle(
                run_dir=self.output,
                execution_path=attempt["execution_path"],
                max_bytes=self.options.max_evidence_bytes,
            )
            payload = judge_payload(
                task=task.record(),
                attempt=attempt,
                evidence=bundle,
                max_bytes=self.options.max_evidence_bytes,
            )
        except ReviewProductionError as exc:  # the failure line names the task
            raise ReviewProductionError(f"task {number:04d}: {exc}") from None
        judges_dir = task_folder(run_dir=self.output, number=number) / "judges"
        # The three judges are independent sessions, so they run at the same time; each writes
        # only its own folder, so the files are those of a sequential run.
        futures = {
            self.judge_pool.submit(
                self._judge, judge_dir=judges_dir / str(index), index=index, payload=payload
            ): index
            for index in range(1, JUDGE_COUNT + 1)
        }
        completed: dict[int, JudgeOutcome] = {}
        errors: dict[int, BaseException] = {}
        for future in concurrent.futures.as_completed(futures):
            index = futures[future]
            try:
                completed[index] = future.result()
            except BaseException as exc:  # the others finish and keep their calls for resume
                errors[index] = exc
                continue
            # The panel is validated after each judge — incrementally: the runtime review
            # with the first judge to finish, then each further judge with its tags.
            outcome.judges = [completed[k] for k in sorted(completed)]
            reviews, tags = self._task_reviews(outcome)
            fresh_ids = {f"{self._task_subject(task)['id']}/judge/{index}"}
            if len(completed) == 1:
                fresh_ids.add(reviews[0]["id"])
            fresh = [review for review in reviews if review["id"] in fresh_ids]
            fresh_tags = [tag for tag in tags if tag["target"]["id"] in fresh_ids]
            _validate(self._collection([outcome.task], fresh, fresh_tags), self.output)
        if errors:
            real = {k: e for k, e in errors.items() if not isinstance(e, KeyboardInterrupt)}
            raise (real or errors)[min(real or errors)]
        outcome.reviews, outcome.tags = self._task_reviews(outcome)
        return outcome

    # --- what the progress line shows while calls run ---

    def _activities(self) -> list[tuple[str, float]]:
        now = time.monotonic()
        attempts = [
            (f"task {number:04d} solving", now - started)
            for number, started in sorted(self._attempting.items())
        ]
        calls = [(call.label, call.elapsed) for call in self.client.in_flight()]
        return attempts + calls

    def _solver_calls(self) -> int:
        """Solver calls of this invocation: finished attempts' turns and the turns the running
        attempts have saved so far."""
        running = sum(
            len(list(folder.glob("execution-*/solver/turn-*/response.json")))
            for folder in (
                task_folder(run_dir=self.output, number=number) for number in list(self._attempting)
            )
        )
        return self._solver_turns + running

    def _judge(self, *, judge_dir: Path, index: int, payload: dict[str, Any]) -> JudgeOutcome:
        if self.stop.is_set():
            raise Interrupted()
        return run_judge(
            client=self.client, judge_dir=judge_dir, index=index, payload=payload, room=self.room
        )

    def _write_panel(self, done: dict[int, TaskOutcome]) -> None:
        outcomes = [done[number] for number in sorted(done)]
        reviews: list[dict[str, Any]] = []
        tags: list[dict[str, Any]] = []
        for outcome in outcomes:
            reviews += outcome.reviews
            tags += outcome.tags
        collection = self._collection([o.task for o in outcomes], reviews, tags)
        # Rewritten after every task: compact JSON keeps this linear-time write cheap.
        write_text_file(self.output / PANEL_FILE, json.dumps(collection, ensure_ascii=False) + "\n")

    # --- records ---

    def _task_subject(self, task: Task) -> dict[str, Any]:
        return records.task_subject(source=self.source_subject, task=task.record())

    def _task_reviews(self, outcome: TaskOutcome) -> tuple[list[dict], list[dict]]:
        subject = self._task_subject(outcome.task)
        folder = f"tasks/{outcome.number:04d}"
        attempt = outcome.attempt
        execution = attempt["execution_path"]
        verification = attempt["verification"]
        coverage = records.single_task_coverage(task=outcome.task.record(), seed=self.options.seed)
        imported_at = self.imported_at
        evidence_paths = [f"{folder}/attempt.json", f"{execution}/verifier-trace.jsonl"]
        for optional in ("solver-trace.json", "harbor-result.json"):
            if (self.output / execution / optional).is_file():
                evidence_paths.append(f"{execution}/{optional}")
        attributes: dict[str, Any] = {
            "verification": verification,
            "execution_path": execution,
            "route": outcome.task.route,
        }
        if outcome.task.route != HARBOR_ROUTE:
            attributes["verifyit_enabled"] = bool(
                self.runtime["gym_config"]
                .get(outcome.task.env_id or "", {})
                .get("verifyit_enabled")
            )
        runtime_review = records.review(
            review_id=f"{subject['id']}/runtime",
            subject_id=subject["id"],
            reviewer=records.NATIVE_VERIFIER,
            reviewed_at=self.evidence.reviewed_at(evidence_paths[0]),
            imported_at=imported_at,
            method="runtime_execution",
            tests_executed=bool(attempt.get("verifier_executed")),
            coverage=coverage,
            summary=records.runtime_summary(route=outcome.task.route, verification=verification),
            verdict="unrated" if verification.get("status") == "verified" else "inconclusive",
            metrics=[
                {"key": "native_verifier_score", "value": verification.get("score"), "scale": None}
            ],
            findings=[],
            evidence=[self.evidence.item(path) for path in evidence_paths],
            derived_from=[],
            attributes=attributes,
        )
        reviews = [runtime_review]
        tags: list[dict[str, Any]] = []
        actor = records.model_actor(self.config.model.name)
        for judge in outcome.judges:
            judge_dir = f"{folder}/judges/{judge.index}"
            paths = [f"{judge_dir}/parsed.json", f"{folder}/attempt.json"]
            paths += [
                f"{judge_dir}/segments/{segment.name}/parsed.json" for segment in judge.segment_dirs
            ]
            if judge.segment_dirs:
                paths.append(f"{judge_dir}/segments.json")
            review_id = f"{subject['id']}/judge/{judge.index}"
            reviews.append(
                records.review(
                    review_id=review_id,
                    subject_id=subject["id"],
                    reviewer=actor,
                    reviewed_at=self.evidence.reviewed_at(paths[0]),
                    imported_at=imported_at,
                    method="model_judgment",
                    tests_executed=bool(attempt.get("verifier_executed")),
                    coverage=coverage,
                    derived_from=[],
                    evidence=[self.evidence.item(path) for path in paths],
                    attributes={
                        "judge_index": judge.index,
                        "independent_session": True,
                        "prompt": JUDGE_PROMPT,
                        "evidence_segments": judge.segments,
                        "segment_consolidation_prompt": (
                            CONSOLIDATION_PROMPT if judge.segment_dirs else None
                        ),
                    },
                    **records.opinion_fields(judge.opinion),
                )
            )
            tags += records.tag_assignments(
                review_id=review_id,
                tags=judge.opinion["tags"],
                assigned_by=actor,
                assigned_at=imported_at,
            )
        return reviews, tags

    @property
    def imported_at(self) -> str:
        if not hasattr(self, "_imported_at"):
            import datetime as dt

            self._imported_at = records.stamp(dt.datetime.now(dt.UTC))
        return self._imported_at

    def _provenance(self, outcomes: list[TaskOutcome] | None = None) -> dict[str, Any]:
        provenance: dict[str, Any] = {
            "marinskyrl_commit": self.marinskyrl["commit"],
            "marinskyrl_dirty": self.marinskyrl["dirty"],
            "marinskyrl_python_tree_sha256": self.marinskyrl["python_tree_sha256"],
            "harbor_commit": self.harbor["commit"] if self.harbor else None,
        }
        if outcomes is not None:
            package = single_verifyit(
                packages=[o.verifyit for o in outcomes if o.verifyit is not None]
            )
            if package is not None:
                provenance["verifyit"] = package
        if self.grading is not None:
            provenance["grading_revision"] = self.grading["grading_revision"]
        return provenance

    def _collection(
        self,
        tasks: list[Task],
        reviews: list[dict[str, Any]],
        tags: list[dict[str, Any]],
        provenance: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return {
            "schema_version": records.SCHEMA_VERSION,
            "execution_provenance": provenance or self._provenance(),
            "created_at": self.imported_at,
            "subjects": [self.source_subject, *(self._task_subject(task) for task in tasks)],
            "reviews": reviews,
            "tag_assignments": tags,
            "source_mappings": [],
        }

    # --- after the panel: provenance, synthesis, the final collection ---

    def _finish(self, outcomes: list[TaskOutcome]) -> RunResult:
        if self.grading is not None:
            # The checkout and its dependencies must still be what was verified at start.
            try:
                unchanged = self._grading(self.sample) == self.grading
            except ReviewProductionError:
                unchanged = False
            if not unchanged:
                raise ReviewProductionError(
                    "Native grading code or dependency versions changed during the review"
                )
        provenance = self._provenance(outcomes)
        panel: list[dict[str, Any]] = []
        tags: list[dict[str, Any]] = []
        per_task: list[list[dict[str, Any]]] = []
        for outcome in outcomes:
            per_task.append(outcome.reviews)
            panel += outcome.reviews
            tags += outcome.tags
        subjects = [self.source_subject, *(self._task_subject(o.task) for o in outcomes)]
        self.progress.update("synthesising")
        syntheses = run_coalescer(
            client=self.client,
            run_dir=self.output,
            subjects=subjects,
            provenance=provenance,
            reviews=panel,
            room=self.room,
        )
        reviews: list[dict[str, Any]] = []
        for outcome, task_reviews in zip(outcomes, per_task, strict=True):
            subject = self._task_subject(outcome.task)
            reviews += task_reviews
            reviews.append(
                self._synthesis(
                    subject_id=subject["id"],
                    synthesis=syntheses[subject["id"]],
                    contributing=task_reviews,
                    coverage=records.single_task_coverage(
                        task=outcome.task.record(), seed=self.options.seed
                    ),
                    tags=tags,
                )
            )
        population = self.sample.population_of(
            repository=self.source["repository"],
            revision=self.source["revision"],
            source_id=self.source["source_id"],
        )
        reviews.append(
            self._synthesis(
                subject_id=self.source_subject["id"],
                synthesis=syntheses[self.source_subject["id"]],
                contributing=panel,
                coverage=records.source_coverage(
                    tasks=[o.task.record() for o in outcomes],
                    seed=self.options.seed,
                    population=population or self.sample.population,
                ),
                tags=tags,
                cited=(REUSE_FILE,) if self.reuse is not None else (),
            )
        )
        collection = self._collection([o.task for o in outcomes], reviews, tags, provenance)
        _validate(collection, self.output)
        write_text_file(self.output / COLLECTION_FILE, records_json(collection))
        write_json_file(self.output / MANIFEST_FILE, artifact_manifest(run_dir=self.output))
        return RunResult(output=self.output, review_count=len(reviews))

    def _synthesis(
        self,
        *,
        subject_id: str,
        synthesis: Synthesis,
        contributing: list[dict[str, Any]],
        coverage: dict[str, Any],
        tags: list[dict[str, Any]],
        cited: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        review_id = f"{subject_id}/synthesis"
        actor = records.model_actor(self.config.model.name)
        opinion = synthesis.opinion
        tags += records.tag_assignments(
            review_id=review_id, tags=opinion["tags"], assigned_by=actor,
            assigned_at=self.imported_at,
        )  # fmt: skip
        return records.review(
            review_id=review_id,
            subject_id=subject_id,
            reviewer=actor,
            reviewed_at=self.evidence.reviewed_at(synthesis.evidence[0]),
            imported_at=self.imported_at,
            method="synthesis",
            tests_executed=all(review["tests_executed"] is True for review in contributing),
            coverage=coverage,
            evidence=[self.evidence.item(p) for p in (*synthesis.evidence, *cited)],
            # Set by the tool, never taken from the model.
            derived_from=[review["id"] for review in contributing],
            attributes={},
            **records.opinion_fields(opinion),
        )


def records_json(collection: dict[str, Any]) -> str:
    from reviews.production.runtime.rundir import json_text

    return json_text(collection)


def _validate(collection: dict[str, Any], run_dir: Path) -> None:
    """The same checks as publication steps 2–6."""
    try:
        check_collection(collection=collection, run_dir=run_dir)
    except CollectionRejected as exc:
        raise ReviewProductionError(str(exc)) from None
