"""The tests' one builder of published review collections, stored directly as rows: realistic
collections for page, API and difficulty tests, and the small defect-flavoured collections the
verifier-defect rules are tested with (``runtime_review``, ``defect_review``, ``fix_review``,
``store_collection``). Run directories for publication tests come from ``tests.reviews.builders``.

``native_collection`` returns a realistic schema 0.3.0 document and its evidence files (per sampled
task: one runtime execution, three independent judges and a task synthesis; one source synthesis;
a superseding judge opinion). ``publish`` stores it the way publication does: the review id is the
SHA-256 of the serialized bytes, which are also stored as the ``quality-reviews.json`` artifact.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from atlas.artifact.catalog_artifact import write_document
from atlas.models import Source
from atlas.services.display import refresh_display_state
from atlas.services.sync import sync_catalog
from reviews.defect_invariant import defect_writer
from reviews.kinds import detect_kind
from reviews.models import Review, ReviewArtifact, VerifierIssue
from tests.conftest import make_row

COMMIT = "0123456789abcdef0123456789abcdef01234567"
HARBOR_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"
TREE_SHA = "c" * 64
IMPORTED_AT = "2025-03-05T09:00:00Z"
JUDGE_MODELS = ("Judge model A", "Judge model B", "Judge model C")
ORGANIZATION = {"id": "org:marin", "label": "Marin", "kind": "organization"}


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def serialize(collection: dict[str, Any]) -> str:
    return json.dumps(collection, indent=2) + "\n"


def store_artifacts(review: Review, contents: dict[str, str]) -> None:
    """The published files of a review, written as publication stores them."""
    ReviewArtifact.objects.bulk_create(
        ReviewArtifact(
            review=review,
            path=path,
            content=content,
            sha256=sha256_text(content),
            size=len(content.encode("utf-8")),
        )
        for path, content in contents.items()
    )


def sync_sources(*rows: dict[str, Any]) -> list[Source]:
    """Create (or update) sources through the product's sync; every source must be listed at once
    because a sync retires sources missing from its catalog."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "catalog.json"
        write_document(rows=sorted(rows, key=lambda row: row["id"]), output=path)
        sync_catalog(catalog_path=path, force=True, trigger="command")
    return list(Source.objects.filter(id__in=[row["id"] for row in rows]).order_by("id"))


def make_source(source_id: str = "MarinSkyRL:example", **overrides: Any) -> Source:
    return sync_sources(make_row(source_id, **overrides))[0]


def _actor(label: str, kind: str = "model") -> dict[str, str]:
    return {"id": f"{kind}:{label.lower().replace(' ', '-')}", "label": label, "kind": kind}


def _evidence(path: str, files: dict[str, str], url: str | None = None) -> dict[str, Any]:
    return {
        "url": url or f"https://atlas.example/evidence/{path}",
        "snapshot_path": path,
        "sha256": sha256_text(files[path]) if path in files else "0" * 64,
        "retrieved_at": IMPORTED_AT,
        "locator": {"kind": "json_pointer", "value": "/"},
        "artifact_revision": None,
    }


def _coverage(scope: str, sample_count: int | None, population: int | None) -> dict[str, Any]:
    return {
        "scope": scope,
        "sample_count": sample_count,
        "population_count": population,
        "sampling_method": "seeded uniform" if scope == "source_sample" else None,
        "seed": "17" if scope == "source_sample" else None,
        "samples": [],
    }


def _review(
    review_id: str,
    *,
    subject_id: str,
    method: str,
    reviewer: dict[str, str],
    reviewed_at: str | None,
    summary: str,
    verdict: str,
    evidence: list[dict[str, Any]],
    findings: list[dict[str, Any]] = (),
    attributes: dict[str, Any] | None = None,
    scope: str = "single_task",
    population: int | None = None,
    derived_from: list[str] = (),
    supersedes: str | None = None,
    tests_executed: bool | None = None,
    metrics: list[dict[str, Any]] = (),
) -> dict[str, Any]:
    return {
        "id": review_id,
        "subject_id": subject_id,
        "reviewer": reviewer,
        "publisher": ORGANIZATION,
        "reviewed_at": reviewed_at,
        "imported_at": IMPORTED_AT,
        "method": method,
        "tests_executed": tests_executed,
        "coverage": _coverage(scope, 1 if scope == "single_task" else None, population),
        "summary": summary,
        "verdict": verdict,
        "metrics": list(metrics),
        "findings": list(findings),
        "evidence": evidence,
        "derived_from_review_ids": list(derived_from),
        "supersedes_review_id": supersedes,
        "attributes": attributes or {},
    }


