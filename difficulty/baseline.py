"""The reviewer solve baseline derived from a review collection's native task attempts.

The review page derives it when ``difficulty/context.json`` records none, and ``make_difficulty``
records it from the source's current review: both count here, so they cannot disagree.
"""

from __future__ import annotations

from typing import Any

COUNT_KEYS = ("solved", "verified", "attempted", "unverified")


def _reviews(collection: Any) -> list[dict[str, Any]]:
    reviews = collection.get("reviews") if isinstance(collection, dict) else None
    return [item for item in reviews or [] if isinstance(item, dict)]


def _verification(review_item: dict[str, Any]) -> dict[str, Any]:
    value = (review_item.get("attributes") or {}).get("verification")
    return value if isinstance(value, dict) else {}


def is_solver_attempt(review_item: dict[str, Any]) -> bool:
    """A runtime review of a solver's attempt. A replay (``attributes.replay``: validate_fix's
    failing inputs and incorrect-answer controls, reproduce_defect's cases) re-executes saved or
    supplied answers with no model call: native evidence, but no attempt to solve."""
    attributes = review_item.get("attributes") or {}
    return review_item.get("method") == "runtime_execution" and "replay" not in attributes


def derived_counts(*, collection: Any) -> dict[str, int]:
    """solved = status ``verified`` and ``passed`` true; verified = status ``verified``;
    attempted = every solver attempt's runtime review; unverified = attempted − verified."""
    runtime = [item for item in _reviews(collection) if is_solver_attempt(item)]
    verified = [item for item in runtime if _verification(item).get("status") == "verified"]
    solved = [item for item in verified if _verification(item).get("passed") is True]
    return {
        "solved": len(solved),
        "verified": len(verified),
        "attempted": len(runtime),
        "unverified": len(runtime) - len(verified),
    }


def judge_labels(*, collection: Any) -> list[str]:
    """The distinct labels of the collection's model judges, in collection order."""
    labels = [
        (item.get("reviewer") or {}).get("label")
        for item in _reviews(collection)
        if item.get("method") == "model_judgment"
    ]
    return list(dict.fromkeys(str(label) for label in labels if label))
