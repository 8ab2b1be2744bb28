"""The curators' work queue: which sources need what next, each with the command of the next step.

Needs, most urgent first: an open verifier defect awaiting a validated resolution; a resolved
defect whose source awaits the rating publication that restores Good (resolution never does by
itself); a rating hidden because the dataset or verifier revision changed; imported audits without
an Atlas synthesis; a source nobody reviewed; a Good source without a current difficulty
measurement. Read from the display-state columns, the issues and the review pool in a fixed number
of queries (one per need, two for difficulty), paged per need in SQL; the admin page and
``python manage.py review_queue`` show the same entries.

Each entry's commands work as printed, run in one curation folder: they name the source's own
config (``review-configs/<slug>.json``, ``difficulty-configs/<slug>.json``, which the curator
writes once per source) and a run folder named by what the step works on — the revisions a review
covers, the issue a fix resolves, the review a difficulty is measured against — never by the day,
so two steps never share a folder (two defects of one day included) while the same step, queued
again before it is done, names the same one; every id a later step needs is read from the run
folder the earlier step wrote.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery
from django.db.models.fields.json import KT
from django.urls import reverse

from atlas.models import Source, SourceChange
from atlas.rules.vocabularies import ChangeKind, MeasurementStatus, Quality, SourceStatus
from reviews.models import Review, VerifierIssue
from reviews.rating import source_synthesis
from reviews.vocabularies import ReviewKind


@dataclass(frozen=True)
class Need:
    key: str
    label: str
    explanation: str


NEEDS = (
    Need("resolve_defect", "Open verifier defect awaiting a validated resolution",
         "Validate the fix against the saved failing inputs at the repaired checkout, publish "
         "the resolution collection, resolve the issue with it, then publish it again: Good "
         "returns only with a rating published once no defect is open."),
    Need("restore_good", "Resolved verifier defect awaiting a new rating",
         "Resolution never restores a rating by itself: publish the resolution's review again "
         "to restore Good (now uncapped: no defect of the source is open)."),
    Need("re_review", "Rating hidden: the dataset or verifier revision changed",
         "Review the current revisions again, or publish a dataset-content equivalence "
         "attestation with the earlier review."),
    Need("synthesise_imported", "Imported audits without an Atlas synthesis",
         "Synthesise the source from its existing review pool (a synthesis that cites the "
         "imported findings, keeps disagreements and states applicability to the current "
         "release) and publish it."),
    Need("first_review", "Never reviewed",
         "Produce and publish a first sample-based review (excluded sources are not queued)."),
    Need("measure_difficulty", "Good without a current difficulty measurement",
         "Measure the protocol's three models on one sample and publish the report."),
)  # fmt: skip
NEEDS_BY_KEY = {need.key: need for need in NEEDS}
QUEUE_FIELDS = (
    "id", "display_name", "origin", "effective_quality", "display_review_id", "open_issues",
    "difficulty_status", "review_applicability", "task_count",
)  # fmt: skip
# What the run folders are named by: the revisions a review covers, the issue a fix resolves.
SHORT = 8


@dataclass(frozen=True)
class QueueEntry:
    need: Need
    source_id: str
    display_name: str
    origin: str
    commands: tuple[str, ...]
    detail: str = ""
    files: tuple[tuple[str, str], ...] = ()  # (what, path) the commands read or write

    @property
    def source_page_url(self) -> str:
        return reverse("source-page", kwargs={"source_id": self.source_id})

    def as_json(self) -> dict[str, Any]:
        return {
            "need": self.need.key,
            "need_label": self.need.label,
            "source_id": self.source_id,
            "display_name": self.display_name,
            "origin": self.origin,
            "detail": self.detail,
            "commands": list(self.commands),
            "files": dict(self.files),
            "source_page_url": self.source_page_url,
        }


@dataclass
class QueueSection:
    need: Need
    total: int
    entries: list[QueueEntry] = field(default_factory=list)


# --- the commands of each need ----------------------------------------------------------------

MANAGE = "python manage.py"
REVIEW_TASKS = 3
DIFFICULTY_TASKS = 30
SEED = 42


def source_slug(source_id: str) -> str:
    """A file-name form of a source id: lower case, every other run of characters one dash."""
    return re.sub(r"[^a-z0-9]+", "-", source_id.lower()).strip("-") or "source"


@dataclass(frozen=True)
class SourceFiles:
    """Where a source's curation files go, relative to the folder the commands run in: one
    config per source and kind of run, one run directory per step named by what the step works
    on (see the module doc). ``task_count``: the source's input rows, when known;
    ``reviewed_tasks``: how many tasks the current review's local input held (its sample's
    population) — a sample never asks for more than either."""

    source_id: str
    dataset_revision: str | None = None
    verifier_revision: str | None = None
    review_id: str | None = None
    task_count: int | None = None
    reviewed_tasks: int | None = None

    def sample(self, tasks: int) -> str:
        for bound in (self.task_count, self.reviewed_tasks):
            if bound is not None and 0 < bound < tasks:
                tasks = bound
        return f"--n {tasks} --seed {SEED}"

    @property
    def slug(self) -> str:
        return source_slug(self.source_id)

    @property
    def review_config(self) -> str:
        return f"review-configs/{self.slug}.json"

    @property
    def difficulty_config(self) -> str:
        return f"difficulty-configs/{self.slug}.json"

    def run(self, step: str) -> str:
        return f"runs/{self.slug}/{step}"

    @property
    def review_run(self) -> str:
        return self.run(f"review-{_short(self.dataset_revision)}-{_short(self.verifier_revision)}")

    @property
    def synthesis_run(self) -> str:
        return self.run(f"synthesis-{_short(self.dataset_revision)}")

    @property
    def difficulty_run(self) -> str:
        return self.run(f"difficulty-{(self.review_id or 'unreviewed')[:12]}")

    def fix_review_run(self, issue_urls: list[str]) -> str:
        return self.run(f"fix-review-{'-'.join(issue_key(url) for url in issue_urls)}")

    def fix_run(self, issue_url: str) -> str:
        return self.run(f"fix-{issue_key(issue_url)}")


def _short(revision: str | None) -> str:
    return revision[:SHORT] if revision else "unpinned"


def issue_key(issue_url: str) -> str:
    """A file-name form of a GitHub issue: ``<repo>-<number>`` (the URL's last two parts)."""
    parts = issue_url.rstrip("/").split("/")
    return source_slug(f"{parts[-3]} {parts[-1]}") if len(parts) >= 3 else source_slug(issue_url)


def _q(value: str) -> str:
    return shlex.quote(value)


def _make_review(files: SourceFiles, output: str) -> str:
    return (
        f"{MANAGE} make_review --config {_q(files.review_config)} {files.sample(REVIEW_TASKS)} "
        f"--output {_q(output)}"
    )


def _publish(files: SourceFiles, run_dir: str) -> str:
    return f"{MANAGE} publish_review --run-dir {_q(run_dir)} --atlas-id {_q(files.source_id)}"


def review_commands(files: SourceFiles) -> tuple[str, ...]:
    output = files.review_run
    return (_make_review(files, output), _publish(files, output))


def _atlas() -> str:
    return _q(settings.ATLAS_PUBLIC_URL.rstrip("/"))


def resolution_commands(files: SourceFiles, issue_urls: list[str]) -> tuple[str, ...]:
    """A fresh review at the repaired checkout; per open defect, the fix validated against the
    saved failing inputs beside it, the resolution collection published and the defect resolved
    with it; then the last one published again, now uncapped, which is how Good returns."""
    review = files.fix_review_run(issue_urls)
    commands: list[str] = [_make_review(files, review)]
    output = ""
    for issue_url in issue_urls:
        output = files.fix_run(issue_url)
        commands += [
            f"{MANAGE} validate_fix --issue-url {_q(issue_url)} --atlas {_atlas()} "
            f"--review {_q(review)} --output {_q(output)}",
            _publish(files, output),
            f"{MANAGE} resolve_verifier_issue --atlas-id {_q(files.source_id)} --issue-url "
            f"{_q(issue_url)} --resolution-run-dir {_q(output)}",
        ]
    if output:
        commands.append(_publish(files, output))
    return tuple(commands)


def restore_commands(files: SourceFiles, issue_url: str) -> tuple[str, ...]:
    """The resolution's run folder published again (the one ``resolution_commands`` named)."""
    return (_publish(files, files.fix_run(issue_url)),)


def synthesis_commands(files: SourceFiles) -> tuple[str, ...]:
    output = files.synthesis_run
    return (
        f"{MANAGE} synthesise_source --atlas-id {_q(files.source_id)} --config "
        f"{_q(files.review_config)} --atlas {_atlas()} --output {_q(output)}",
        _publish(files, output),
    )


def difficulty_commands(files: SourceFiles) -> tuple[str, ...]:
    output = files.difficulty_run
    quoted = _q(files.source_id)
    return (
        f"{MANAGE} make_difficulty --config {_q(files.difficulty_config)} --atlas-id {quoted} "
        f"{files.sample(DIFFICULTY_TASKS)} --output {_q(output)}",
        f"{MANAGE} publish_difficulty --run-dir {_q(output)} --atlas-id {quoted}",
    )


def files_of(row: dict[str, Any]) -> SourceFiles:
    return SourceFiles(
        source_id=row["id"],
        dataset_revision=row.get("dataset_revision"),
        verifier_revision=row.get("verifier_revision"),
        review_id=row.get("display_review_id"),
        task_count=row.get("task_count"),
        reviewed_tasks=row.get("reviewed_tasks"),
    )


def commands_for(need: str, row: dict[str, Any]) -> tuple[str, ...]:
    files = files_of(row)
    if need == "resolve_defect":
        return resolution_commands(files, _issue_urls(row))
    if need == "restore_good":
        return restore_commands(files, row["resolved_issue_url"])
    if need == "synthesise_imported":
        return synthesis_commands(files)
    if need == "measure_difficulty":
        return difficulty_commands(files)
    return review_commands(files)


def _issue_urls(row: dict[str, Any]) -> list[str]:
    return [issue["issue_url"] for issue in row.get("open_issues") or []]


def files_for(need: str, row: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    files = files_of(row)
    if need == "measure_difficulty":
        return (("config", files.difficulty_config), ("output", files.difficulty_run))
    if need == "resolve_defect":
        urls = _issue_urls(row)
        return (("config", files.review_config), ("output", files.fix_run(urls[-1])))
    if need == "restore_good":
        return (("output", files.fix_run(row["resolved_issue_url"])),)
    output = files.synthesis_run if need == "synthesise_imported" else files.review_run
    return (("config", files.review_config), ("output", output))


def detail_for(need: str, row: dict[str, Any]) -> str:
    """What the curator prepares before the commands run, and why the source is queued."""
    revision = row.get("dataset_revision") or "unknown"
    config = (
        f"Config: source.source_id {row['id']}, source.revision {revision}"
        if need != "measure_difficulty"
        else f"Config: source.source_id {row['id']}, the three protocol roles"
    )
    if need == "resolve_defect":
        return f"{', '.join(_issue_urls(row))} · {config}; runtime at the repaired checkout"
    if need == "restore_good":
        return (
            f"{row['resolved_issue_url']} resolved by review {row['resolution_review_id']} · "
            "publish it again (its run folder, or a fetch_review copy of it)"
        )
    if need == "re_review":
        return f"Review applicability: stale · {config}"
    return config


def need_queryset(need: str) -> QuerySet[Source]:
    """Active sources with the need, in name order (the selector of each section)."""
    active = Source.objects.active()
    pool = Review.objects.filter(source_id=OuterRef("pk"))
    if need == "resolve_defect":
        return active.filter(open_issue_count__gt=0)
    if need == "restore_good":
        return _awaiting_good(active)
    if need == "re_review":
        return active.filter(review_stale=True, open_issue_count=0)
    if need == "synthesise_imported":
        return active.filter(
            Exists(pool.filter(kind=ReviewKind.IMPORTED)),
            ~Exists(pool.filter(kind=ReviewKind.RATING)),
            open_issue_count=0,
        )
    if need == "first_review":
        # An excluded source is kept in the catalog for the record, not queued for reviewing.
        return (
            active.filter(
                effective_quality__isnull=True,
                display_review_id__isnull=True,
                review_stale=False,
            )
            .exclude(Exists(pool))
            .exclude(status=SourceStatus.EXCLUDED)
        )
    if need == "measure_difficulty":
        return active.filter(effective_quality=Quality.GOOD).filter(
            Q(difficulty_status__isnull=True) | ~Q(difficulty_status=MeasurementStatus.CURRENT)
        )
    raise ValueError(f"Unknown need: {need}")


def _latest_resolution() -> QuerySet[VerifierIssue]:
    return VerifierIssue.objects.filter(
        source_id=OuterRef("pk"), status=VerifierIssue.Status.RESOLVED
    ).order_by("-updated_at", "-id")


def _awaiting_good(active: QuerySet[Source]) -> QuerySet[Source]:
    """No defect open, and no rating published since the latest resolution: the source waits
    for the publication that restores Good (the history records every one that changed what
    shows; a Good source waits for nothing)."""
    latest = _latest_resolution()
    published_since = SourceChange.objects.filter(
        source_id=OuterRef("pk"),
        kind=ChangeKind.REVIEW_PUBLISHED,
        at__gt=OuterRef("resolved_at"),
    )
    return (
        active.filter(open_issue_count=0)
        .exclude(effective_quality=Quality.GOOD)
        .annotate(
            resolved_at=Subquery(latest.values("updated_at")[:1]),
            resolved_issue_url=Subquery(latest.values("issue_url")[:1]),
            resolution_review_id=Subquery(latest.values("resolution_review_id")[:1]),
        )
        .filter(resolved_at__isnull=False)
        .exclude(Exists(published_since))
    )


def _with_reviewed_tasks(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with ``reviewed_tasks``: the population its current review sampled from (the
    local input the source's difficulty config reads too), from its source synthesis."""
    ids = [row["display_review_id"] for row in rows if row.get("display_review_id")]
    populations: dict[str, int | None] = {}
    for review_id, collection in Review.objects.filter(id__in=ids).values_list("id", "collection"):
        synthesis = source_synthesis(collection) if isinstance(collection, dict) else None
        count = ((synthesis or {}).get("coverage") or {}).get("population_count")
        populations[review_id] = count if isinstance(count, int) else None
    return [
        {**row, "reviewed_tasks": populations.get(row.get("display_review_id") or "")}
        for row in rows
    ]


def entries_of(need: str, rows: Iterable[dict[str, Any]]) -> Iterator[QueueEntry]:
    for row in rows:
        yield QueueEntry(
            need=NEEDS_BY_KEY[need],
            source_id=row["id"],
            display_name=row["display_name"] or row["id"],
            origin=row["origin"],
            commands=commands_for(need, row),
            detail=detail_for(need, row),
            files=files_for(need, row),
        )


# The largest --limit: more than any inventory holds, far below what a SQL LIMIT overflows at.
MAX_LIMIT = 1_000_000


class InvalidLimit(ValueError):
    """A limit the queue cannot page by; ``str(exc)`` says which limits it takes."""


def checked_limit(value: Any) -> int:
    """``value`` as a limit of sources per need (1 to ``MAX_LIMIT``), else ``InvalidLimit``."""
    try:
        limit = int(value)
    except (TypeError, ValueError):
        raise InvalidLimit(f"the limit must be a whole number, got {value!r}") from None
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidLimit(
            f"the limit must be between 1 and {MAX_LIMIT:,} (omit it for every source), got {limit}"
        )
    return limit


def work_queue(
    *, limit: int | None = None, needs: Iterable[str] | None = None
) -> list[QueueSection]:
    """Each need with its total and (up to ``limit``) entries in name order."""
    if limit is not None:
        limit = checked_limit(limit)
    sections = []
    for need in NEEDS:
        if needs is not None and need.key not in needs:
            continue
        queryset = need_queryset(need.key).order_by("display_name_key", "id")
        extra = ("resolved_issue_url", "resolution_review_id") if need.key == "restore_good" else ()
        rows = queryset.values(
            *QUEUE_FIELDS,
            *extra,
            dataset_revision=KT("payload__dataset_revision"),
            verifier_revision=KT("payload__verifier_revision"),
        )
        if limit is not None:
            rows = rows[:limit]
        listed = list(rows)
        if need.key == "measure_difficulty":
            listed = _with_reviewed_tasks(listed)
        entries = list(entries_of(need.key, listed))
        total = len(entries) if limit is None or len(entries) < limit else queryset.count()
        sections.append(QueueSection(need=need, total=total, entries=entries))
    return sections
