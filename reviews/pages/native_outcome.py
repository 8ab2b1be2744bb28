"""A task's native verifier result in words, read from its runtime review's recorded
``attributes.verification``: the source page's sampled tasks and the review page's task list say it
the same way."""

from __future__ import annotations

from typing import Any

VERIFICATION_WORDS = {
    "verified": "Verified",
    "error": "Verifier error",
    "unavailable": "Unavailable",
}


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def outcome_of(review: dict[str, Any] | None) -> tuple[str, str]:
    """The native verifier's result of a task's runtime review, in words, and its state
    ("passed", "failed" or "unverified": the outcome's chip)."""
    if review is None:
        return "No native attempt recorded", "unverified"
    verification = _object(_object(review.get("attributes")).get("verification"))
    status = verification.get("status")
    if status != "verified":
        reason = verification.get("reason")
        word = VERIFICATION_WORDS.get(str(status), "Not verified")
        return (f"{word} · {reason}" if reason else word), "unverified"
    passed = verification.get("passed")
    score = verification.get("score")
    parts = ["Passed" if passed else "Failed" if passed is False else "Verified"]
    if score is not None and not isinstance(score, bool):
        parts.append(f"score {score}")
    return " · ".join(parts), "passed" if passed else "failed"
