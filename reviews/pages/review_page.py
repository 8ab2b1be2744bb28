"""The review page's view model: the cards of every review of a collection, the issue summary
and panel, the provenance line and fields, applicability, attestations and the heading, built from
the bundle ``reviews.selectors.review_bundle`` loaded, without queries of its own."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, replace
from typing import Any

from django.urls import reverse

from atlas.rules import timestamps
from atlas.rules.labels import is_web_link
from reviews import labels, page_sections
from reviews.identity import Difference
from reviews.models import Review
from reviews.pages.native_outcome import outcome_of
from reviews.pages.review_heading import ReviewHeading, review_heading
from reviews.production.format.synthesis_selection import is_source_synthesis
from reviews.selectors import ATTESTATION_PATH, ReviewBundle, newest_first, review_bundle

COLLECTION_PATH = "quality-reviews.json"
COMMIT_URL = "https://github.com/marin-community/MarinSkyRL/commit/{commit}"


# --- review cards, issues -----------------------------------------------


@dataclass(frozen=True)
class EvidenceItem:
    item: dict[str, Any]
    snapshot_path: str
    artifact_review_id: str | None
    external_url: str | None
    not_published: bool


@dataclass(frozen=True)
class Resolution:
    """How a reported verifier defect was resolved: its issue, the resolution collection and
    when."""

    issue_url: str
    review_id: str
    resolved_at: dt.datetime


@dataclass(frozen=True)
class ReviewCard:
    review: dict[str, Any]
    collection_id: str
    collection_kind: str
    subject: dict[str, Any] | None
    anchor: str
    method_label: str
    level: str
    verdict_label: str
    superseded: bool
    is_main_collection: bool
    reviewed_at: dt.datetime | None
    issues: list[dict[str, Any]]
    observations: list[dict[str, Any]]
    evidence: list[EvidenceItem]
    open: bool = False
    # The verifier defect this review's issues reported, resolved since (a historical finding).
    resolution: Resolution | None = None

    @property
    def title(self) -> str:
        title = f"{self.method_label} · {self.level} · {self.verdict_label}"
        return f"{title} · Superseded opinion" if self.superseded else title

    @property
    def issue_badge(self) -> str | None:
        return labels.count_label(len(self.issues), "issue") if self.issues else None

    @property
    def reviewer_label(self) -> str:
        return (self.review.get("reviewer") or {}).get("label") or labels.NOT_RECORDED

    @property
    def judge_model_label(self) -> str | None:
        """For a model's judgment: the model, its revision and what served it, as the run
        recorded them (``attributes.judge_model``); None for a review no model wrote."""
        if (self.review.get("reviewer") or {}).get("kind") != "model":
            return None
        attributes = self.review.get("attributes")
        judge = attributes.get("judge_model") if isinstance(attributes, dict) else None
        if not isinstance(judge, dict):
            return labels.NOT_RECORDED
        name = judge.get("name") or labels.NOT_RECORDED
        revision = judge.get("revision") or labels.NOT_RECORDED.lower()
        kind = judge.get("endpoint_kind") or labels.NOT_RECORDED.lower()
        return f"{name} · revision {revision} · served by {kind}"

    @property
    def is_source_synthesis(self) -> bool:
        return is_source_synthesis(self.review, self.subject)


@dataclass(frozen=True)
class IssueLine:
    prefix: str
    severity: str | None
    severity_label: str
    dimension: str | None
    text: str
    superseded: bool
    anchor: str
    resolution: Resolution | None = None
    # Reported by a collection of the source's pool, not by the one this page shows.
    from_pool: bool = False
    # The task whose reviews load when opened (None for a card the page shows itself).
    task: TaskGroup | None = None

    @property
    def href(self) -> str:
        """A card of a task lives on the task's page until its group is opened: the link works
        without a script, and review.js opens the group in place instead."""
        return f"{self.task.url}#{self.anchor}" if self.task else f"#{self.anchor}"


def finding_resolutions(*, bundle: ReviewBundle) -> dict[tuple[str | None, str | None], Resolution]:
    """The resolved defects by (None, issue URL) — every collection of the source whose defect
    review names the issue (``attributes.issue_url``): the confirming one, and any other
    reproduction published for it, used for the confirmation or not — and by (collection, None)
    for a confirming collection none of whose defects is still open, whose defect review names
    no issue and so stands for its collection's."""
    open_by_review = {issue.review_id for issue in bundle.open_issues}
    found: dict[tuple[str | None, str | None], Resolution] = {}
    for issue in bundle.resolved_issues:
        if issue.resolution_review_id is None:  # cannot happen: a check constraint
            continue
        resolution = Resolution(
            issue_url=issue.issue_url,
            review_id=issue.resolution_review_id,
            resolved_at=issue.updated_at,
        )
        found[(None, issue.issue_url)] = resolution
        if issue.review_id not in open_by_review:
            found.setdefault((issue.review_id, None), resolution)
    return found


