"""``make_review --reuse``: existing task reviews that still apply
are cited instead of re-judged; only evidence gaps get fresh attempts and judges.

A sampled task reuses the panel (its runtime review and three judges) of an earlier run when the
task record is the same (prompt, verifier arguments, dataset revision, identity), the verifier is
the same (the MarinSkyRL Python tree the earlier run executed and the environment's Gym config),
and the curator did not name the task for a fresh judgment (``--rejudge``). Its files are copied
under ``reused/<collection>/`` and its reviews keep their content and judgment times, with ids and
evidence paths of this run and ``attributes.reused_from`` naming where they came from; the new
coalescer synthesises them with the fresh ones. ``reuse.json`` records every decision and why.
"""

from __future__ import annotations

import copy
import hashlib
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviews.production.format.evidence_set import ARCHIVED_PATTERN
from reviews.production.format.path_safety import relative_form, resolves_inside
from reviews.production.make_review.judges import JUDGE_COUNT
from reviews.production.runtime.atlas_client import AtlasClient
from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.rundir import COLLECTION_FILE, RUN_FILE, read_json, write_json_file
from reviews.production.runtime.sampling import Sample
from reviews.production.runtime.tasks import Task

REUSE_FILE = "reuse.json"
REUSED_DIR = "reused"
LOCAL_RUN = "run directory"  # how reuse.json names a --reuse given as a local folder
# A published review's page or API address: <atlas>/reviews/<id>/ or <atlas>/api/reviews/<id>/.
REVIEW_URL = re.compile(r"^(?P<atlas>https?://.+?)(?:/api)?/reviews/(?P<id>[0-9a-f]{64})/?$")
COMPARED_FIELDS = (
    "id", "route", "repository", "dataset_revision", "source_id", "task_path", "row_index",
    "prompt", "extras", "env_id",
)  # fmt: skip


@dataclass(frozen=True)
class Decision:
    task_id: str
    reused: bool
    reason: str
    source: str | None = None  # the collection's SHA-256 it came from


@dataclass(frozen=True)
class _Panel:
    """One task's reviews in an earlier collection."""

    source: _Source
    subject_id: str
    reviews: tuple[dict[str, Any], ...]  # runtime first, then judges 1–3
    record: dict[str, Any] | None  # the task record its worker was given
    gym_config: dict[str, Any] | None


@dataclass
class _Source:
    named: str  # the directory or URL the curator gave
    root: Path
    collection: dict[str, Any]
    sha256: str
    tree: str | None
    commit: str | None
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # run.json's records by id

    @property
    def prefix(self) -> str:
        return f"{REUSED_DIR}/{self.sha256[:12]}/"


@contextmanager
def reuse_sources(values: tuple[str, ...]) -> Iterator[list[tuple[str, Path]]]:
    """Each ``--reuse`` value as (what was named, a local run directory): a directory as it is, a
    published review's URL fetched from its Atlas into a temporary folder (removed afterwards).
    A directory is named ``LOCAL_RUN``, never by its path on this machine: its collection's
    SHA-256, recorded beside it, says which run it was."""
    found: list[tuple[str, Path]] = []
    with tempfile.TemporaryDirectory(prefix="make-review-reuse-") as scratch:
        for value in values:
            match = REVIEW_URL.match(value)
            if match is None:
                if not Path(value).is_dir():
                    raise ReviewProductionError(
                        f"--reuse takes a review run directory or a published review's URL: {value}"
                    )
                found.append((LOCAL_RUN, Path(value)))
                continue
            target = Path(scratch) / match.group("id")
            with AtlasClient(match.group("atlas")) as atlas:
                atlas.fetch_review(review_id=match.group("id"), output=target)
            found.append((value, target))
        yield found


def read_source(root: Path, *, named: str | None = None) -> _Source:
    path = Path(root)
    collection_file = path / COLLECTION_FILE
    collection = read_json(collection_file)
    if not isinstance(collection, dict) or not isinstance(collection.get("reviews"), list):
        raise ReviewProductionError(f"--reuse needs a finished review run: {path}")
    provenance = collection.get("execution_provenance") or {}
    run = read_json(path / RUN_FILE)
    tasks = {}
    if isinstance(run, dict):
        tasks = {str(t.get("id")): t for t in run.get("tasks") or [] if isinstance(t, dict)}
    return _Source(
        named=named or LOCAL_RUN,
        root=path.resolve(),
        collection=collection,
        sha256=hashlib.sha256(collection_file.read_bytes()).hexdigest(),
        tree=provenance.get("marinskyrl_python_tree_sha256"),
        commit=provenance.get("marinskyrl_commit"),
        tasks=tasks,
    )


