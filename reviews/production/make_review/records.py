"""Record shapes and identifiers of a produced collection."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = "0.3.0"
SAMPLING_METHOD = "Seeded reservoir sampling without replacement over local input rows"
NATIVE_VERIFIER = {"id": "native-verifier", "label": "Native task verifier", "kind": "organization"}
PUBLISHER = {"id": "make_review", "label": "make_review", "kind": "organization"}
TAG_NOTE = "Model classification based on persisted review evidence."


def stamp(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def file_time(path: Path) -> str:
    return stamp(dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC))


def model_actor(model_name: str) -> dict[str, str]:
    return {"id": f"model:{model_name}", "label": model_name, "kind": "model"}


def judge_model(*, name: str, revision: str | None, endpoint_kind: str) -> dict[str, Any]:
    """Who judged, recorded beside every model judgment (``attributes.judge_model``) so a reader
    sees the model, its revision and what served it (a 135M model on a laptop, or a hosted
    one)."""
    return {"name": name, "revision": revision, "endpoint_kind": endpoint_kind}


def source_subject(
    *, repository: str, dataset_revision: str | None, source_id: str, snapshot: str
) -> dict[str, Any]:
    """``source:`` + 20 hex of the identity triple; a null revision is named by the snapshot."""
    revision = dataset_revision if dataset_revision is not None else f"snapshot:{snapshot}"
    text = json.dumps([repository, revision, source_id], ensure_ascii=False)
    return {
        "id": "source:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:20],
        "level": "source",
        "repository": repository,
        "dataset_revision": dataset_revision,
        "source_id": source_id,
        "task_id": None,
        "task_path": None,
        "row_index": None,
    }


def task_subject(*, source: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"{source['id']}/task/{task['id']}",
        "level": "task",
        "repository": task["repository"],
        "dataset_revision": task["dataset_revision"],
        "source_id": task["source_id"],
        "task_id": task["id"],
        "task_path": task["task_path"],
        "row_index": task["row_index"],
    }


@dataclass(frozen=True)
class EvidenceWriter:
    """Evidence items for files of one run directory. ``url_root``: where the run directory
    will be once finished, when it is written elsewhere first (a curator's staged output): the
    ``file://`` URLs name the files where they end up."""

    run_dir: Path
    _items: dict[tuple[str, int, int], dict[str, Any]] = field(default_factory=dict)
    url_root: Path | None = None

    def item(self, relative: str) -> dict[str, Any]:
        # A task's reviews are rebuilt after each judge; unchanged files are hashed once.
        stat = (self.run_dir / relative).stat()
        key = (relative, stat.st_mtime_ns, stat.st_size)
        if key not in self._items:
            self._items[key] = self._item(relative)
        return dict(self._items[key])

    def _item(self, relative: str) -> dict[str, Any]:
        path = self.run_dir / relative
        data = path.read_bytes()
        lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        return {
            "url": (self.url_root / relative if self.url_root else path.resolve()).as_uri(),
            "snapshot_path": relative,
            "sha256": hashlib.sha256(data).hexdigest(),
            "retrieved_at": file_time(path),
            "locator": {"kind": "line_range", "value": f"1-{max(lines, 1)}"},
            "artifact_revision": None,
        }

    def reviewed_at(self, relative: str) -> str:
        return file_time(self.run_dir / relative)


def single_task_coverage(*, task: dict[str, Any], seed: int) -> dict[str, Any]:
    return {
        "scope": "single_task",
        "sample_count": 1,
        "population_count": None,
        "sampling_method": SAMPLING_METHOD,
        "seed": str(seed),
        "samples": [{"task_path": task["task_path"], "row_index": task["row_index"]}],
    }


def source_coverage(*, tasks: list[dict[str, Any]], seed: int, population: int) -> dict[str, Any]:
    ordered = sorted(tasks, key=lambda task: task["id"])
    return {
        "scope": "source_sample",
        "sample_count": len(tasks),
        "population_count": population,
        "sampling_method": SAMPLING_METHOD,
        "seed": str(seed),
        "samples": [{"task_path": t["task_path"], "row_index": t["row_index"]} for t in ordered],
    }


def review(
    *,
    review_id: str,
    subject_id: str,
    reviewer: dict[str, str],
    reviewed_at: str,
    imported_at: str,
    method: str,
    tests_executed: bool | None,
    coverage: dict[str, Any],
    summary: str,
    verdict: str,
    metrics: list[dict[str, Any]],
    findings: list[dict[str, Any]],
    evidence: list[dict[str, Any]],
    derived_from: list[str],
    attributes: dict[str, Any],
) -> dict[str, Any]:
    return {
        "id": review_id,
        "subject_id": subject_id,
        "reviewer": reviewer,
        "publisher": PUBLISHER,
        "reviewed_at": reviewed_at,
        "imported_at": imported_at,
        "method": method,
        "tests_executed": tests_executed,
        "coverage": coverage,
        "summary": summary,
        "verdict": verdict,
        "metrics": metrics,
        "findings": [
            {"id": f"{review_id}/finding/{number}", **finding}
            for number, finding in enumerate(findings)
        ],
        "evidence": evidence,
        "derived_from_review_ids": derived_from,
        "supersedes_review_id": None,
        "attributes": attributes,
    }


def opinion_fields(opinion: dict[str, Any]) -> dict[str, Any]:
    findings = [
        {k: finding[k] for k in ("dimension", "text", "severity", "kind")}
        for finding in opinion["findings"]
    ]
    return {
        "summary": opinion["summary"],
        "verdict": opinion["verdict"],
        "metrics": [dict(metric) for metric in opinion["metrics"]],
        "findings": findings,
    }


def runtime_summary(*, route: str, verification: dict[str, Any]) -> str:
    """The status, then the reason when there is one, else a verified verdict's score (a
    verified MarinSkyRL verdict carries no reason)."""
    reason = verification.get("reason")
    text = f"Native {route} verification: {verification.get('status')}."
    if reason:
        return f"{text} {reason}"
    score = verification.get("score")
    if verification.get("status") == "verified" and isinstance(score, int | float):
        verdict = verification.get("passed")
        passed = None
        if isinstance(verdict, bool):
            passed = "passed" if verdict else "not passed"
        return f"{text} Score {score:g}" + (f", {passed}." if passed else ".")
    return text


def tag_assignments(
    *, review_id: str, tags: list[dict[str, str]], assigned_by: dict[str, str], assigned_at: str
) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{review_id}/tag/{number}",
            "target": {"kind": "review", "id": review_id},
            "namespace": tag["namespace"],
            "value": tag["value"],
            "origin": "derived",
            "assigned_by": assigned_by,
            "assigned_at": assigned_at,
            "evidence_review_ids": [review_id],
            "note": TAG_NOTE,
            "supersedes_assignment_id": None,
            "state": "active",
        }
        for number, tag in enumerate(tags)
    ]