def _resolution_of(
    item: dict[str, Any],
    *,
    owner_id: str,
    resolutions: dict[tuple[str | None, str | None], Resolution],
) -> Resolution | None:
    attributes = item.get("attributes")
    issue_url = attributes.get("issue_url") if isinstance(attributes, dict) else None
    if isinstance(issue_url, str):
        return resolutions.get((None, issue_url))
    return resolutions.get((owner_id, None))


def review_cards(*, bundle: ReviewBundle) -> list[ReviewCard]:
    """Cards of the main and supplemental collections in display order."""
    collections = [bundle.review, *bundle.supplemental]
    superseded_ids = {
        item.get("supersedes_review_id")
        for owner in collections
        for item in owner.collection.get("reviews") or []
        if item.get("supersedes_review_id")
    }
    resolutions = finding_resolutions(bundle=bundle)
    cards = []
    for owner in collections:
        subjects = {s.get("id"): s for s in owner.collection.get("subjects") or []}
        owned_paths = bundle.artifact_paths.get(owner.id, frozenset())
        for item in owner.collection.get("reviews") or []:
            card = _card(
                item=item,
                owner=owner,
                subject=subjects.get(item.get("subject_id")),
                owned_paths=owned_paths,
                superseded=item.get("id") in superseded_ids,
                is_main=owner.id == bundle.review.id,
            )
            if card.issues:
                resolution = _resolution_of(item, owner_id=owner.id, resolutions=resolutions)
                card = replace(card, resolution=resolution)
            cards.append(card)
    cards.sort(key=_card_order)
    current = next(
        (c for c in cards if c.is_main_collection and c.is_source_synthesis and not c.superseded),
        None,
    )
    return [replace(card, open=True) if card is current else card for card in cards]


def card_anchor(*, collection_id: str, review_item_id: Any) -> str:
    """The review page's fragment id of one review's card (stable across renders)."""
    key = f"{collection_id}/{review_item_id}".encode()
    return "review-" + hashlib.sha256(key).hexdigest()[:16]


def _card(
    *,
    item: dict[str, Any],
    owner: Review,
    subject: dict[str, Any] | None,
    owned_paths: frozenset[str],
    superseded: bool,
    is_main: bool,
) -> ReviewCard:
    findings = item.get("findings") or []
    return ReviewCard(
        review=item,
        collection_id=owner.id,
        collection_kind=owner.kind,
        subject=subject,
        anchor=card_anchor(collection_id=owner.id, review_item_id=item.get("id")),
        method_label=labels.method_label(
            method=item.get("method") or "unknown", collection_kind=owner.kind
        ),
        level="Source" if (subject or {}).get("level") == "source" else "Task",
        verdict_label=labels.verdict_label(item.get("verdict")),
        superseded=superseded,
        is_main_collection=is_main,
        reviewed_at=timestamps.parse_or_none(item.get("reviewed_at")),
        issues=[f for f in findings if f.get("kind") == "issue"],
        observations=[f for f in findings if f.get("kind") != "issue"],
        evidence=[
            _evidence_item(evidence, owner_id=owner.id, owned_paths=owned_paths)
            for evidence in item.get("evidence") or []
        ],
    )


def _evidence_item(
    evidence: dict[str, Any], *, owner_id: str, owned_paths: frozenset[str]
) -> EvidenceItem:
    path = evidence.get("snapshot_path") or ""
    url = evidence.get("url") or ""
    published = path in owned_paths
    linkable = is_web_link(url)
    return EvidenceItem(
        item=evidence,
        snapshot_path=path,
        artifact_review_id=owner_id if published else None,
        external_url=url if not published and linkable else None,
        not_published=not published and not linkable,
    )


def _card_order(card: ReviewCard) -> tuple[bool, bool, bool, float, str]:
    return (
        card.superseded,
        not card.is_source_synthesis,
        *newest_first(card.reviewed_at),
        str(card.review.get("id")),
    )