class ReusePlan:
    """Which sampled tasks cite earlier reviews, decided once from the sample (a resume decides
    the same)."""

    def __init__(
        self,
        *,
        sources: list[_Source],
        sample: Sample,
        tree: str,
        runtime: dict[str, Any],
        rejudge: frozenset[str],
    ) -> None:
        self.sources = sources
        self.rejudge = rejudge
        self.decisions: dict[str, Decision] = {}
        self.panels: dict[str, _Panel] = {}
        gym_config = runtime.get("gym_config") or {}
        for task in sample.tasks:
            decision, panel = self._decide(task, tree=tree, gym_config=gym_config)
            self.decisions[task.id] = decision
            if panel is not None:
                self.panels[task.id] = panel
        # Every name every cited panel reads is checked before the run starts: tasks run
        # concurrently, and one panel's files must not be copied before another's is refused.
        for panel in self.panels.values():
            _panel_files(panel)

    @classmethod
    def read(
        cls,
        *,
        roots: list[tuple[str, Path]],
        sample: Sample,
        tree: str,
        runtime: dict[str, Any],
        rejudge: list[str],
    ) -> ReusePlan:
        sampled = {task.id for task in sample.tasks}
        unknown = sorted(set(rejudge) - sampled)
        if unknown:
            raise ReviewProductionError(
                f"--rejudge names tasks outside the sample: {', '.join(unknown)}"
            )
        return cls(
            sources=[read_source(root, named=named) for named, root in roots],
            sample=sample,
            tree=tree,
            runtime=runtime,
            rejudge=frozenset(rejudge),
        )

    def identity(self) -> dict[str, Any]:
        """What run.json pins: the collections read and the tasks named for fresh judgment."""
        return {
            "collections": [{"source": s.named, "sha256": s.sha256} for s in self.sources],
            "rejudge": sorted(self.rejudge),
        }

    def record(self) -> dict[str, Any]:
        """``reuse.json``."""
        return {
            **self.identity(),
            "tasks": [
                {
                    "task_id": d.task_id,
                    "decision": "reused" if d.reused else "fresh",
                    "reason": d.reason,
                    "from_collection": d.source,
                }
                for d in self.decisions.values()
            ],
        }

    def write(self, run_dir: Path) -> None:
        write_json_file(run_dir / REUSE_FILE, self.record())

    # --- decisions ---

    def _decide(
        self, task: Task, *, tree: str, gym_config: dict[str, Any]
    ) -> tuple[Decision, _Panel | None]:
        if task.id in self.rejudge:
            return Decision(task.id, False, "named by the curator for a fresh judgment"), None
        if task.task_dir or task.packed_task:
            return Decision(task.id, False, "its task files are not compared across runs"), None
        reason = "not reviewed in the reused collections"
        for source in self.sources:
            panel = _panel(source, task)
            if panel is None:
                continue
            if len(panel.reviews) != 1 + JUDGE_COUNT:
                reason = f"its panel in {source.sha256[:12]} is incomplete"
                continue
            if panel.record is None or _compared(panel.record) != _compared(task.record()):
                reason = f"the task changed since {source.sha256[:12]}"
                continue
            if source.tree != tree or panel.gym_config != gym_config.get(task.env_id or "", {}):
                reason = (
                    f"the verifier changed since {source.sha256[:12]} (MarinSkyRL Python tree "
                    f"{(source.tree or 'not recorded')[:12]}, now {tree[:12]})"
                )
                continue
            return (
                Decision(
                    task.id,
                    True,
                    f"same task, dataset revision {task.dataset_revision} and native code "
                    f"(MarinSkyRL Python tree {tree[:12]}) as {source.sha256[:12]}",
                    source=source.sha256,
                ),
                panel,
            )
        return Decision(task.id, False, reason), None

    # --- citing a reused panel in this run ---

    def reused(self, task: Task) -> bool:
        return task.id in self.panels

    def cite(
        self, *, task: Task, subject_id: str, run_dir: Path
    ) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        """The reused attempt, reviews and tags as this run's, their files copied in."""
        panel = self.panels[task.id]
        source = panel.source
        decision = self.decisions[task.id]
        renamed: dict[str, str] = {}
        reviews = []
        for review in panel.reviews:
            new_id = subject_id + review["id"][len(panel.subject_id) :]
            renamed[review["id"]] = new_id
            reviews.append(
                _rewritten(
                    review,
                    new_id=new_id,
                    subject_id=subject_id,
                    prefix=source.prefix,
                    origin={
                        "collection": source.sha256,
                        "review_id": review["id"],
                        "reason": decision.reason,
                    },
                )
            )
        # Every name is checked before any file is copied: a path the reused run names leads
        # nowhere outside it, nor outside this run once prefixed.
        pairs = [
            (_confined(source.root, path), _confined(run_dir, source.prefix + str(path)))
            for path in _panel_files(panel)
        ]
        for source_path, target in pairs:
            _copy(source_path, target)
        tags = [
            _retagged(tag, renamed)
            for tag in source.collection.get("tag_assignments") or []
            if (tag.get("target") or {}).get("id") in renamed
        ]
        runtime = reviews[0]
        attempt = {
            "verification": runtime["attributes"].get("verification"),
            "verifier_executed": runtime["tests_executed"],
            "execution_path": runtime["attributes"].get("execution_path"),
            "reused_from": source.sha256,
        }
        return attempt, reviews, tags


