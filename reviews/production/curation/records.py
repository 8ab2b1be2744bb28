"""Record shapes of the curators' collections, built with make_review's own record helpers
(``reviews.production.make_review.records``) so ids, evidence items and coverage read the same.

- A **case review** is a ``runtime_execution`` review of one re-executed saved input: reviewer
  "Native task verifier", its verification as the worker reported it, the replayed answer and what
  was expected of it.
- The **curator's review** is a source-level ``human_judgment``: the curator states the
  expectation, the native verifier's observations decide whether it held. It carries the pool
  role (``verifier_defect``) or the resolution entries (``resolved_verifier_issues``) and derives
  from the case reviews.
"""

from __future__ import annotations

import datetime as dt
import getpass
from pathlib import Path
from typing import Any

from atlas.rules.example_notice import EXAMPLE_NOTICE
from reviews.production.curation.cases import Observation
from reviews.production.make_review import records
from reviews.production.runtime.identity import sha256_file
from reviews.production.runtime.rundir import RUN_FILE, write_json_file
from reviews.production.runtime.tasks import HARBOR_ROUTE

# The code that writes a curator's run, named in its run.json: this room and its commands.
PACKAGE_DIR = Path(__file__).resolve().parent
COMMANDS_DIR = PACKAGE_DIR.parent.parent / "management" / "commands"
COMMANDS = (
    "reproduce_defect.py", "validate_fix.py", "fetch_review.py", "synthesise_source.py",
    "import_audit.py",
)  # fmt: skip

CASE_FILES = (
    "attempt.json", "input.json", "replay.json", "verifier-trace.jsonl", "solver-trace.json",
    "verifier.stdout", "verifier.stderr", "worker.stderr", "native-code-index.json",
)  # fmt: skip
SAMPLING = "Saved native input named by the curator"


def curator_actor(name: str | None) -> dict[str, str]:
    label = (name or "").strip() or getpass.getuser()
    return {"id": f"curator:{label}", "label": label, "kind": "human"}


def tool_actor(tool: str) -> dict[str, str]:
    return {"id": tool, "label": tool, "kind": "organization"}


def now_stamp() -> str:
    return records.stamp(dt.datetime.now(dt.UTC))


def case_evidence_paths(*, run_dir: Path, prefix: str, execution_path: str) -> list[str]:
    """The files of one case execution worth reading, run-relative (``prefix`` is the case run's
    folder inside the collection's run directory, or empty)."""
    base = f"{prefix}{execution_path}"
    paths = [f"{base}/{name}" for name in CASE_FILES if (run_dir / base / name).is_file()]
    solver = run_dir / base / "solver"
    if solver.is_dir():
        for turn in sorted(p for p in solver.iterdir() if p.is_dir()):
            for name in ("request.json", "response.json"):
                if (turn / name).is_file():
                    paths.append(f"{base}/solver/{turn.name}/{name}")
    return paths


def case_coverage(task: dict[str, Any]) -> dict[str, Any]:
    return {
        "scope": "single_task",
        "sample_count": 1,
        "population_count": None,
        "sampling_method": SAMPLING,
        "seed": None,
        "samples": [{"task_path": task["task_path"], "row_index": task["row_index"]}],
    }


def case_review(
    *,
    observation: Observation,
    review_id: str,
    subject_id: str,
    evidence: records.EvidenceWriter,
    prefix: str,
    imported_at: str,
    publisher: dict[str, str],
) -> dict[str, Any]:
    """The runtime review of one case that ran (a worker that never finished has no review)."""
    case = observation.case
    assert observation.execution_path is not None and observation.attempt is not None
    attempt = observation.attempt
    task = case.attempt.task
    verification = observation.verification
    paths = case_evidence_paths(
        run_dir=evidence.run_dir, prefix=prefix, execution_path=observation.execution_path
    )
    attributes: dict[str, Any] = {
        "verification": verification,
        "execution_path": f"{prefix}{observation.execution_path}",
        "route": task.get("route"),
        "replay": {
            "role": case.role,
            "answer_source": case.answer.source,
            "answer_origin": case.answer.origin,
            "answer": case.answer.text,
            "expected": case.expectation,
            "observed": observation.outcome,
            "met_expectation": observation.met,
            "model_called": False,
        },
    }
    if task.get("route") != HARBOR_ROUTE:
        env_config = (case.attempt.config.get("gym_config") or {}).get(task.get("env_id") or "")
        attributes["verifyit_enabled"] = bool((env_config or {}).get("verifyit_enabled"))
    summary = records.runtime_summary(route=str(task.get("route")), verification=verification)
    summary += (
        f" Replayed the {case.answer.label} of {case.attempt.execution_path} without a model; "
        f"expected {case.expectation}, observed {observation.described}."
    )
    review = records.review(
        review_id=review_id,
        subject_id=subject_id,
        reviewer=records.NATIVE_VERIFIER,
        reviewed_at=evidence.reviewed_at(paths[0]),
        imported_at=imported_at,
        method="runtime_execution",
        tests_executed=bool(attempt.get("verifier_executed")),
        coverage=case_coverage(task),
        summary=summary,
        verdict="unrated" if verification.get("status") == "verified" else "inconclusive",
        metrics=[
            {"key": "native_verifier_score", "value": verification.get("score"), "scale": None}
        ],
        findings=[],
        evidence=[evidence.item(path) for path in paths],
        derived_from=[],
        attributes=attributes,
    )
    review["publisher"] = publisher
    return review