def finding(
    finding_id: str,
    text: str,
    *,
    severity: str | None = "medium",
    kind: str = "issue",
    dimension: str = "verifier_correctness",
) -> dict[str, Any]:
    return {
        "id": finding_id,
        "dimension": dimension,
        "text": text,
        "severity": severity,
        "kind": kind,
    }


def _task_files(index: int) -> dict[str, str]:
    base = f"tasks/{index:04d}/execution-000"
    response = {
        "id": f"chatcmpl-{index}",
        "model": "solver-large",
        "usage": {"prompt_tokens": 812, "completion_tokens": 96, "total_tokens": 908},
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop" if index else "length",
                "message": {
                    "role": "assistant",
                    "reasoning_content": "Add the two numbers.",
                    "content": "The answer is 42." if index else None,
                },
            }
        ],
    }
    request = {
        "model": "solver-large",
        "temperature": 0.6,
        "max_tokens": 4096,
        "messages": [
            {"role": "system", "content": "Solve the task."},
            {"role": "user", "content": f"Task {index}: what is 40 + 2?"},
        ],
    }
    trace = [
        {"event": "verifier_start", "elapsed_seconds": 0.25},
        {"event": "verifier_result", "score": 1.0, "passed": True, "errors": []},
    ]
    return {
        f"{base}/solver/turn-000/response.json": json.dumps(response, indent=2),
        f"{base}/solver/turn-000/request.json": json.dumps(request, indent=2),
        f"{base}/verifier-trace.jsonl": "\n".join(json.dumps(line) for line in trace) + "\n",
        f"{base}/verifier.stdout": f"score=1.0 task={index}\n",
        f"tasks/{index:04d}/attempt.json": json.dumps({"task_id": f"task-{index}", "done": True}),
    }


