"""A scripted review model for the test server: it solves ``Compute a + b.`` prompts and answers
judge, segment, consolidation and coalescer calls with schema-valid opinions."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.model_server import RecordedRequest, completion

SUM = re.compile(r"Compute (\d+) \+ (\d+)")


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
        "findings": findings
        if findings is not None
        else [
            {
                "dimension": "verifier",
                "text": "The gsm8k verifier compared the final answer after ####.",
                "severity": "info",
                "kind": "observation",
            }
        ],
        "tags": [{"namespace": "domain", "value": "math"}],
    }


class ReviewModel:
    """Callable responder; ``wrong`` makes the solver answer incorrectly."""

    def __init__(self, *, verdict: str = "keep", wrong: bool = False) -> None:
        self.verdict = verdict
        self.wrong = wrong

    def solver_answer(self, request: RecordedRequest) -> str:
        text = " ".join(str(m.get("content")) for m in request.messages if m["role"] == "user")
        match = SUM.search(text)
        total = int(match.group(1)) + int(match.group(2)) if match else 0
        if self.wrong:
            total += 1
        return f"Adding the numbers gives {total}.\n#### {total}"

    def __call__(self, request: RecordedRequest) -> dict[str, Any]:
        kind = request_kind(request)
        model = request.model or "test-model"
        if kind == "solver":
            return completion(self.solver_answer(request), model=model)
        if kind == "coalescer":
            required = request.user_payload["required_syntheses"]
            syntheses = [
                {**opinion(f"Synthesis of {subject}.", self.verdict), "subject_id": subject}
                for subject in required
            ]
            return completion(json.dumps({"syntheses": syntheses}), model=model)
        return completion(
            json.dumps(opinion(f"Scripted {kind} opinion.", self.verdict)), model=model
        )