def issue_summary(
    *, cards: list[ReviewCard], groups: list[TaskGroup] | None = None
) -> list[IssueLine]:
    """Every ``kind: issue`` finding of the displayed cards, in card order; a finding of a
    verifier defect resolved since says so."""
    task_of = {card.anchor: group for group in groups or [] for card in group.cards}
    return [
        IssueLine(
            prefix=f"{card.method_label} · {card.reviewer_label}",
            severity=finding.get("severity"),
            severity_label=labels.severity_label(finding.get("severity")),
            dimension=finding.get("dimension"),
            text=finding.get("text") or "",
            superseded=card.superseded,
            anchor=card.anchor,
            resolution=card.resolution,
            from_pool=not card.is_main_collection,
            task=task_of.get(card.anchor),
        )
        for card in cards
        for finding in card.issues
    ]


# --- tasks: each task's cards load when its group opens ------------------------------------------


@dataclass(frozen=True)
class TaskGroup:
    """One task subject's cards (native attempt, judges, syntheses, of every collection shown):
    the page shows a line per task, its cards load from ``url`` when the line opens."""

    key: str
    url: str
    subject: dict[str, Any]
    cards: list[ReviewCard]

    @property
    def anchor(self) -> str:
        return f"task-{self.key}"

    @property
    def task_id(self) -> str:
        return str(self.subject.get("task_id") or self.subject.get("id") or labels.NOT_RECORDED)

    @property
    def card_anchors(self) -> str:
        return " ".join(card.anchor for card in self.cards)

    @property
    def _current(self) -> list[ReviewCard]:
        return [card for card in self.cards if not card.superseded]

    @property
    def outcome(self) -> tuple[str, str]:
        native = next(
            (c.review for c in self._current if c.review.get("method") == "runtime_execution"),
            None,
        )
        return outcome_of(native)

    @property
    def judges(self) -> list[str]:
        return [
            c.verdict_label for c in self._current if c.review.get("method") == "model_judgment"
        ]

    @property
    def combined(self) -> str | None:
        return next(
            (c.verdict_label for c in self._current if c.review.get("method") == "synthesis"),
            None,
        )

    @property
    def issue_count(self) -> int:
        return sum(len(card.issues) for card in self.cards)

    @property
    def issue_badge(self) -> str | None:
        return labels.count_label(self.issue_count, "issue") if self.issue_count else None

    @property
    def review_count(self) -> str:
        return labels.count_label(len(self.cards), "review")


def task_key(subject_id: str) -> str:
    """The URL key of a task subject on a review page (stable across renders and publications)."""
    return hashlib.sha256(subject_id.encode()).hexdigest()[:16]


def task_url(*, review_id: str, key: str) -> str:
    return reverse("review-task", kwargs={"review_id": review_id, "task_key": key})


def task_groups(*, bundle: ReviewBundle, cards: list[ReviewCard]) -> list[TaskGroup]:
    """The task-level cards grouped by their subject, in sample order (the main collection's
    subjects first, then the supplemental collections'); each group's cards in card order."""
    subjects: dict[str, dict[str, Any]] = {}
    for owner in (bundle.review, *bundle.supplemental):
        for subject in owner.collection.get("subjects") or []:
            if isinstance(subject, dict) and subject.get("level") == "task":
                subject_id = subject.get("id")
                if isinstance(subject_id, str):
                    subjects.setdefault(subject_id, subject)
    by_subject: dict[str, list[ReviewCard]] = {}
    for card in cards:
        subject_id = card.review.get("subject_id")
        if card.level == "Task" and subject_id in subjects:
            by_subject.setdefault(subject_id, []).append(card)
    return [
        TaskGroup(
            key=(key := task_key(subject_id)),
            url=task_url(review_id=bundle.review.id, key=key),
            subject=subject,
            cards=by_subject[subject_id],
        )
        for subject_id, subject in subjects.items()
        if subject_id in by_subject
    ]


@dataclass(frozen=True)
class IssuePanel:
    """The "Reported technical issues" panel: its lines and how its title counts them."""

    lines: list[IssueLine]

    @property
    def unresolved(self) -> int:
        return sum(1 for line in self.lines if line.resolution is None)

    @property
    def resolved(self) -> int:
        return len(self.lines) - self.unresolved

    @property
    def from_pool(self) -> int:
        return sum(1 for line in self.lines if line.from_pool)

    @property
    def count_text(self) -> str:
        if not self.resolved:
            return str(len(self.lines))
        if not self.unresolved:
            return f"{len(self.lines)} · resolved"
        return f"{len(self.lines)} · {self.resolved} resolved"


