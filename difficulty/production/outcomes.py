"""From saved attempts to one arm's numbers: task outcomes, counts and generation outcomes.

The counting rule, recorded in every report's ``limitations`` and each arm's ``generation_qc``:

- **verified**: the native verifier returned a verdict (status ``verified``). An attempt whose
  response was cut by the output budget (``finish_reason`` ``length``, thinking included) is
  scored by the verifier on what the model produced and stays in this denominator: under the
  stated budget the model did not finish.
- **solved**: verified, ``passed`` true, and not cut by the output budget — a cut response is
  never counted as solved.
- **unverified**: everything else (solver timeouts and HTTP failures, attempts stopped at the
  worker timeout, verifier failures, no terminal verdict); excluded from the solve rate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from difficulty.counting import LENGTH, counted_as
from difficulty.wilson import wilson_95
from reviews.production.runtime.tasks import Task

COUNTING_RULE = (
    "Verified attempts are those the native verifier scored; responses cut by the output budget "
    "(finish_reason length, thinking included) are scored as produced, stay in the verified "
    "count and are never counted as solved. Solver timeouts or HTTP failures, attempts stopped at "
    "the worker timeout, verifier failures and attempts without a terminal verdict are unverified "
    "and excluded from the solve rate."
)


def task_outcome(*, run_dir: Path, task: Task, attempt: dict[str, Any]) -> dict[str, Any]:
    """One ``task_outcomes[]`` entry for a saved attempt."""
    verification = attempt.get("verification") or {}
    stop_reason = attempt.get("stop_reason") or (
        "error" if verification.get("status") == "error" else None
    )
    return {
        "task_id": task.id,
        "row_index": task.row_index,
        "verification": verification,
        "verifier_executed": bool(attempt.get("verifier_executed")),
        "done": bool(attempt.get("done")),
        "attempt_complete": bool(attempt.get("done"))
        and verification.get("status") == "verified"
        and stop_reason != LENGTH,
        "stop_reason": stop_reason,
        "turns": attempt.get("turns"),
        "execution_path": attempt["execution_path"],
        # The rule publication recounts the archived attempts by.
        "counted_as": counted_as(attempt=attempt),
        "final_answer": _has_final_answer(run_dir=run_dir, attempt=attempt),
    }


def _has_final_answer(*, run_dir: Path, attempt: dict[str, Any]) -> bool:
    """Whether the last saved solver response carries non-empty content (reasoning alone is no
    answer)."""
    solver = run_dir / attempt["execution_path"] / "solver"
    turns = sorted(solver.glob("turn-*/response.json")) if solver.is_dir() else []
    if not turns:
        return False
    try:
        choices = json.loads(turns[-1].read_text(encoding="utf-8")).get("choices") or []
    except (OSError, ValueError, AttributeError):
        return False
    message = (choices[0] or {}).get("message") or {} if choices else {}
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, str) and bool(content.strip())


def arm_counts(*, outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """``solved``/``verified``/``unverified``/``attempted``, ``solve_rate`` and ``wilson_95``."""
    attempted = len(outcomes)
    verified = sum(1 for o in outcomes if o["counted_as"] != "unverified")
    solved = sum(1 for o in outcomes if o["counted_as"] == "solved")
    return {
        "solved": solved,
        "verified": verified,
        "unverified": attempted - verified,
        "attempted": attempted,
        "solve_rate": solved / verified if verified else None,
        "wilson_95": wilson_95(solved=solved, verified=verified),
    }


def generation_qc(*, outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """How the generations ended, and where each kind was counted."""

    def count(predicate: Any) -> int:
        return sum(1 for outcome in outcomes if predicate(outcome))

    def status(outcome: dict[str, Any]) -> Any:
        return outcome["verification"].get("status")

    return {
        "output_budget_exhausted": count(lambda o: o["stop_reason"] == LENGTH),
        "no_final_answer": count(lambda o: not o["final_answer"]),
        "worker_timeouts": count(lambda o: o["stop_reason"] == "timeout"),
        "solver_errors": count(
            lambda o: (
                status(o) == "error"
                and not o["verifier_executed"]
                and o["stop_reason"] != "timeout"
            )
        ),
        "verifier_errors": count(lambda o: status(o) == "error" and o["verifier_executed"]),
        "verification_unavailable": count(lambda o: status(o) == "unavailable"),
        "counting": {
            "output_budget_exhausted": "verified, never solved",
            "no_final_answer": "verified when the native verifier scored the attempt",
            "worker_timeouts": "unverified",
            "solver_errors": "unverified",
            "verifier_errors": "unverified",
            "verification_unavailable": "unverified",
        },
    }
