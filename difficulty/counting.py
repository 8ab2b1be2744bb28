"""How one saved attempt counts in a difficulty arm, and a report's counts held against the
archived attempts they add up from.

``counted_as`` is the counting rule make_difficulty writes (``production/outcomes.py`` records it
in words in every report): **verified** when the native verifier returned a verdict, **solved**
when verified, passed and not cut by the output budget, **unverified** otherwise. Publication
(``difficulty.publication``) recounts every arm of ``difficulty.json`` from each outcome's archived
``<execution_path>/attempt.json`` before anything is written: each outcome's ``counted_as`` (when
the report records it) and the arm's ``solved``/``verified`` must be what the attempts add up to.
A contradiction is refused by the reviews' evidence rule
(``reviews.production.format.evidence_claims``), in its one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from difficulty.reports import models_of, outcomes_of
from reviews.production.format.evidence_claims import (
    ATTEMPT_FILE,
    Archive,
    contradicted,
    json_object,
)

LENGTH = "length"


def counted_as(*, attempt: Mapping[str, Any]) -> str:
    """``solved`` | ``unsolved`` | ``unverified`` for a saved attempt record."""
    verification = attempt.get("verification")
    verification = verification if isinstance(verification, dict) else {}
    stop_reason = attempt.get("stop_reason") or (
        "error" if verification.get("status") == "error" else None
    )
    verified = verification.get("status") == "verified"
    if verified and verification.get("passed") is True and stop_reason != LENGTH:
        return "solved"
    return "unsolved" if verified else "unverified"


def check_report_counts(*, report: Mapping[str, Any], archive: Archive) -> None:
    """Every arm's counts are what its archived attempts add up to (``ClaimContradicted``)."""
    for model in models_of(dict(report)):
        arm = f"difficulty.json models[{model.get('size')}]"
        counted = {"solved": 0, "verified": 0}
        for index, outcome in enumerate(outcomes_of(model)):
            execution = outcome.get("execution_path")
            path = f"{execution}/{ATTEMPT_FILE}"
            attempt = archive.get(path) if isinstance(execution, str) else None
            claimed = outcome.get("counted_as")
            record = json_object(attempt)
            if record is None:
                contradicted(path, field="counted_as", archived="no archived attempt",
                             claimed=claimed, who=f"{arm} task_outcomes[{index}]")  # fmt: skip
            kind = counted_as(attempt=record)
            if "counted_as" in outcome and kind != claimed:
                contradicted(path, field="counted_as", archived=kind, claimed=claimed,
                             who=f"{arm} task_outcomes[{index}]")  # fmt: skip
            counted["solved"] += kind == "solved"
            counted["verified"] += kind != "unverified"
        for key, total in counted.items():
            if model.get(key) != total:
                contradicted(f"{arm}.task_outcomes[].execution_path/{ATTEMPT_FILE}", field=key,
                             archived=total, claimed=model.get(key), who=arm)  # fmt: skip