def native_collection(
    *,
    source_id: str = "MarinSkyRL:example",
    dataset_revision: str = "a" * 40,
    task_count: int = 2,
    reviewed_at: str = "2025-03-03T12:00:00Z",
    source_verdict: str = "keep",
    source_findings: list[dict[str, Any]] | None = None,
    execution_provenance: dict[str, Any] | bool | None = True,
    population: int = 100,
) -> tuple[dict[str, Any], dict[str, str]]:
    """A native run: ``execution_provenance=True`` records COMMIT, ``None`` records none."""
    files: dict[str, str] = {
        "run.json": json.dumps({"source_id": source_id, "tasks": task_count}, indent=2),
        "publication/notes.txt": "Run notes.\nNo anomalies.\n",
    }
    source_subject = {
        "id": "subject:source",
        "level": "source",
        "repository": f"example/{source_id.partition(':')[2]}",
        "dataset_revision": dataset_revision,
        "source_id": source_id,
        "task_id": None,
        "task_path": None,
        "row_index": None,
    }
    subjects, reviews, task_syntheses = [source_subject], [], []
    day = dt.datetime.fromisoformat(reviewed_at.replace("Z", "+00:00"))
    for index in range(task_count):
        files.update(_task_files(index))
        base = f"tasks/{index:04d}/execution-000"
        subject_id = f"subject:task-{index:04d}"
        subjects.append(
            {
                **source_subject,
                "id": subject_id,
                "level": "task",
                "task_id": f"task-{index}",
                "task_path": f"tasks/{index:04d}",
                "row_index": index,
            }
        )
        stamp = (day - dt.timedelta(hours=task_count - index)).isoformat().replace("+00:00", "Z")
        runtime_id = f"task-{index:04d}:runtime"
        reviews.append(
            _review(
                runtime_id,
                subject_id=subject_id,
                method="runtime_execution",
                reviewer=_actor("Native task verifier", "organization"),
                reviewed_at=stamp,
                summary=f"Native attempt {index} scored 1.0.",
                verdict="keep",
                tests_executed=True,
                evidence=[
                    _evidence(f"{base}/verifier-trace.jsonl", files),
                    _evidence(f"{base}/solver/turn-000/response.json", files),
                ],
                attributes={
                    "verification": {
                        "status": "verified",
                        "score": 1.0,
                        "passed": True,
                        "reason": None,
                        "diagnostics": [],
                    },
                    "execution_path": base,
                    "route": "native",
                },
                metrics=[{"key": "score", "value": 1.0, "scale": None}],
            )
        )
        judge_ids = []
        for judge in range(1, 4):
            judge_id = f"task-{index:04d}:judge-{judge}"
            judge_ids.append(judge_id)
            judge_findings = (
                [finding(f"{judge_id}:f1", f"Judge {judge} doubts the answer key of task {index}.")]
                if judge == 2
                else [
                    finding(
                        f"{judge_id}:o1",
                        "Prompt is clear.",
                        severity="info",
                        kind="observation",
                        dimension="clarity",
                    )
                ]
            )
            reviews.append(
                _review(
                    judge_id,
                    subject_id=subject_id,
                    method="model_judgment",
                    reviewer=_actor(JUDGE_MODELS[judge - 1]),
                    reviewed_at=stamp,
                    summary=f"Judge {judge} reviewed task {index}.",
                    verdict="keep",
                    findings=judge_findings,
                    evidence=[_evidence(f"{base}/solver/turn-000/request.json", files)],
                    attributes={
                        "judge_index": judge,
                        "independent_session": True,
                        "prompt": "Assess the attempt.",
                    },
                )
            )
        synthesis_id = f"task-{index:04d}:synthesis"
        task_syntheses.append(synthesis_id)
        reviews.append(
            _review(
                synthesis_id,
                subject_id=subject_id,
                method="synthesis",
                reviewer=_actor("Synthesis model"),
                reviewed_at=stamp,
                summary=f"Task {index} is usable.",
                verdict="keep",
                derived_from=[runtime_id, *judge_ids],
                evidence=[_evidence(f"tasks/{index:04d}/attempt.json", files)],
            )
        )
    # A later judge opinion replacing judge 2 of the first task: the original stays readable.
    reviews.append(
        _review(
            "task-0000:judge-2-revised",
            subject_id="subject:task-0000",
            method="model_judgment",
            reviewer=_actor(JUDGE_MODELS[1]),
            reviewed_at=reviewed_at,
            summary="Judge 2 re-checked the answer key; it is correct.",
            verdict="keep",
            supersedes="task-0000:judge-2",
            evidence=[_evidence("tasks/0000/attempt.json", files)],
        )
    )
    reviews.append(
        _review(
            "source:synthesis",
            subject_id="subject:source",
            method="synthesis",
            reviewer=_actor("Synthesis model"),
            reviewed_at=reviewed_at,
            summary="The sampled tasks verify natively.\nNo qualifying defects.",
            verdict=source_verdict,
            scope="source_sample",
            population=population,
            findings=source_findings
            if source_findings is not None
            else [finding("source:f1", "Answer formatting is strict.", severity="low")],
            derived_from=task_syntheses,
            evidence=[
                _evidence("publication/notes.txt", files),
                _evidence("external/dashboard.html", files, url="https://dashboard.example/run"),
                _evidence("notes/offline.txt", files, url="file:///runs/offline.txt"),
            ],
        )
    )
    if execution_provenance is True:
        execution_provenance = {
            "marinskyrl_commit": COMMIT,
            "marinskyrl_dirty": False,
            "marinskyrl_python_tree_sha256": TREE_SHA,
            "harbor_commit": None,
            "grading_revision": None,
            "verifyit": None,
        }
    collection = {
        "schema_version": "0.3.0",
        "created_at": reviewed_at,
        "subjects": subjects,
        "reviews": reviews,
        "tag_assignments": [],
        "source_mappings": [],
        "execution_provenance": execution_provenance,
    }
    return collection, files