def curator_review(
    *,
    review_id: str,
    subject_id: str,
    curator: dict[str, str],
    publisher: dict[str, str],
    samples: list[dict[str, Any]],
    summary: str,
    verdict: str,
    findings: list[dict[str, Any]],
    evidence: list[dict[str, Any]],
    derived_from: list[str],
    attributes: dict[str, Any],
    imported_at: str,
) -> dict[str, Any]:
    review = records.review(
        review_id=review_id,
        subject_id=subject_id,
        reviewer=curator,
        reviewed_at=imported_at,
        imported_at=imported_at,
        method="human_judgment",
        tests_executed=True,
        coverage={
            "scope": "source_sample",
            "sample_count": len(samples),
            "population_count": None,
            "sampling_method": SAMPLING,
            "seed": None,
            "samples": samples,
        },
        summary=summary,
        verdict=verdict,
        metrics=[],
        findings=findings,
        evidence=evidence,
        derived_from=derived_from,
        attributes=attributes,
    )
    review["publisher"] = publisher
    return review


def is_example(collection: dict[str, Any]) -> bool:
    """A labelled example collection (the rule of ``reviews.example_label``)."""
    return any(
        str(review.get("summary") or "").startswith(EXAMPLE_NOTICE)
        for review in collection.get("reviews") or []
    )


def labelled(reviews: list[dict[str, Any]], *, example: bool) -> list[dict[str, Any]]:
    """What is derived from an example is labelled an example too: each summary starts with the
    notice, so the review page and the catalog chip say so."""
    if example:
        for review in reviews:
            if not review["summary"].startswith(EXAMPLE_NOTICE):
                review["summary"] = f"{EXAMPLE_NOTICE}. {review['summary']}"
    return reviews


def provenance(identity: dict[str, Any]) -> dict[str, Any]:
    """Execution provenance of the re-execution: the checkout that ran the cases."""
    return {
        "marinskyrl_commit": identity["commit"],
        "marinskyrl_dirty": identity["dirty"],
        "marinskyrl_python_tree_sha256": identity["python_tree_sha256"],
        "harbor_commit": None,
    }


def checkout_record(identity: dict[str, Any]) -> dict[str, Any]:
    """A checkout's identity as a curator's ``run.json`` records it: the commit, its Python tree
    and dirtiness — not the folder it sits in on this machine."""
    return {key: value for key, value in identity.items() if key != "checkout"}


def samples_of(observations: list[Observation]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for observation in observations:
        task = observation.case.attempt.task
        seen.setdefault(
            str(task.get("id")), {"task_path": task["task_path"], "row_index": task["row_index"]}
        )
    return [seen[key] for key in sorted(seen)]


def implementation_hashes() -> dict[str, str]:
    """Whole-file SHA-256 of the curation code and its commands."""
    hashes = {
        f"commands/{name}": sha256_file(COMMANDS_DIR / name)
        for name in COMMANDS
        if (COMMANDS_DIR / name).is_file()
    }
    for path in sorted(PACKAGE_DIR.glob("*.py")):
        hashes[f"curation/{path.name}"] = sha256_file(path)
    return hashes


def write_run_file(output: Path, identity: dict[str, Any]) -> None:
    write_json_file(output / RUN_FILE, {**identity, "implementation": implementation_hashes()})
