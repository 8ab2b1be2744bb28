"""A scripted review model for the scripted chat server: it solves the ``Compute a + b.`` tasks of
``reviews.production.examples.marinskyrl`` and answers judge, segment, consolidation and coalescer
calls with schema-valid opinions. ``make demo`` runs ``make_review`` with it (its opinions labelled
as examples); the tests' model server answers with it too."""

from __future__ import annotations

import json
import re
from typing import Any

from reviews.production.examples.chat_server import RecordedRequest, completion

SUM = re.compile(r"Compute (\d+) \+ (\d+)")
OBSERVATION = {
    "dimension": "verifier",
    "text": "The gsm8k verifier compared the final answer after ####.",
    "severity": "info",
    "kind": "observation",
}


def request_kind(request: RecordedRequest) -> str:
    system = request.system
    if system.startswith("You combine independent reviews"):
        return "coalescer"
    if "ONE SEGMENT" in system:
        return "segment"
    if "Consolidate them" in system:
        return "consolidation"
    if system.startswith("You are one independent judge"):
        return "judge"
    return "solver"


def opinion(summary: str, verdict: str = "keep", findings: list | None = None) -> dict[str, Any]:
    return {
        "summary": summary,
        "verdict": verdict,
        "metrics": [{"key": "confidence_note", "value": "scripted", "scale": None}],
        "findings": findings if findings is not None else [dict(OBSERVATION)],
        "tags": [{"namespace": "domain", "value": "math"}],
    }


def task_total(request: RecordedRequest) -> int:
    """The correct answer of the ``Compute a + b`` task a solver request carries (0 if none)."""
    match = SUM.search(request.user_text)
    return int(match.group(1)) + int(match.group(2)) if match else 0


class ReviewModel:
    """Callable responder. ``wrong`` makes the solver answer incorrectly, ``separators`` write its
    totals with a thousands separator (``#### 2,006``), ``wrong_totals`` names the tasks (by their
    correct total) it answers off by one, ``answer_line`` is how the final answer is written
    (gsm8k's ``#### {}``, the aime environment's ``Answer: {}``). ``notice`` starts every
    opinion's summary (``make demo`` labels its reviews as examples); ``findings`` replaces the
    default observation."""

    def __init__(
        self,
        *,
        verdict: str = "keep",
        wrong: bool = False,
        separators: bool = False,
        wrong_totals: frozenset[int] = frozenset(),
        notice: str = "",
        findings: list[dict[str, Any]] | None = None,
        answer_line: str = "#### {}",
    ) -> None:
        self.verdict = verdict
        self.wrong = wrong
        self.separators = separators
        self.wrong_totals = wrong_totals
        self.notice = notice
        self.findings = findings
        self.answer_line = answer_line

    def solver_answer(self, request: RecordedRequest) -> str:
        total = task_total(request)
        if self.wrong or total in self.wrong_totals:
            total += 1
        written = f"{total:,}" if self.separators else str(total)
        return f"Adding the numbers gives {written}.\n{self.answer_line.format(written)}"

    def summary(self, text: str) -> str:
        return f"{self.notice}. {text}" if self.notice else text

    def opinion(self, text: str) -> dict[str, Any]:
        findings = [dict(f) for f in self.findings] if self.findings is not None else None
        return opinion(self.summary(text), self.verdict, findings)

    def judged(self, kind: str, payload: Any) -> dict[str, Any]:
        """A judge's opinion as make_review's guards accept it: the summary states the native
        outcome and every finding cites the attempt's record and names the task."""
        payload = payload if isinstance(payload, dict) else {}
        outcome = payload.get("native_outcome") or {}
        verification = outcome.get("verification") or {}
        passed = verification.get("passed")
        said = "passed" if passed is True else "failed" if passed is False else "did not decide"
        answer = self.opinion(
            f"Scripted {kind} opinion; the native verifier {said} the solver's answer."
        )
        execution = outcome.get("execution_path")
        task_id = (payload.get("task") or {}).get("id")
        if isinstance(execution, str) and isinstance(task_id, str):
            record = f"{execution.rsplit('/', 1)[0]}/attempt.json"
            for finding in answer["findings"]:
                finding["text"] = f"{finding['text']} (task {task_id}, {record})"
        return answer

    def __call__(self, request: RecordedRequest) -> dict[str, Any]:
        kind = request_kind(request)
        model = request.model or "test-model"
        if kind == "solver":
            return completion(self.solver_answer(request), model=model)
        if kind == "coalescer":
            required = request.user_payload["required_syntheses"]
            syntheses = [
                {**self.opinion(f"Synthesis of {subject}."), "subject_id": subject}
                for subject in required
            ]
            return completion(json.dumps({"syntheses": syntheses}), model=model)
        return completion(json.dumps(self.judged(kind, request.user_payload)), model=model)