def supplemental_collection(
    *,
    source_id: str = "MarinSkyRL:example",
    role: str = "verifier_defect",
    issue_url: str = "https://github.com/marin-community/MarinSkyRL/issues/7",
    reviewed_at: str | None = "2025-04-01T08:00:00Z",
    inspected_commit: str | None = None,
    supersedes: str | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """A pool collection recording a verifier defect or a verifier-revision attestation."""
    files = {
        "defect/reproduction.jsonl": '{"event": "reproduce", "error": "rejected valid"}\nnot json\n'
    }
    subject = {
        "id": "subject:source",
        "level": "source",
        "repository": "example/pool",
        "dataset_revision": "a" * 40,
        "source_id": source_id,
        "task_id": None,
        "task_path": None,
        "row_index": None,
    }
    attributes: dict[str, Any] = {"review_pool_role": role}
    if role == "verifier_defect":
        attributes["issue_url"] = issue_url
    if inspected_commit:
        attributes["inspected_marinskyrl_commit"] = inspected_commit
    review = _review(
        f"pool:{role}",
        subject_id="subject:source",
        method="runtime_execution" if role == "verifier_defect" else "static_inspection",
        reviewer=_actor("Defect reviewer", "human"),
        reviewed_at=reviewed_at,
        summary="The verifier rejects valid answers."
        if role == "verifier_defect"
        else "The current verifier revision matches the reviewed one.",
        verdict="reject" if role == "verifier_defect" else "keep",
        tests_executed=True,
        findings=[finding("pool:f1", "Valid answers are rejected.", severity="high")]
        if role == "verifier_defect"
        else [],
        attributes=attributes,
        supersedes=supersedes,
        evidence=[_evidence("defect/reproduction.jsonl", files)],
    )
    collection = {
        "schema_version": "0.3.0",
        "created_at": reviewed_at or IMPORTED_AT,
        "subjects": [subject],
        "reviews": [review],
        "tag_assignments": [],
        "source_mappings": [],
        "execution_provenance": None,
    }
    return collection, files


def imported_collection(
    *, source_id: str = "MarinSkyRL:example", reviewed_at: str | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """A historical audit from outside the Atlas, mapped to the source; its date is unknown."""
    files = {"audit/notes.md": "# Audit\nThe grader accepts malformed answers.\n"}
    subject = {
        "id": "subject:upstream",
        "level": "source",
        "repository": "upstream/audits",
        "dataset_revision": None,
        "source_id": None,
        "task_id": None,
        "task_path": None,
        "row_index": None,
    }
    review = _review(
        "audit:1",
        subject_id="subject:upstream",
        method="static_inspection",
        reviewer=_actor("Task Trove", "organization"),
        reviewed_at=reviewed_at,
        summary="Dashboard audit note.",
        verdict="conditional",
        findings=[finding("audit:f1", "Malformed answers pass.", severity=None)],
        evidence=[_evidence("audit/notes.md", files)],
    )
    mapping = {
        "id": "mapping:1",
        "subject_id": "subject:upstream",
        "atlas_source_ids": [source_id],
        "status": "confirmed",
        "applicability": "historical",
        "evidence": [_evidence("audit/notes.md", files)],
        "note": "Same upstream dataset.",
    }
    collection = {
        "schema_version": "0.3.0",
        "created_at": IMPORTED_AT,
        "subjects": [subject],
        "reviews": [review],
        "tag_assignments": [],
        "source_mappings": [mapping],
        "execution_provenance": None,
    }
    return collection, files


def publish(
    collection: dict[str, Any],
    files: dict[str, str],
    *,
    source_id: str = "MarinSkyRL:example",
    omit: tuple[str, ...] = (),
    make_current: bool = False,
) -> Review:
    """Store a collection and its files (minus ``omit``) as publication would."""
    text = serialize(collection)
    dates = [r["reviewed_at"] for r in collection["reviews"] if r["reviewed_at"]]
    review = Review.objects.create(
        id=sha256_text(text),
        source_id=source_id,
        collection=json.loads(text),
        kind=detect_kind(collection),
        updated_at=max(dates) if dates else None,
        published_at=timezone.now(),
    )
    stored = {"quality-reviews.json": text, **files}
    store_artifacts(
        review, {path: text for path, text in sorted(stored.items()) if path not in omit}
    )
    review.refresh_from_db()
    if make_current:
        set_current(review)
    return review


def set_current(review: Review, *, quality: str | None = "good") -> Source:
    """The curated update of a rating publication, without validation."""
    source = Source.objects.get(id=review.source_id)
    subject = next(s for s in review.collection["subjects"] if s["level"] == "source")
    Source.objects.filter(id=source.id).update(
        quality=quality,
        review_id=review.id,
        review_date=review.updated_at,
        review_source_revision=subject["dataset_revision"],
        review_verifier_revision=source.payload.get("verifier_revision"),
        traces=sum(r["method"] == "runtime_execution" for r in review.collection["reviews"]),
    )
    refresh_display_state(source_ids=[source.id])
    return Source.objects.get(id=source.id)


def record_issue(
    *,
    source_id: str,
    confirming: Review,
    issue_url: str = "https://github.com/marin-community/MarinSkyRL/issues/7",
    resolution: Review | None = None,
    created_at: dt.datetime | None = None,
) -> VerifierIssue:
    """A verifier-issue row as the defect service would leave it (open, or resolved by
    ``resolution``)."""
    created = created_at or dt.datetime(2025, 4, 2, tzinfo=dt.UTC)
    with transaction.atomic(), defect_writer():
        return VerifierIssue.objects.create(
            source_id=source_id,
            issue_url=issue_url,
            review=confirming,
            status=VerifierIssue.Status.RESOLVED if resolution else VerifierIssue.Status.OPEN,
            resolution_review=resolution,
            created_at=created,
            updated_at=created + dt.timedelta(days=30) if resolution else created,
        )


def attestation_file(
    *, executed_revision: str, current_revision: str, population: int | None = 100
) -> tuple[str, str]:
    """A dataset-content equivalence attestation artifact."""
    body = {
        "file_path": "data/train.parquet",
        "executed_revision": executed_revision,
        "current_revision": current_revision,
        "component_selector": "default/train",
        "population_count": population,
        "file_sha256": "d" * 64,
    }
    path = f"publication/dataset-revision-attestation-{current_revision}.json"
    return path, json.dumps(body, indent=2) + "\n"


def publish_pool() -> tuple[Review, Review, Review]:
    """An older native review (7 reviews, dated), a supplemental defect collection and an
    undated imported audit, published beside the current review of SOURCE_ID."""
    older, older_files = native_collection(reviewed_at="2024-12-01T00:00:00Z", task_count=1)
    old_review = publish(older, older_files)
    defect, defect_files = supplemental_collection()
    supplemental = publish(defect, defect_files)
    imported, imported_files = imported_collection()
    imported_review = publish(imported, imported_files)
    return old_review, supplemental, imported_review


# --- defect-flavoured collections ----------------------------------------------------

ISSUE_URL = "https://github.com/marin-community/MarinSkyRL/issues/4242"
DEFECT_ATTEMPT = "tasks/0/execution-1/attempt.json"
DEFECT_REPRODUCTION = "reproduction.json"
DEFECT_VALIDATION = "validation/validation.json"
DEFECT_SUBJECT = "subject-source"
DEFECT_REVIEWED_AT = "2026-11-01T00:00:00Z"
FIX_COMMIT = "f" * 40


def _native_attempt(*, passed: bool) -> str:
    return json.dumps(
        {"verification": {"status": "verified", "passed": passed}, "verifier_executed": True}
    )


def _case(role: str, execution: str, expected: str, observed: str) -> dict[str, Any]:
    return {
        "role": role,
        "task_id": "0",
        "answer": {"source": "saved", "origin": "tasks/0/execution-1"},
        "expected": expected,
        "observed": observed,
        "execution_path": execution,
    }


def _reproduction_text(issue_url: str | None) -> str:
    case = _case("claim", "tasks/0/execution-1", "accepted", "rejected")
    return json.dumps({"reproduced": True, "issue_url": issue_url, "cases": [case]})


def _validation_text(issue_url: str | None) -> str:
    cases = [
        _case("failing_input", "tasks/0/execution-1", "accepted", "accepted"),
        _case("control", "tasks/0/execution-2", "rejected", "rejected"),
    ]
    return json.dumps(
        {
            "issue_url": issue_url,
            "fix_validated": True,
            "validated_marinskyrl_commit": FIX_COMMIT,
            "cases": cases,
        }
    )


# What the defect factories archive: each file agrees with the claims resting on it (the runtime
# review's verdict, the reproduction's cases, the fix validation's cases), as the curators' tools
# write them; ``store_collection(artifacts=…)`` picks which of them a collection holds, with the
# issue its defect review or resolution entry names.
DEFECT_FILES = {
    # The saved input the verifier wrongly rejected.
    DEFECT_ATTEMPT: _native_attempt(passed=False),
    DEFECT_REPRODUCTION: _reproduction_text(ISSUE_URL),
    DEFECT_VALIDATION: _validation_text(ISSUE_URL),
    "validation/tasks/0/execution-1/attempt.json": _native_attempt(passed=True),
    "validation/tasks/0/execution-2/attempt.json": _native_attempt(passed=False),
}


def _named_issue(reviews: list[dict[str, Any]], key: str) -> str | None:
    for review in reviews:
        attributes = review.get("attributes") or {}
        if key == "issue_url" and attributes.get("review_pool_role") == "verifier_defect":
            return attributes.get("issue_url", ISSUE_URL)
        if key == "resolved_verifier_issues":
            for entry in attributes.get(key) or []:
                return entry.get("issue_url")
    return ISSUE_URL


def _defect_review(review_id: str, method: str, **fields: Any) -> dict[str, Any]:
    defaults: dict[str, Any] = {
        "subject_id": DEFECT_SUBJECT,
        "method": method,
        "reviewer": _actor("Reviewer"),
        "reviewed_at": DEFECT_REVIEWED_AT,
        "summary": f"{method} review",
        "verdict": "keep",
        "evidence": [],
    }
    defaults.update(fields)
    return _review(review_id, **defaults)


def _attempt_evidence() -> list[dict[str, Any]]:
    return [_evidence(DEFECT_ATTEMPT, DEFECT_FILES)]


def runtime_review(
    *,
    verified: bool = True,
    tests_executed: Any = True,
    with_evidence: bool = True,
    execution_path: str = "tasks/0/execution-1",
) -> dict[str, Any]:
    return _defect_review(
        "runtime-1",
        "runtime_execution",
        tests_executed=tests_executed,
        evidence=_attempt_evidence() if with_evidence else [],
        attributes={
            "verification": {"status": "verified" if verified else "error"},
            "execution_path": execution_path,
        },
    )


def defect_review(*, issue_url: str | None = ISSUE_URL, with_issue: bool = True) -> dict[str, Any]:
    attributes: dict[str, Any] = {"review_pool_role": "verifier_defect"}
    if issue_url is not None:
        attributes["issue_url"] = issue_url
    if with_issue:
        findings = [
            finding(
                "defect-1/finding/0", kind="issue", severity="high", text="rejects valid answers"
            )
        ]
    else:
        findings = [finding("defect-1/finding/0", kind="observation", severity=None, text="note")]
    return _defect_review(
        "defect-1",
        "static_inspection",
        findings=findings,
        attributes=attributes,
        evidence=[_evidence(DEFECT_REPRODUCTION, DEFECT_FILES)],
    )


def resolution_entry(source: Source, **overrides: Any) -> dict[str, Any]:
    entry = {
        "issue_url": ISSUE_URL,
        "dataset_revision": source.payload["dataset_revision"],
        "verifier_revision": source.payload["verifier_revision"],
        "fix_validated": True,
        "validation_evidence": DEFECT_VALIDATION,
    }
    entry.update(overrides)
    return entry


def fix_review(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return _defect_review(
        "synthesis-1",
        "synthesis",
        evidence=[_evidence(DEFECT_VALIDATION, DEFECT_FILES)],
        attributes={"resolved_verifier_issues": entries},
    )


def store_collection(
    source: Source,
    reviews: list[dict[str, Any]],
    *,
    kind: str = "rating",
    updated_at: dt.datetime | None = None,
    artifacts: tuple[str, ...] = tuple(DEFECT_FILES),
) -> Review:
    """Store a collection of ``reviews`` as a published review of ``source`` holding the given
    artifact paths of ``DEFECT_FILES``; the kind and date are given, not derived. A collection
    that resolves a defect ran at ``FIX_COMMIT``, where its validation record says it ran."""
    resolves = any((r.get("attributes") or {}).get("resolved_verifier_issues") for r in reviews)
    collection = {
        "schema_version": "0.3.0",
        "execution_provenance": {"marinskyrl_commit": FIX_COMMIT} if resolves else None,
        "created_at": IMPORTED_AT,
        "subjects": [],
        "reviews": reviews,
        "tag_assignments": [],
        "source_mappings": [],
        # Distinct bytes for otherwise equal collections, so each gets its own review id.
        "salt": Review.objects.count(),
    }
    text = serialize(collection)
    review = Review.objects.create(
        id=sha256_text(text),
        source=source,
        collection=json.loads(text),
        kind=kind,
        updated_at=updated_at if updated_at is not None else timezone.now(),
        published_at=timezone.now(),
    )
    files = {
        **DEFECT_FILES,
        DEFECT_REPRODUCTION: _reproduction_text(_named_issue(reviews, "issue_url")),
        DEFECT_VALIDATION: _validation_text(_named_issue(reviews, "resolved_verifier_issues")),
    }
    contents = {"quality-reviews.json": text, **{path: files[path] for path in artifacts}}
    store_artifacts(review, contents)
    return review


def confirming_collection(source: Source, **kwargs: Any) -> Review:
    return store_collection(
        source, [defect_review(**kwargs), runtime_review()], kind="supplemental"
    )
