"""Example difficulty evidence for an example review run directory. Every file written here is an
example: its limitations say so, and none of its numbers describe a real measurement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from difficulty.registry import current_protocol
from difficulty.wilson import wilson_95

EXAMPLE_LIMITATION = "Example report generated for demonstration and tests; not a real measurement."
EXAMPLE_TASK_IDS = ("task-1", "task-2", "task-10")
EXAMPLE_ESTIMATED_AT = "2026-01-15T12:00:00Z"
HISTORY_EXAMPLE = "difficulty/history/20250601T000000Z-000000000000.json"
INVALID_EXAMPLE = "difficulty/examples/invalid-protocol-report.json"
GENERATION_FOLLOWUP = "difficulty/followups/generation-setting/difficulty.json"
HOSTED_FOLLOWUP = "difficulty/followups/hosted/difficulty.json"
SOLVED_BY_SIZE = {"small": 1, "large": 2, "hosted": 3}


def _model_entry(*, size: str, solved: int) -> dict[str, Any]:
    protocol = current_protocol()
    role = protocol.required_role(size)
    parameters = protocol.applied_parameters(role)
    verifier = {
        requirement.key: {**requirement.equals, "max_output_tokens": 4096}
        for requirement in protocol.verifier_requirements
    }
    verified = len(EXAMPLE_TASK_IDS)
    outcomes = []
    for index, task_id in enumerate(EXAMPLE_TASK_IDS):
        passed = index < solved
        outcomes.append(
            {
                "task_id": task_id,
                "row_index": index,
                "verification": {
                    "status": "verified",
                    "score": 1.0 if passed else 0.0,
                    "passed": passed,
                    "reason": "Example verifier outcome.",
                },
                "verifier_executed": True,
                "done": True,
                "attempt_complete": passed,
                "stop_reason": "stop" if passed else "length",
                "turns": 1,
                "execution_path": f"difficulty/{size}/attempts/{task_id}",
            }
        )
    return {
        "size": size,
        "model": role.model,
        "model_revision": None if role.provider else "0" * 40,
        "provider": role.provider or "Example local model service",
        "solved": solved,
        "verified": verified,
        "unverified": 0,
        "attempted": verified,
        "solve_rate": solved / verified,
        "wilson_95": wilson_95(solved=solved, verified=verified),
        "generation_parameters": parameters,
        "serving_configuration": {"engine": "example", "dtype": "bfloat16"},
        "generation_qc": {"output_budget_exhausted": verified - solved, "no_final_answer": 0},
        "verifier_configuration": verifier,
        "task_outcomes": outcomes,
    }


def example_report(*, atlas_id: str, source_revision: str | None) -> dict[str, Any]:
    """A current, protocol-conforming example report with three arms."""
    protocol = current_protocol()
    report: dict[str, Any] = {
        "atlas_id": atlas_id,
        "estimated_at": EXAMPLE_ESTIMATED_AT,
        "sampling": {"task_count": len(EXAMPLE_TASK_IDS), "method": "seeded random", "seed": 42},
        "split": "train",
        "population_count": 100,
        "protocol": {
            "id": protocol.id,
            **protocol.limits,
            "artifacts": [],
            "run_identities": [
                {"size": size, "run_identity_path": f"difficulty/{size}/run.json"}
                for size in SOLVED_BY_SIZE
            ],
        },
        "models": [_model_entry(size=s, solved=n) for s, n in SOLVED_BY_SIZE.items()],
        "protocol_followups": [],
        "limitations": [EXAMPLE_LIMITATION],
    }
    if source_revision is not None:
        report["source_revision"] = source_revision
    return report


def invalid_example_report(*, atlas_id: str, source_revision: str | None) -> dict[str, Any]:
    """Carries the current protocol id with a wrong output limit, so it classifies as invalid."""
    report = example_report(atlas_id=atlas_id, source_revision=source_revision)
    report["protocol"]["max_output_tokens"] = 8192
    report["limitations"] = [EXAMPLE_LIMITATION, "Example of an invalid protocol record."]
    return report


def historical_example_report(*, atlas_id: str) -> dict[str, Any]:
    report = example_report(atlas_id=atlas_id, source_revision=None)
    report["estimated_at"] = "2025-06-01T00:00:00Z"
    report["protocol"]["id"] = "atlas-difficulty-qwen35-9b"
    report["models"][0]["model"] = "Qwen/Qwen3.5-9B"
    report["limitations"] = [EXAMPLE_LIMITATION, "Example of an archived earlier comparison."]
    return report


def _followups(report: dict[str, Any]) -> list[dict[str, Any]]:
    large, hosted = report["models"][1], report["models"][2]
    return [
        {
            "id": "example-generation-setting",
            "state": "complete",
            "kind": "generation_setting",
            "changed_parameter": {"name": "max_tokens", "earlier": 16384, "new": 32768},
            "model": large["model"],
            "provider": large["provider"],
            "model_revision": large["model_revision"],
            "generation_parameters": {**large["generation_parameters"], "max_tokens": 32768},
            "limitations": [EXAMPLE_LIMITATION],
            "report_path": GENERATION_FOLLOWUP,
            "original_report_path": "difficulty.json",
            "solved": 3, "verified": 3, "unverified": 0, "attempted": 3, "solve_rate": 1.0,
            "wilson_95": wilson_95(solved=3, verified=3),
        },
        {
            "id": "example-hosted",
            "state": "complete",
            "kind": "alternate_checkpoint",
            "model": hosted["model"],
            "provider": hosted["provider"],
            "model_revision": None,
            "checkpoint_change": {"earlier": None, "new": "example-alternate-checkpoint"},
            "generation_parameters": hosted["generation_parameters"],
            "verifier_configuration_change": {"judges": "example judge configuration"},
            "limitations": [EXAMPLE_LIMITATION],
            "report_path": HOSTED_FOLLOWUP,
            "original_report_path": "difficulty.json",
            "solved": 2, "verified": 3, "unverified": 0, "attempted": 3, "solve_rate": 2 / 3,
            "wilson_95": wilson_95(solved=2, verified=3),
        },
    ]  # fmt: skip


def _write_json(path: Path, document: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _write_attempt(*, run_dir: Path, model: dict[str, Any], outcome: dict[str, Any]) -> None:
    base = run_dir / outcome["execution_path"]
    prompt = f"Example task {outcome['task_id']}: what is 2 + 2?"
    _write_json(base / "input.json", {"task_id": outcome["task_id"], "prompt": prompt})
    turn = base / "solver" / "turn-000"
    _write_json(
        turn / "request.json",
        {"model": model["model"], "messages": [{"role": "user", "content": prompt}],
         **model["generation_parameters"]},
    )  # fmt: skip
    finish = outcome["stop_reason"]
    _write_json(
        turn / "response.json",
        {
            "id": f"example-{outcome['task_id']}",
            "model": model["model"],
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": "4" if finish == "stop"
                                     else None, "reasoning_content": "Example reasoning."}}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
        },
    )  # fmt: skip
    attempt = {
        "verification": outcome["verification"],
        "verifier_executed": outcome["verifier_executed"],
        "done": outcome["done"],
        "turns": outcome["turns"],
        "stop_reason": outcome["stop_reason"],
        "execution_path": outcome["execution_path"],
    }
    _write_json(base / "attempt.json", attempt)
    event = {"event": "verify", "task_id": outcome["task_id"], **outcome["verification"]}
    (base / "verifier-trace.jsonl").write_text(json.dumps(event) + "\n", encoding="utf-8")
    (base / "verifier.stdout").write_text("Example verifier output.\n", encoding="utf-8")


def _run_identity(*, model: dict[str, Any]) -> dict[str, Any]:
    protocol = current_protocol()
    return {
        "record_kind": "example",
        "config": {
            "model": {
                "name": model["model"],
                "revision": model["model_revision"],
                "provider": model["provider"],
                "parameters": model["generation_parameters"],
                "timeout": 600,
                "context_budget": protocol.limits["max_input_tokens"],
                "context_window": protocol.limits["context_window"],
            },
            "runtime": {"agent_timeout": 900, "max_turns": 1, "worker_timeout": 1200},
        },
        "marinskyrl": {"commit": "0" * 40, "note": "Example identity."},
        "tasks_sha256": "0" * 64,
        "implementation": {"path": "make_review.py", "sha256": "0" * 64},
    }


def write_example_difficulty(
    *, run_dir: Path, atlas_id: str, source_revision: str | None, with_followups: bool = True
) -> dict[str, Any]:
    """Write example difficulty evidence into an existing review run directory."""
    report = example_report(atlas_id=atlas_id, source_revision=source_revision)
    if with_followups:
        report["protocol_followups"] = _followups(report)
        for followup in report["protocol_followups"]:
            _write_json(run_dir / followup["report_path"], example_report(
                atlas_id=atlas_id, source_revision=source_revision))  # fmt: skip
    for model in report["models"]:
        _write_json(run_dir / f"difficulty/{model['size']}/run.json", _run_identity(model=model))
        for outcome in model["task_outcomes"]:
            _write_attempt(run_dir=run_dir, model=model, outcome=outcome)
    _write_json(
        run_dir / "difficulty/context.json",
        {
            "reviewer_rollout_baseline": {
                "solved": 2, "verified": 3, "attempted": 3, "unverified": 0,
                "configured_model_reviewers": [{"label": "Example judge"}],
                "limitations": [EXAMPLE_LIMITATION],
            },
            "historical_reference": {
                "applicability": "Example: not applicable to any real source.",
                "limitations": [EXAMPLE_LIMITATION],
                "artifact_path": "difficulty/issue-8942-example.md",
            },
        },
    )  # fmt: skip
    (run_dir / "difficulty/issue-8942-example.md").write_text(
        "Example placeholder for saved issue #8942 evidence.\n", encoding="utf-8"
    )
    _write_json(run_dir / HISTORY_EXAMPLE, historical_example_report(atlas_id=atlas_id))
    _write_json(
        run_dir / INVALID_EXAMPLE,
        invalid_example_report(atlas_id=atlas_id, source_revision=source_revision),
    )
    _write_json(run_dir / "difficulty.json", report)
    return report