# --- header ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ProvenanceLine:
    prefix: str
    commit: str | None = None
    suffix: str = ""

    @property
    def short(self) -> str | None:
        return self.commit[:12] if self.commit else None

    @property
    def commit_url(self) -> str | None:
        return COMMIT_URL.format(commit=self.commit) if self.commit else None

    @property
    def text(self) -> str:
        return f"{self.prefix}{self.short or ''}{self.suffix}"


def provenance_line(
    *, collection: dict[str, Any], supplemental: list[dict[str, Any]]
) -> ProvenanceLine:
    execution = collection.get("execution_provenance") or {}
    inspected_verifier = next(
        (
            item["attributes"]["inspected_marinskyrl_commit"]
            for other in supplemental
            for item in other.get("reviews") or []
            if (item.get("attributes") or {}).get("review_pool_role")
            == "verifier_revision_attestation"
            and item["attributes"].get("inspected_marinskyrl_commit")
        ),
        None,
    )
    tail = (
        f" · Current verifier inspected at {inspected_verifier[:12]}" if inspected_verifier else ""
    )
    commit = execution.get("marinskyrl_commit")
    if commit:
        suffix = " (dirty checkout)" if execution.get("marinskyrl_dirty") else ""
        if execution.get("harbor_commit"):
            suffix += f" · Harbor {execution['harbor_commit'][:12]}"
        return ProvenanceLine("MarinSkyRL execution commit ", commit, suffix + tail)
    reference = next(
        (
            item["attributes"]["inspected_marinskyrl_commit"]
            for item in collection.get("reviews") or []
            if (item.get("attributes") or {}).get("inspected_marinskyrl_commit")
        ),
        None,
    )
    if reference:
        return ProvenanceLine(
            "MarinSkyRL reference commit ",
            reference,
            " · Reused evidence and current inspection" + tail,
        )
    return ProvenanceLine("MarinSkyRL commit not recorded in imported review", None, tail)


def latest_reviewed_at(*, collections: list[dict[str, Any]]) -> dt.datetime | None:
    dates = [
        parsed
        for collection in collections
        for item in collection.get("reviews") or []
        if (parsed := timestamps.parse_or_none(item.get("reviewed_at"))) is not None
    ]
    return max(dates, default=None)


# --- provenance & applicability section -----------------------------------

PROVENANCE_FIELDS = (
    ("marinskyrl_commit", "MarinSkyRL commit"),
    ("marinskyrl_dirty", "Dirty checkout"),
    ("marinskyrl_python_tree_sha256", "MarinSkyRL Python tree SHA-256"),
    ("harbor_commit", "Harbor commit"),
    ("grading_revision", "Grading revision"),
    ("verifyit", "VerifyIt"),
)


@dataclass(frozen=True)
class Applicability:
    status: str | None
    headline: str
    reviewed_data_revision: str | None
    current_data_revision: str | None
    reviewed_verifier_revision: str | None
    current_verifier_revision: str | None
    grading_tracking: str
    grading_revision: str | None
    # Which pins the review's executed identity differs from, and how to attest each.
    identity_differences: tuple[Difference, ...] = ()


IDENTITY_HEADLINE = (
    "Review applicability: Not current — the review executed other revisions than the source "
    "pins; it covers the revisions it executed."
)
APPLICABILITY_HEADLINES = {
    "current": "Review applicability: Current — the reviewed data and verifier match the source.",
    "stale": "Review applicability: Stale — the source data or verifier changed since this review.",
    "unknown": "Review applicability: Unknown — the reviewed data revision was not recorded.",
}
NOT_CURRENT_HEADLINE = (
    "Review applicability: Not the current review — applicability is tracked for the source's "
    "current review."
)


def provenance_fields(*, collection: dict[str, Any]) -> list[tuple[str, Any]]:
    execution = collection.get("execution_provenance") or {}
    return [(label, execution.get(key)) for key, label in PROVENANCE_FIELDS]


def applicability(*, bundle: ReviewBundle) -> Applicability:
    """The stored display state describes the source's current review; another review only shows
    what it recorded next to the source's current revisions."""
    source = bundle.source
    payload = source.payload or {}
    if bundle.is_current:
        status = source.review_applicability
        headline = APPLICABILITY_HEADLINES.get(
            status or "unknown", APPLICABILITY_HEADLINES["unknown"]
        )
        reviewed_data = source.review_source_revision
        reviewed_verifier = source.review_verifier_revision
    else:
        status = None
        headline = NOT_CURRENT_HEADLINE
        reviewed_data = _source_subject(bundle.review.collection).get("dataset_revision")
        reviewed_verifier = None
    differences = bundle.identity_differences
    if differences and bundle.is_current:
        headline = IDENTITY_HEADLINE
    return Applicability(
        status=status,
        headline=headline,
        reviewed_data_revision=reviewed_data,
        current_data_revision=payload.get("dataset_revision"),
        reviewed_verifier_revision=reviewed_verifier,
        current_verifier_revision=payload.get("verifier_revision"),
        grading_tracking=source.grading_tracking,
        grading_revision=source.review_grading_revision,
        identity_differences=differences,
    )


