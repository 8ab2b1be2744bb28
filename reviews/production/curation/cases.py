"""Cases: one saved native input, one answer, one expectation — and what the native verifier did.

A case names what a curator claims ("this saved answer is correct, so the verifier should accept
it") and records what the worker observed; reproduction needs every claimed case to be contradicted
by the native verifier, fix validation needs every case to hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from reviews.production.curation.saved_runs import SavedAttempt, answer_text, completion_of
from reviews.production.format.evidence_claims import meets, observed_outcome
from reviews.production.runtime.errors import CurationRefused, UsageError

EXPECTATIONS = {
    "accepted": "the native verifier accepts the answer",
    "rejected": "the native verifier rejects the answer",
    "graded": "the native environment grades the answer without an error",
}
DEFECT_KINDS = {
    "verifier": "verifier",
    "task_import": "task_import",
    "judge_output": "judge_output",
}
CONTROL_KINDS = ("saved_wrong", "off_by_one", "empty", "unformatted")
REFERENCE_PLACEHOLDER = "{reference}"
# The last number of an answer, with thousands separators and decimals (e.g. 1,234.5 or -17).
NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Answer:
    """The solver turns a case replays and where they came from."""

    source: str  # saved | reference | curator | control:<kind>
    responses: tuple[dict[str, Any], ...]
    origin: str  # the saved attempt or "curator"
    # A Harbor answer is an agent run in the task's container (harbor_cases.py): the oracle, no
    # action, or typed commands; it replaces the configured agent and answers without a model.
    agent: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        """The final answer's text (the last turn), as it reads in messages; a Harbor answer's
        commands, or the agent's name when it types none."""
        if self.agent is not None:
            typed = self.agent.get("kwargs", {}).get("keystrokes")
            return "".join(typed) if typed else f"({self.agent['name']} agent)"
        if not self.responses:
            return ""
        return answer_text(self.responses[-1]["choices"][0]["message"])

    @property
    def label(self) -> str:
        names = {
            "saved": "saved answer",
            "reference": "reference answer",
            "curator": "curator's answer",
        }
        if self.source.startswith("control:"):
            return f"{self.source.split(':', 1)[1].replace('_', '-')} control"
        return names.get(self.source, self.source)

    def record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "source": self.source,
            "origin": self.origin,
            "text": self.text,
            "messages": [r["choices"][0]["message"] for r in self.responses],
        }
        if self.agent is not None:
            record["agent"] = self.agent
        return record


def supplied(text: str, *, source: str, origin: str = "curator") -> Answer:
    message = {"role": "assistant", "content": text}
    return Answer(source=source, responses=(completion_of(message),), origin=origin)


@dataclass(frozen=True)
class Case:
    number: int
    attempt: SavedAttempt
    answer: Answer
    expectation: str  # a key of EXPECTATIONS
    role: str = "claim"  # claim | failing_input | control

    @property
    def name(self) -> str:
        return f"{self.attempt.execution_path} ({self.answer.label})"


@dataclass(frozen=True)
class Observation:
    case: Case
    execution_path: str | None  # in the case run directory; None when the worker never started
    attempt: dict[str, Any] | None
    worker_error: str | None = None

    @property
    def verification(self) -> dict[str, Any]:
        verification = (self.attempt or {}).get("verification")
        return verification if isinstance(verification, dict) else {}

    @property
    def outcome(self) -> str:
        """accepted | rejected | error | unavailable | worker_failed (publication reads the
        archived attempt by the same rule: ``format.evidence_claims``)"""
        if self.worker_error is not None:
            return "worker_failed"
        return observed_outcome(self.attempt)

    @property
    def met(self) -> bool:
        """The observation is what the case expects."""
        return meets(expected=self.case.expectation, outcome=self.outcome)

    @property
    def described(self) -> str:
        outcome = self.outcome
        if outcome == "worker_failed":
            return f"the native worker failed ({self.worker_error})"
        score = self.verification.get("score")
        if outcome in ("accepted", "rejected"):
            return f"{outcome} (score {score:g})" if isinstance(score, int | float) else outcome
        return f"{outcome}: {self.verification.get('reason')}"

    def record(self) -> dict[str, Any]:
        case = self.case
        return {
            "case": case.number,
            "role": case.role,
            "task_id": case.attempt.task.get("id"),
            "original_attempt": case.attempt.execution_path,
            "answer": case.answer.record(),
            "expected": case.expectation,
            "expectation": EXPECTATIONS[case.expectation],
            "observed": self.outcome,
            "observed_description": self.described,
            "verification": self.verification or None,
            "verifier_executed": (self.attempt or {}).get("verifier_executed"),
            "met_expectation": self.met,
            "execution_path": self.execution_path,
            "worker_error": self.worker_error,
        }


# --- answers a curator names -----------------------------------------------------------------


def reference_answer(attempt: SavedAttempt, *, template: str) -> Answer:
    """The task's reference answer (MarinSkyRL's ``reward_spec.ground_truth``) in ``template``."""
    if REFERENCE_PLACEHOLDER not in template:
        raise UsageError(f"--answer-template must contain {REFERENCE_PLACEHOLDER}")
    spec = (attempt.task.get("extras") or {}).get("reward_spec")
    reference = spec.get("ground_truth") if isinstance(spec, dict) else None
    if isinstance(reference, list) and reference:
        reference = reference[0]
    if not isinstance(reference, str | int | float) or isinstance(reference, bool):
        raise CurationRefused(
            f"Task {attempt.task.get('id')} records no reference answer "
            "(extras.reward_spec.ground_truth)"
        )
    return supplied(
        template.replace(REFERENCE_PLACEHOLDER, str(reference)),
        source="reference",
        origin=attempt.execution_path,
    )


def saved_answer(attempt: SavedAttempt) -> Answer:
    if not attempt.responses:
        raise CurationRefused(f"{attempt.execution_path} saved no solver answer to replay")
    return Answer(source="saved", responses=attempt.responses, origin=attempt.execution_path)


# --- incorrect-answer controls (validate_fix) ------------------------------------------------


def off_by_one(text: str) -> str | None:
    """The answer with its last number one larger, written the same way (separators kept)."""
    matches = list(NUMBER.finditer(text))
    if not matches:
        return None
    last = matches[-1]
    number = last.group(0)
    separated = "," in number
    bumped = Decimal(number.replace(",", "")) + 1  # exact: the decimal places are kept
    replacement = f"{bumped:,}" if separated else str(bumped)
    return text[: last.start()] + replacement + text[last.end() :]


def unformatted(text: str) -> str | None:
    """The answer's last number alone, without the format the task asks for; None when the
    answer is already just that number (there is no format to drop)."""
    matches = list(NUMBER.finditer(text))
    if not matches:
        return None
    number = matches[-1].group(0)
    return number if number != text.strip() else None


def generated_controls(answer: Answer, *, origin: str) -> list[tuple[str, Answer]]:
    """(kind, answer) for each generated control that applies to ``answer``: an off-by-one
    number, an empty answer and the answer without its required format."""
    text = answer.text
    controls: list[tuple[str, Answer]] = []
    for kind, value in (
        ("off_by_one", off_by_one(text)),
        ("empty", ""),
        ("unformatted", unformatted(text)),
    ):
        if value is not None:
            controls.append((kind, supplied(value, source=f"control:{kind}", origin=origin)))
    return controls
