"""Rating derivation of a `rating` collection and its cap while verifier defects are
open."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from atlas.rules.vocabularies import Quality
from reviews.production.format.synthesis_selection import is_source_synthesis

DEFAULT_UNRATED_JUDGE_MODELS = ("model:Qwen/Qwen3-Coder-30B-A3B-Instruct",)
GOOD_BLOCKING_SEVERITIES = frozenset({"medium", "high", "critical"})
BAD_REQUIRED_SEVERITIES = frozenset({"high", "critical"})


def unrated_judge_models() -> frozenset[str]:
    return frozenset(getattr(settings, "ATLAS_UNRATED_JUDGE_MODELS", DEFAULT_UNRATED_JUDGE_MODELS))


def source_syntheses(collection: dict[str, Any]) -> list[dict[str, Any]]:
    """The collection's syntheses of a source-level subject (publication requires exactly one)."""
    subjects = {subject["id"]: subject for subject in collection["subjects"]}
    return [
        review
        for review in collection["reviews"]
        if is_source_synthesis(review, subjects.get(review["subject_id"]))
    ]


def source_synthesis(collection: dict[str, Any]) -> dict[str, Any] | None:
    """The first synthesis on a source-level subject (validation guarantees there is one)."""
    return next(iter(source_syntheses(collection)), None)


def derive_rating(collection: dict[str, Any]) -> str | None:
    reviews = collection["reviews"]
    source = source_synthesis(collection)
    judges = [r for r in reviews if r["method"] == "model_judgment"]
    runtime = [r for r in reviews if r["method"] == "runtime_execution"]
    issue_severities = {
        finding["severity"]
        for review in [*judges, *([source] if source else [])]
        for finding in review["findings"]
        if finding["kind"] == "issue"
    }
    if any(judge["reviewer"]["id"] in unrated_judge_models() for judge in judges):
        return None
    source_verdict = source["verdict"] if source else None
    rejecting_judges = sum(1 for judge in judges if judge["verdict"] == "reject")
    if (
        source_verdict == "reject"
        and rejecting_judges * 2 > len(judges)
        and issue_severities & BAD_REQUIRED_SEVERITIES
    ):
        return Quality.BAD
    if (
        source_verdict == "keep"
        and runtime
        and all(_verification_status(r) == "verified" for r in runtime)
        and not issue_severities & GOOD_BLOCKING_SEVERITIES
    ):
        return Quality.GOOD
    return Quality.SOME_ISSUES


def _verification_status(review: dict[str, Any]) -> Any:
    verification = review["attributes"].get("verification")
    return verification.get("status") if isinstance(verification, dict) else None
