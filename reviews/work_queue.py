"""The curators' work queue: which sources need what next, each with the command of the next step.

Needs, most urgent first: an open verifier defect awaiting a validated resolution; a rating hidden
because the dataset or verifier revision changed; imported audits without an Atlas synthesis; a
source nobody reviewed; a Good source without a current difficulty measurement. Read from the
display-state columns and the review pool in a fixed number of queries (one per need), paged per
need in SQL; the admin page and ``python manage.py review_queue`` show the same entries.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.urls import reverse

from atlas.models import Source
from atlas.vocabularies import MeasurementStatus, Quality
from reviews.models import Review
from reviews.vocabularies import ReviewKind


@dataclass(frozen=True)
class Need:
    key: str
    label: str
    explanation: str


NEEDS = (
    Need("resolve_defect", "Open verifier defect awaiting a validated resolution",
         "Produce a fresh native review on the current revisions that proves the fix, publish "
         "it, then resolve the issue with it."),
    Need("re_review", "Rating hidden: the dataset or verifier revision changed",
         "Review the current revisions again, or publish a dataset-content equivalence "
         "attestation with the earlier review."),
    Need("synthesise_imported", "Imported audits without an Atlas synthesis",
         "Publish a source synthesis that cites the imported findings, keeps disagreements and "
         "states applicability to the current release."),
    Need("first_review", "Never reviewed",
         "Produce and publish a first sample-based review."),
    Need("measure_difficulty", "Good without a current difficulty measurement",
         "Measure the protocol's three models on one sample and publish the report."),
)  # fmt: skip
NEEDS_BY_KEY = {need.key: need for need in NEEDS}
QUEUE_FIELDS = (
    "id", "display_name", "origin", "effective_quality", "display_review_id", "open_issues",
    "difficulty_status", "review_applicability",
)  # fmt: skip


@dataclass(frozen=True)
class QueueEntry:
    need: Need
    source_id: str
    display_name: str
    origin: str
    commands: tuple[str, ...]
    detail: str = ""

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
            "source_page_url": self.source_page_url,
        }


@dataclass
class QueueSection:
    need: Need
    total: int
    entries: list[QueueEntry] = field(default_factory=list)


def _quoted(source_id: str) -> str:
    return shlex.quote(source_id)


def review_commands(source_id: str) -> tuple[str, ...]:
    quoted = _quoted(source_id)
    return (
        "python manage.py make_review --config review-config.json --n 3 --seed 42 "
        "--output runs/review",
        f"python manage.py publish_review --run-dir runs/review --atlas-id {quoted}",
    )


def commands_for(need: str, row: dict[str, Any]) -> tuple[str, ...]:
    quoted = _quoted(row["id"])
    if need == "resolve_defect":
        resolves = tuple(
            f"python manage.py resolve_verifier_issue --atlas-id {quoted} "
            f"--issue-url {shlex.quote(issue['issue_url'])} --resolution-review-id REVIEW_ID"
            for issue in row["open_issues"] or []
        )
        return (*review_commands(row["id"]), *resolves)
    if need == "synthesise_imported":
        return (f"python manage.py publish_review --run-dir runs/synthesis --atlas-id {quoted}",)
    if need == "measure_difficulty":
        return (
            "python manage.py make_difficulty --config difficulty-config.json "
            f"--atlas-id {quoted} --n 30 --seed 42 --output runs/difficulty",
            f"python manage.py publish_difficulty --run-dir runs/difficulty --atlas-id {quoted}",
        )
    return review_commands(row["id"])


def need_queryset(need: str) -> QuerySet[Source]:
    """Active sources with the need, in name order (the selector of each section)."""
    active = Source.objects.filter(active=True)
    pool = Review.objects.filter(source_id=OuterRef("pk"))
    if need == "resolve_defect":
        return active.filter(open_issue_count__gt=0)
    if need == "re_review":
        return active.filter(review_stale=True, open_issue_count=0)
    if need == "synthesise_imported":
        return active.filter(
            Exists(pool.filter(kind=ReviewKind.IMPORTED)),
            ~Exists(pool.filter(kind=ReviewKind.RATING)),
            open_issue_count=0,
        )
    if need == "first_review":
        return active.filter(
            effective_quality__isnull=True,
            display_review_id__isnull=True,
            review_stale=False,
        ).exclude(Exists(pool))
    if need == "measure_difficulty":
        return active.filter(effective_quality=Quality.GOOD).filter(
            Q(difficulty_status__isnull=True) | ~Q(difficulty_status=MeasurementStatus.CURRENT)
        )
    raise ValueError(f"Unknown need: {need}")


def entries_of(need: str, rows: Iterable[dict[str, Any]]) -> Iterator[QueueEntry]:
    for row in rows:
        detail = ""
        if need == "resolve_defect":
            detail = ", ".join(issue["issue_url"] for issue in row["open_issues"] or [])
        elif need == "re_review":
            detail = "Review applicability: stale"
        yield QueueEntry(
            need=NEEDS_BY_KEY[need],
            source_id=row["id"],
            display_name=row["display_name"] or row["id"],
            origin=row["origin"],
            commands=commands_for(need, row),
            detail=detail,
        )


def work_queue(
    *, limit: int | None = None, needs: Iterable[str] | None = None
) -> list[QueueSection]:
    """Each need with its total and (up to ``limit``) entries in name order."""
    sections = []
    for need in NEEDS:
        if needs is not None and need.key not in needs:
            continue
        queryset = need_queryset(need.key).order_by("display_name_key", "id")
        rows = queryset.values(*QUEUE_FIELDS)
        if limit is not None:
            rows = rows[:limit]
        entries = list(entries_of(need.key, rows))
        total = len(entries) if limit is None or len(entries) < limit else queryset.count()
        sections.append(QueueSection(need=need, total=total, entries=entries))
    return sections
