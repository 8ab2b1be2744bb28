"""The API row of a source: each field once, with its OpenAPI declaration and where its value is
read (a stored column, a payload key, a solve rate, or a function of those). The serializer the
schema shows and the rows a list answers are both made from ``ROW``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rest_framework import serializers

from atlas.rules import labels
from atlas.rules.display_state import shown
from atlas.rules.solve_rates import ROLES as SOLVE_RATE_ROLES
from atlas.rules.vocabularies import (
    UNCLASSIFIED,
    Applicability,
    GradingTracking,
    MeasurementStatus,
    Quality,
    SourceKind,
    SourceStatus,
    SourceType,
    Turns,
)
from atlas.web.source_links import RowLinks


class OpenVerifierIssueSerializer(serializers.Serializer):
    """An open defect as catalog rows list it; contributed by reviews into the
    ``open_issues`` display column."""

    issue_url = serializers.CharField()
    review_id = serializers.CharField()
    status = serializers.CharField()
    created_at = serializers.DateTimeField()


# Most fields are read as they are: a ROW_COLUMNS value (Column), a payload key (Payload) or a
# solve_rate_columns() value (Rate). The few that need shaping are functions of (values, payload,
# links, rates): the row's ROW_COLUMNS values, its payload, the response's RowLinks and its
# solve_rate_columns(). The serializer below declares the fields (OpenAPI, the browsable API) and
# row_of_values() builds the rows, both from ROW.
Value = Callable[[Mapping[str, Any], Mapping[str, Any], RowLinks, Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Column:
    name: str


@dataclass(frozen=True)
class Payload:
    key: str


@dataclass(frozen=True)
class Rate:
    name: str


@dataclass(frozen=True)
class RowField:
    name: str
    declared: serializers.Field
    value: Column | Payload | Rate | Value


def _shown(name: str) -> Value:
    """A review revision: the curated one when the row's review is curated, else the payload's."""
    return lambda values, payload, links, rates: shown(name, payload=payload, curated=values)


def _solve_rates(role: str) -> tuple[RowField, ...]:
    title = role.title()
    return (
        RowField(
            f"difficulty_{role}_solved",
            serializers.IntegerField(
                allow_null=True,
                help_text=f"The {title} model's solved tasks, under `difficulty_status`; null "
                "without a difficulty summary or that model.",
            ),
            Rate(f"difficulty_{role}_solved"),
        ),
        RowField(
            f"difficulty_{role}_verified",
            serializers.IntegerField(
                allow_null=True, help_text=f"The {title} model's tasks with a verifier result."
            ),
            Rate(f"difficulty_{role}_verified"),
        ),
        RowField(
            f"difficulty_{role}_rate",
            serializers.FloatField(
                allow_null=True,
                help_text=f"The {title} model's solve rate (0–1): the report's, else solved / "
                "verified; null when nothing was verified.",
            ),
            Rate(f"difficulty_{role}_rate"),
        ),
    )


def _review_page(
    values: Mapping[str, Any], payload: Mapping[str, Any], links: RowLinks, rates: Mapping[str, Any]
) -> str | None:
    review_id = values["display_review_id"]
    return links.link("review-page", review_id) if review_id else None


def _quality_label(
    values: Mapping[str, Any], payload: Mapping[str, Any], links: RowLinks, rates: Mapping[str, Any]
) -> str:
    return labels.quality_label(
        effective_quality=values["effective_quality"],
        review_stale=values["review_stale"],
        review_id=values["display_review_id"],
    )


_CHAR = serializers.CharField

# The order is the rows' key order and the CSV twin's column order (``?format=csv``).
ROW: tuple[RowField, ...] = (
    RowField("id", _CHAR(), Column("id")),
    RowField(
        "url",
        serializers.URLField(help_text="This row in the API."),
        lambda values, payload, links, rates: links.link("api-source", values["id"]),
    ),
    RowField(
        "source_page_url",
        serializers.URLField(help_text="The source's page."),
        lambda values, payload, links, rates: links.link("source-page", values["id"]),
    ),
    RowField(
        "review_page_url",
        serializers.URLField(
            allow_null=True,
            help_text="The review of this row: the page of the published review its quality "
            "comes from (`review_id`); null when it has none.",
        ),
        _review_page,
    ),
    RowField("name", _CHAR(allow_null=True), Payload("name")),
    RowField("display_name", _CHAR(), Payload("display_name")),
    RowField("origin", _CHAR(), Payload("origin")),
    RowField("family", _CHAR(), Payload("family")),
    RowField("tags", serializers.ListField(child=_CHAR()), Payload("tags")),
    RowField("task_count", serializers.IntegerField(allow_null=True), Payload("task_count")),
    RowField("notes", _CHAR(), Payload("notes")),
    RowField("dataset_id", _CHAR(allow_null=True), Payload("dataset_id")),
    RowField("dataset_revision", _CHAR(allow_null=True), Payload("dataset_revision")),
    # The payload's `url` is the dataset's; the row's own `url` is its place in the API.
    RowField(
        "dataset_url",
        _CHAR(allow_null=True, help_text="The pinned dataset (e.g. the Hugging Face revision)."),
        Payload("url"),
    ),
    RowField("canonical_source", _CHAR(allow_null=True), Payload("canonical_source")),
    RowField("canonical_url", _CHAR(allow_null=True), Payload("canonical_url")),
    RowField("verifier_name", _CHAR(allow_null=True), Payload("verifier_name")),
    RowField("verifier_revision", _CHAR(allow_null=True), Payload("verifier_revision")),
    RowField("verifier_url", _CHAR(allow_null=True), Payload("verifier_url")),
    RowField(
        "type",
        serializers.ChoiceField(
            choices=[*SourceType.values, UNCLASSIFIED],
            help_text="Filter with the same value: `?type=RLVR`; `?type=unknown` for the empty "
            "one.",
        ),
        Payload("type"),
    ),
    RowField(
        "type_label",
        _CHAR(),
        lambda values, payload, links, rates: labels.type_label(payload.get("type") or ""),
    ),
    RowField(
        "turns", serializers.ChoiceField(choices=[*Turns.values, UNCLASSIFIED]), Payload("turns")
    ),
    RowField(
        "turns_label",
        _CHAR(),
        lambda values, payload, links, rates: payload.get("turns") or "Unknown",
    ),
    RowField("is_benchmark", serializers.BooleanField(), Payload("is_benchmark")),
    RowField("kind", serializers.ChoiceField(choices=SourceKind.values), Payload("kind")),
    RowField("status", serializers.ChoiceField(choices=SourceStatus.values), Payload("status")),
    RowField("pipeline", serializers.JSONField(allow_null=True), Payload("pipeline")),
    RowField(
        "review_url",
        _CHAR(
            allow_null=True,
            help_text="Not the review of this row (that is `review_page_url`): the evidence link "
            "an authored assessment in the source's definition names (`review.evidence_url`), "
            "kept as the catalog artifact has it; null when the definition names none, as for "
            "every packaged source.",
        ),
        Payload("review_url"),
    ),
    RowField(
        "quality",
        serializers.ChoiceField(
            choices=Quality.values, allow_null=True, help_text="Effective quality."
        ),
        Column("effective_quality"),
    ),
    RowField(
        "quality_label",
        _CHAR(help_text="Good, Some issues, Bad, Needs re-review, Unrated or Unreviewed."),
        _quality_label,
    ),
    RowField(
        "example_review",
        serializers.BooleanField(
            help_text="The current review is a labelled example, not a real judgment."
        ),
        Column("display_review_is_example"),
    ),
    RowField(
        "difficulty",
        _CHAR(
            allow_null=True,
            help_text="Difficulty text, each arm under its own status (not a filter value: filter "
            "with `?difficulty_status=` or `?difficulty=`; the numbers are the "
            "`difficulty_<role>_*` columns).",
        ),
        Column("difficulty_text"),
    ),
    RowField(
        "difficulty_status",
        serializers.ChoiceField(
            choices=MeasurementStatus.values,
            allow_null=True,
            help_text="Status of the difficulty summary; filter with the same value: "
            "`?difficulty_status=historical` (`unknown` for null).",
        ),
        Column("difficulty_status"),
    ),
    *(field for role in SOLVE_RATE_ROLES for field in _solve_rates(role)),
    RowField(
        "difficulty_summary", serializers.JSONField(allow_null=True), Column("difficulty_summary")
    ),
    RowField(
        "review_applicability",
        serializers.ChoiceField(choices=Applicability.values),
        Column("review_applicability"),
    ),
    RowField("review_stale", serializers.BooleanField(), Column("review_stale")),
    RowField("verifier_issues", OpenVerifierIssueSerializer(many=True), Column("open_issues")),
    RowField(
        "grading_tracking",
        serializers.ChoiceField(choices=GradingTracking.values),
        Column("grading_tracking"),
    ),
    RowField("review_grading_revision", _CHAR(allow_null=True), Column("review_grading_revision")),
    RowField("review_id", _CHAR(allow_null=True), Column("display_review_id")),
    RowField("review_date", _CHAR(allow_null=True), Column("display_review_date_text")),
    RowField("review_source_revision", _CHAR(allow_null=True), _shown("review_source_revision")),
    RowField(
        "review_verifier_revision", _CHAR(allow_null=True), _shown("review_verifier_revision")
    ),
    RowField("traces", serializers.IntegerField(allow_null=True), Column("display_traces")),
    RowField("active", serializers.BooleanField(), Column("active")),
)
ROW_FIELDS = tuple(field.name for field in ROW)
