"""What one ``make_review`` invocation knows, filled in stage by stage, and the records every
stage assembles from it (subjects, provenance, the collection around a set of reviews)."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from reviews.production.make_review import records
from reviews.production.make_review.judges import JudgeOutcome
from reviews.production.make_review.options import RunOptions
from reviews.production.make_review.reuse import ReusePlan
from reviews.production.runtime.config import ReviewConfig
from reviews.production.runtime.grading import single_verifyit
from reviews.production.runtime.hosts import AttemptHosts, native_bytecode_cache
from reviews.production.runtime.model_client import ModelClient
from reviews.production.runtime.progress import Progress
from reviews.production.runtime.prompt_room import PromptRoom
from reviews.production.runtime.rundir import COLLECTION_FILE, task_folder
from reviews.production.runtime.sampling import Sample
from reviews.production.runtime.tasks import Task


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
    # Cited from an earlier run (``--reuse``): its panel is complete without a judge.
    reused: bool = False


class Run:
    """The state of one invocation. The sample stage sets ``sample``, ``grading`` and ``reuse``;
    the pipeline sets the identity-derived fields and the model client, progress line, prompt room
    and judge pool before the first task is attempted."""

    def __init__(
        self,
        *,
        config: ReviewConfig,
        options: RunOptions,
        output: Path,
        stderr: TextIO | None,
        hosts: AttemptHosts | None = None,
    ) -> None:
        self.config = config
        self.options = options
        self.output = output
        self.stderr = stderr
        self.stop = threading.Event()
        self.runtime = config.runtime
        self.source = config.source
        self.attempting: dict[int, float] = {}  # task number → when its attempt started
        self.solver_turns = 0
        # Attempts fork from a warm host per route that compiled into the native bytecode cache
        # (the caller's, when it started them before the run).
        self.hosts = hosts if hosts is not None else AttemptHosts(cache_dir=native_bytecode_cache())
        self.sample: Sample
        self.grading: dict[str, Any] | None = None
        self.reuse: ReusePlan | None = None
        self.snapshot: str
        self.marinskyrl: dict[str, Any]
        self.harbor: dict[str, Any] | None = None
        self.source_subject: dict[str, Any]
        self.evidence: records.EvidenceWriter
        self.pin: Any = None
        self.client: ModelClient
        self.progress: Progress
        self.room: PromptRoom
        self.judge_pool: concurrent.futures.ThreadPoolExecutor
        self._imported_at: str | None = None

    @property
    def imported_at(self) -> str:
        if self._imported_at is None:
            self._imported_at = records.stamp(dt.datetime.now(dt.UTC))
        return self._imported_at

    def judge_model(self) -> dict[str, Any]:
        """The judges' model as every model judgment of this run records it."""
        return records.judge_model(
            name=self.config.model.name,
            revision=self.config.model.revision,
            endpoint_kind=self.room.server_kind,
        )

    def task_subject(self, task: Task) -> dict[str, Any]:
        return records.task_subject(source=self.source_subject, task=task.record())

    def provenance(self, outcomes: list[TaskOutcome] | None = None) -> dict[str, Any]:
        provenance: dict[str, Any] = {
            "marinskyrl_commit": self.marinskyrl["commit"],
            "marinskyrl_dirty": self.marinskyrl["dirty"],
            "marinskyrl_python_tree_sha256": self.marinskyrl["python_tree_sha256"],
            # A registry-installed Harbor has no commit (run.json names its package instead).
            "harbor_commit": self.harbor.get("commit") if self.harbor else None,
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

    def collection(
        self,
        tasks: list[Task],
        reviews: list[dict[str, Any]],
        tags: list[dict[str, Any]],
        provenance: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return {
            "schema_version": records.SCHEMA_VERSION,
            "execution_provenance": provenance or self.provenance(),
            "created_at": self.imported_at,
            "subjects": [self.source_subject, *(self.task_subject(task) for task in tasks)],
            "reviews": reviews,
            "tag_assignments": tags,
            "source_mappings": [],
        }

    # --- what the progress line shows while calls run ---

    def activities(self) -> list[tuple[str, float]]:
        now = time.monotonic()
        attempts = [
            (f"task {number:04d} solving", now - started)
            for number, started in sorted(self.attempting.items())
        ]
        calls = [(call.label, call.elapsed) for call in self.client.in_flight()]
        return attempts + calls

    def solver_calls(self) -> int:
        """Solver calls of this invocation: finished attempts' turns and the turns the running
        attempts have saved so far."""
        running = sum(
            len(list(folder.glob("execution-*/solver/turn-*/response.json")))
            for folder in (
                task_folder(run_dir=self.output, number=number) for number in list(self.attempting)
            )
        )
        return self.solver_turns + running
