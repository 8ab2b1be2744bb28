"""Shared builders for the publication tests: synced sources, run directories and DB snapshots."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from atlas.models import Source
from atlas.rules.display_state import CURATED_FIELDS, DISPLAY_COLUMNS
from atlas.services.sync import sync_catalog
from reviews.models import GradingBinding, Review, ReviewArtifact, ReviewPublication
from reviews.services.publication import publish_run_directory
from tests.conftest import make_row
from tests.reviews.example_runs import FindingSpec, RunSpec, write_run_directory

SOURCE_ID = "MarinSkyRL:example"
DATA_REVISION = "a" * 40
VERIFIER_REVISION = "b" * 64
GRADING_REVISION = "c" * 64

__all__ = ["FindingSpec", "make_row"]


def sync_rows(write_catalog: Callable[..., Path], *rows: dict[str, Any]) -> dict[str, Any]:
    """Sync a catalog artifact holding exactly ``rows`` (forced, like the Refresh button)."""
    return sync_catalog(catalog_path=write_catalog(list(rows)), force=True, trigger="command")


def build_run(root: Path, name: str = "run", **overrides: Any) -> Path:
    """A complete run directory for SOURCE_ID at DATA_REVISION; overrides go to RunSpec."""
    fields: dict[str, Any] = {
        "source_id": SOURCE_ID,
        "dataset_revision": DATA_REVISION,
        "repository": "example/example",
    }
    fields.update(overrides)
    return write_run_directory(output=root / name, spec=RunSpec(**fields))


def grading_identity(source_id: str = SOURCE_ID, revision: str = GRADING_REVISION) -> dict:
    return {
        "source_id": source_id,
        "source_revision": DATA_REVISION,
        "grading_revision": revision,
        "grading_manifest": {"routes": {}},
        "selected_code_verified": True,
        "installed_dependency_versions": {},
    }


def rewrite_collection(run_dir: Path, mutate: Callable[[dict[str, Any]], Any]) -> None:
    path = run_dir / "quality-reviews.json"
    collection = json.loads(path.read_text(encoding="utf-8"))
    mutate(collection)
    path.write_text(json.dumps(collection, indent=2) + "\n", encoding="utf-8")


def write_file(run_dir: Path, relative: str, data: bytes) -> str:
    target = run_dir / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def review_by_id(collection: dict[str, Any], review_id: str) -> dict[str, Any]:
    return next(review for review in collection["reviews"] if review["id"] == review_id)


def publish(run_dir: Path, atlas_id: str = SOURCE_ID, **kwargs: Any) -> dict[str, Any]:
    return publish_run_directory(run_dir=run_dir, atlas_id=atlas_id, **kwargs)


def database_state() -> dict[str, Any]:
    """Everything publication may write, to assert that a refusal changed nothing."""
    sources = {
        row["id"]: row for row in Source.objects.values("id", *CURATED_FIELDS, *DISPLAY_COLUMNS)
    }
    return {
        "sources": sources,
        "reviews": sorted(Review.objects.values_list("id", "kind", "source_id")),
        "artifacts": sorted(ReviewArtifact.objects.values_list("review_id", "path", "sha256")),
        "bindings": sorted(GradingBinding.objects.values_list("source_id", "review_id")),
        "publications": ReviewPublication.objects.count(),
    }


def source_row(source_id: str = SOURCE_ID) -> Source:
    return Source.objects.get(id=source_id)


# --- defect records, as the curators' tools archive them ---------------------------------------


def evidence_item(run_dir: Path, relative: str) -> dict[str, Any]:
    """An evidence item citing a file already written in ``run_dir``."""
    data = (run_dir / relative).read_bytes()
    return {
        "url": f"file:{relative}",
        "snapshot_path": relative,
        "sha256": hashlib.sha256(data).hexdigest(),
        "retrieved_at": "2025-03-05T09:00:00Z",
        "locator": {"kind": "json_pointer", "value": "/"},
        "artifact_revision": None,
    }


def _native_attempt(*, passed: bool) -> bytes:
    verification = {"status": "verified", "score": float(passed), "passed": passed}
    return json.dumps({"verification": verification, "verifier_executed": True}).encode()


def _case(role: str, execution: str, expected: str, observed: str) -> dict[str, Any]:
    answer = {"source": "saved", "origin": "tasks/0000/execution-000"}
    return {"role": role, "task_id": "0000", "answer": answer, "expected": expected,
            "observed": observed, "execution_path": execution}  # fmt: skip


def cite_reproduction(run_dir: Path, review: dict[str, Any], *, issue_url: str) -> None:
    """A ``reproduction.json`` beside the run's first attempt — which the verifier accepted where
    the defect says it must reject — cited by ``review`` (the verifier_defect review)."""
    case = _case("claim", "tasks/0000/execution-000", "rejected", "accepted")
    report = {"reproduced": True, "issue_url": issue_url, "cases": [case]}
    write_file(run_dir, "reproduction.json", json.dumps(report).encode())
    review["evidence"].append(evidence_item(run_dir, "reproduction.json"))


def cite_fix_validation(
    run_dir: Path, collection: dict[str, Any], review: dict[str, Any], *, issue_url: str
) -> None:
    """``validation/validation.json`` with its two native runs at the collection's commit — the
    failing input accepted, a control rejected — cited by ``review`` (the resolution entry's)."""
    executions = {
        "validation/tasks/0000/execution-000/attempt.json": _native_attempt(passed=True),
        "validation/tasks/0001/execution-000/attempt.json": _native_attempt(passed=False),
    }
    for relative, data in executions.items():
        write_file(run_dir, relative, data)
    record = {
        "issue_url": issue_url,
        "fix_validated": True,
        "validated_marinskyrl_commit": collection["execution_provenance"]["marinskyrl_commit"],
        "cases": [
            _case("failing_input", "tasks/0000/execution-000", "accepted", "accepted"),
            _case("control", "tasks/0001/execution-000", "rejected", "rejected"),
        ],
    }
    write_file(run_dir, "validation/validation.json", json.dumps(record).encode())
    for relative in ["validation/validation.json", *executions]:
        review["evidence"].append(evidence_item(run_dir, relative))