def source_mappings(*, collection: dict[str, Any]) -> list[dict[str, Any]]:
    subjects = {s.get("id"): s for s in collection.get("subjects") or []}
    return [
        {**mapping, "subject": subjects.get(mapping.get("subject_id"))}
        for mapping in collection.get("source_mappings") or []
    ]


def _source_subject(collection: dict[str, Any]) -> dict[str, Any]:
    return next((s for s in collection.get("subjects") or [] if s.get("level") == "source"), {})


# --- dataset content equivalence ---------------------------------------------------------


@dataclass(frozen=True)
class Attestation:
    path: str
    executed_revision: str | None
    current_revision: str | None
    file_path: str | None
    component_selector: str | None
    population_count: int | None
    file_sha256: str | None


def attestations(*, bundle: ReviewBundle) -> list[Attestation]:
    found = []
    for path, content in sorted(bundle.contents.items()):
        if not ATTESTATION_PATH.match(path):
            continue
        try:
            data = json.loads(content)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        found.append(
            Attestation(
                path=path,
                executed_revision=data.get("executed_revision"),
                current_revision=data.get("current_revision"),
                file_path=data.get("file_path"),
                component_selector=data.get("component_selector"),
                population_count=data.get("population_count"),
                file_sha256=data.get("file_sha256"),
            )
        )
    return found


# --- the whole page -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewPage:
    bundle: ReviewBundle
    cards: list[ReviewCard]
    # What the page shows: the cards of no task, and a line per task whose cards load when opened.
    source_cards: list[ReviewCard]
    task_groups: list[TaskGroup]
    issues: list[IssueLine]
    issue_panel: IssuePanel
    provenance: ProvenanceLine
    reviewed_at: dt.datetime | None
    applicability: Applicability
    provenance_fields: list[tuple[str, Any]]
    source_mappings: list[dict[str, Any]]
    attestations: list[Attestation]
    sections: list[page_sections.BuiltSection]
    heading: ReviewHeading
    has_collection_artifact: bool = False


def review_page(*, review_id: str) -> ReviewPage | None:
    bundle = review_bundle(review_id=review_id)
    if bundle is None:
        return None
    cards = review_cards(bundle=bundle)
    groups = task_groups(bundle=bundle, cards=cards)
    grouped = {card.anchor for group in groups for card in group.cards}
    supplemental = [other.collection for other in bundle.supplemental]
    collection = bundle.review.collection
    issues = issue_summary(cards=cards, groups=groups)
    return ReviewPage(
        bundle=bundle,
        cards=cards,
        source_cards=[card for card in cards if card.anchor not in grouped],
        task_groups=groups,
        issues=issues,
        issue_panel=IssuePanel(lines=issues),
        provenance=provenance_line(collection=collection, supplemental=supplemental),
        # This collection's own latest judgment: publishing another collection of the source
        # never changes what a review page says about itself.
        reviewed_at=latest_reviewed_at(collections=[collection]),
        applicability=applicability(bundle=bundle),
        provenance_fields=provenance_fields(collection=collection),
        source_mappings=source_mappings(collection=collection),
        attestations=attestations(bundle=bundle),
        sections=page_sections.build_sections(bundle=bundle, contents=bundle.contents),
        heading=review_heading(
            collection=collection,
            kind=bundle.review.kind,
            display_name=bundle.source.display_name or bundle.source.id,
            updated_at=latest_reviewed_at(collections=[collection]),
        ),
        has_collection_artifact=COLLECTION_PATH in bundle.own_artifact_paths,
    )


def review_task(*, review_id: str, key: str) -> tuple[ReviewBundle, TaskGroup] | None:
    """One task's group of a review page (what its line loads), or None when the review or the
    task is unknown."""
    bundle = review_bundle(review_id=review_id)
    if bundle is None:
        return None
    groups = task_groups(bundle=bundle, cards=review_cards(bundle=bundle))
    group = next((group for group in groups if group.key == key), None)
    return None if group is None else (bundle, group)