def _compared(record: dict[str, Any]) -> dict[str, Any]:
    return {key: record.get(key) for key in COMPARED_FIELDS}


def _panel(source: _Source, task: Task) -> _Panel | None:
    subjects = [
        s
        for s in source.collection.get("subjects") or []
        if s.get("level") == "task"
        and s.get("task_id") == task.id
        and s.get("dataset_revision") == task.dataset_revision
        and s.get("source_id") == task.source_id
    ]
    if len(subjects) != 1:
        return None
    subject_id = subjects[0]["id"]
    reviews = [r for r in source.collection["reviews"] if r.get("subject_id") == subject_id]
    runtime = [r for r in reviews if r.get("method") == "runtime_execution"]
    judges = sorted(
        (r for r in reviews if r.get("method") == "model_judgment"),
        key=lambda r: (r.get("attributes") or {}).get("judge_index") or 0,
    )
    execution = ((runtime[0].get("attributes") or {}).get("execution_path")) if runtime else None
    saved_input = read_json(source.root / execution / "input.json") if execution else None
    record = source.tasks.get(task.id)
    if record is None and isinstance(saved_input, dict):
        record = saved_input.get("task")
    config = (saved_input or {}).get("config") if isinstance(saved_input, dict) else None
    gym_config = ((config or {}).get("gym_config") or {}).get(task.env_id or "", {})
    return _Panel(
        source=source,
        subject_id=subject_id,
        reviews=tuple(runtime + judges) if len(runtime) == 1 else tuple(judges),
        record=record,
        gym_config=gym_config if isinstance(saved_input, dict) else None,
    )


def _rewritten(
    review: dict[str, Any], *, new_id: str, subject_id: str, prefix: str, origin: dict[str, Any]
) -> dict[str, Any]:
    reused = copy.deepcopy(review)
    old_id = review["id"]
    reused["id"] = new_id
    reused["subject_id"] = subject_id
    for finding in reused["findings"]:
        finding["id"] = new_id + finding["id"][len(old_id) :]
    for item in reused["evidence"]:
        item["snapshot_path"] = prefix + item["snapshot_path"]
    attributes = reused["attributes"]
    if isinstance(attributes.get("execution_path"), str):
        attributes["execution_path"] = prefix + attributes["execution_path"]
    attributes["reused_from"] = origin
    return reused


def _retagged(tag: dict[str, Any], renamed: dict[str, str]) -> dict[str, Any]:
    old_target = tag["target"]["id"]
    new_target = renamed[old_target]
    moved = copy.deepcopy(tag)
    moved["id"] = new_target + tag["id"][len(old_target) :]
    moved["target"]["id"] = new_target
    moved["evidence_review_ids"] = [renamed.get(i, i) for i in tag["evidence_review_ids"]]
    return moved


def _panel_files(panel: _Panel) -> list[str]:
    """The names of the files a cited panel copies, each confined to its run (else refused):
    what its reviews cite and the whole saved execution, whose native input and solver turns
    are what reproduce_defect re-runs from this run later."""
    root = panel.source.root
    paths = [item["snapshot_path"] for review in panel.reviews for item in review["evidence"]]
    execution = (panel.reviews[0].get("attributes") or {}).get("execution_path")
    if isinstance(execution, str):
        _confined(root, execution)
        paths += _execution_files(root, execution)
    for path in paths:
        _confined(root, path)
    return paths


def _execution_files(root: Path, execution: str) -> list[str]:
    """The archived files of one execution folder (named by
    ``reviews.production.format.evidence_set``)."""
    folder = root / execution
    if not folder.is_dir():
        return []
    return sorted(
        relative
        for path in folder.rglob("*")
        if path.is_file()
        and ARCHIVED_PATTERN.fullmatch(relative := path.relative_to(root).as_posix())
    )


def _confined(root: Path, name: object) -> Path:
    """``root / name`` when ``name`` is a relative name that stays inside ``root`` once links
    are followed (``format.path_safety``), else refused."""
    relative = relative_form(name)
    if relative is None or not resolves_inside(root / relative, Path(root).resolve()):
        raise ReviewProductionError(f"A reused review names a path outside its run: {name!r}")
    return root / relative


def _copy(source: Path, target: Path) -> None:
    if not source.is_file():
        raise ReviewProductionError(f"A reused review's evidence is missing: {source}")
    if target.is_file() and target.read_bytes() == source.read_bytes():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
