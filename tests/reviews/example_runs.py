"""Hand-written example review run directories for tests: ``make demo`` no longer
uses them (it runs make_review), but many tests need a run directory of a chosen shape.

Each example is a complete, schema-valid run directory as `make_review` would write it (run.json,
task attempts with solver turns and verifier logs, three independent judges per task, task and
source syntheses, artifact manifest), for a real source of the packaged inventory at its current
revisions. Every reviewer label and summary says plainly that it is an example, not a judgment.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas.rules import timestamps
from atlas.rules.example_notice import EXAMPLE_NOTICE
from reviews.production.format.collection_checks import SCHEMA_PATH
from reviews.production.format.evidence_set import COLLECTION_FILE

EXAMPLE_COMMIT = hashlib.sha1(b"rl-data-atlas example run").hexdigest()
EXAMPLE_TREE = hashlib.sha256(b"rl-data-atlas example python tree").hexdigest()
JUDGE_MODELS = (
    "model:example/judge-alpha",
    "model:example/judge-beta",
    "model:example/judge-gamma",
)
PUBLISHER = {
    "id": "organization:rl-data-atlas",
    "label": "RL Data Atlas examples",
    "kind": "organization",
}


@dataclass(frozen=True)
class FindingSpec:
    severity: str | None
    text: str
    kind: str = "issue"
    dimension: str = "verifier"


@dataclass(frozen=True)
class RunSpec:
    """What an example run looks like; the defaults derive Good."""

    source_id: str
    dataset_revision: str | None
    repository: str
    population_count: int | None = None
    sample_count: int = 2
    source_verdict: str = "keep"
    judge_verdicts: tuple[str, ...] = ("keep", "keep", "keep")
    judge_models: tuple[str, ...] = JUDGE_MODELS
    verification_status: str = "verified"
    judge_findings: tuple[FindingSpec, ...] = ()
    source_findings: tuple[FindingSpec, ...] = ()
    started_at: dt.datetime = dt.datetime(2025, 3, 3, 9, 0, tzinfo=dt.UTC)
    native: bool = True
    grading: dict[str, Any] | None = None
    label: str = "Good"
    extra_attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ExampleProfile:
    source_id: str
    label: str
    overrides: dict[str, Any]


EXAMPLE_PROFILES = (
    ExampleProfile("MarinSkyRL:gsm8k", "Good", {}),
    ExampleProfile(
        "MarinSkyRL:math500",
        "Some issues",
        {
            "source_verdict": "conditional",
            "judge_verdicts": ("keep", "conditional", "keep"),
            "judge_findings": (
                FindingSpec(
                    "medium", "Example finding: the verifier accepts an answer with units."
                ),
            ),
        },
    ),
    ExampleProfile(
        "MarinSkyRL:asdiv",
        "Bad",
        {
            "source_verdict": "reject",
            "judge_verdicts": ("reject", "reject", "keep"),
            "verification_status": "error",
            "source_findings": (
                FindingSpec(
                    "high", "Example finding: reference answers disagree with the prompts."
                ),
            ),
        },
    ),
)


def _stamp(moment: dt.datetime) -> str:
    return timestamps.format_utc(moment)


def _json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


class _RunWriter:
    """Writes the files of one run and remembers them for evidence items and the manifest."""

    def __init__(self, root: Path, retrieved_at: str) -> None:
        self.root = root
        self.retrieved_at = retrieved_at
        self.hashes: dict[str, str] = {}

    def write(self, relative: str, text: str) -> str:
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        target.write_bytes(data)
        self.hashes[relative] = hashlib.sha256(data).hexdigest()
        return relative

    def evidence(self, relative: str, *, pointer: str = "", lines: str | None = None) -> dict:
        locator = (
            {"kind": "line_range", "value": lines}
            if lines
            else {"kind": "json_pointer", "value": pointer or "/"}
        )
        return {
            "url": f"file:{relative}",
            "snapshot_path": relative,
            "sha256": self.hashes[relative],
            "retrieved_at": self.retrieved_at,
            "locator": locator,
            "artifact_revision": None,
        }

    def manifest(self) -> None:
        files = [
            {"path": path, "bytes": (self.root / path).stat().st_size, "sha256": digest}
            for path, digest in sorted(self.hashes.items())
        ]
        self.write("artifact-manifest.json", _json_text({"files": files}))


def write_run_directory(*, output: Path, spec: RunSpec) -> Path:
    """Write a complete run directory for ``spec`` into ``output``; returns ``output``."""
    output.mkdir(parents=True, exist_ok=True)
    clock = _Clock(spec.started_at)
    writer = _RunWriter(output, retrieved_at=_stamp(spec.started_at))
    writer.write("quality-review.schema.json", SCHEMA_PATH.read_text(encoding="utf-8"))
    source_subject = {
        "id": f"source:{spec.source_id}",
        "level": "source",
        "repository": spec.repository,
        "dataset_revision": spec.dataset_revision,
        "source_id": spec.source_id,
        "task_id": None,
        "task_path": None,
        "row_index": None,
    }
    subjects = [source_subject]
    reviews: list[dict[str, Any]] = []
    task_syntheses = []
    samples = []
    for index in range(spec.sample_count):
        task = _write_task(writer, spec, index, clock)
        subjects.append(task["subject"])
        reviews.extend(task["reviews"])
        task_syntheses.append(task["reviews"][-1]["id"])
        samples.append(task["sample"])
    coalescer = writer.write(
        "coalescer/parsed.json",
        _json_text({"verdict": spec.source_verdict, "notice": EXAMPLE_NOTICE}),
    )
    reviews.append(
        _review(
            spec,
            review_id="source-synthesis",
            subject_id=source_subject["id"],
            reviewer=_actor("model:example/coalescer", "Example combined reviewer"),
            reviewed_at=clock.next(),
            method="synthesis",
            tests_executed=None,
            coverage={
                "scope": "source_sample",
                "sample_count": spec.sample_count,
                "population_count": spec.population_count,
                "sampling_method": "seeded_random",
                "seed": "0",
                "samples": samples,
            },
            summary=f"{EXAMPLE_NOTICE}. Source synthesis of the example run ({spec.label}).",
            verdict=spec.source_verdict,
            findings=_findings("source", spec.source_findings),
            evidence=[writer.evidence(coalescer, pointer="/verdict")],
            derived_from=task_syntheses,
            attributes=dict(spec.extra_attributes),
        )
    )
    created_at = clock.next()
    collection = {
        "schema_version": "0.3.0",
        "created_at": created_at,
        "subjects": subjects,
        "reviews": reviews,
        "tag_assignments": [
            {
                "id": "tag-source-verdict",
                "target": {"kind": "review", "id": "source-synthesis"},
                "namespace": "quality",
                "value": spec.source_verdict,
                "origin": "derived",
                "assigned_by": PUBLISHER,
                "assigned_at": created_at,
                "evidence_review_ids": ["source-synthesis"],
                "note": EXAMPLE_NOTICE,
                "supersedes_assignment_id": None,
                "state": "active",
            }
        ],
        "source_mappings": [],
        "execution_provenance": _provenance(spec),
    }
    writer.write("run.json", _json_text(_run_identity(spec)))
    writer.write(COLLECTION_FILE, _json_text(collection))
    writer.manifest()
    return output


class _Clock:
    """Deterministic judgment times, a minute apart, so regenerated examples are byte-identical."""

    def __init__(self, start: dt.datetime) -> None:
        self.moment = start

    def next(self) -> str:
        self.moment += dt.timedelta(minutes=1)
        return _stamp(self.moment)


def _actor(actor_id: str, label: str, kind: str = "model") -> dict[str, str]:
    return {"id": actor_id, "label": f"{label} ({EXAMPLE_NOTICE.lower()})", "kind": kind}


def _findings(prefix: str, specs: tuple[FindingSpec, ...]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{prefix}-finding-{number}",
            "dimension": spec.dimension,
            "text": spec.text,
            "severity": spec.severity,
            "kind": spec.kind,
        }
        for number, spec in enumerate(specs)
    ]


def _review(spec: RunSpec, **fields: Any) -> dict[str, Any]:
    return {
        "id": fields["review_id"],
        "subject_id": fields["subject_id"],
        "reviewer": fields["reviewer"],
        "publisher": PUBLISHER,
        "reviewed_at": fields["reviewed_at"],
        "imported_at": _stamp(spec.started_at),
        "method": fields["method"],
        "tests_executed": fields["tests_executed"],
        "coverage": fields["coverage"],
        "summary": fields["summary"],
        "verdict": fields["verdict"],
        "metrics": fields.get("metrics", []),
        "findings": fields.get("findings", []),
        "evidence": fields["evidence"],
        "derived_from_review_ids": fields.get("derived_from", []),
        "supersedes_review_id": None,
        "attributes": fields.get("attributes", {}),
    }


def _write_task(writer: _RunWriter, spec: RunSpec, index: int, clock: _Clock) -> dict[str, Any]:
    number = f"{index:04d}"
    task_path = f"tasks/{number}"
    execution = f"{task_path}/execution-000"
    prompt = f"Example prompt {index + 1} for {spec.source_id} (not a real dataset row)."
    answer = str((index + 1) * 7)
    verified = spec.verification_status == "verified"
    verification = {
        "status": spec.verification_status,
        "score": 1.0 if verified else None,
        "passed": verified,
        "reason": "Example verifier outcome" if verified else "Example verifier error",
        "diagnostics": {"notice": EXAMPLE_NOTICE},
    }
    request = {
        "model": "example/solver",
        "messages": [
            {"role": "system", "content": "Solve the task. End with '#### <answer>'."},
            {"role": "user", "content": prompt},
        ],
        "temperature": 1.0,
        "max_tokens": 2048,
    }
    response = {
        "id": f"chatcmpl-example-{number}",
        "object": "chat.completion",
        "model": "example/solver",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": f"Example answer. #### {answer}",
                    "reasoning_content": "Example reasoning for a demo run.",
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 42, "completion_tokens": 12, "total_tokens": 54},
    }
    task_input = {"task": {"task_id": number, "prompt": prompt}, "model": "example/solver"}
    writer.write(f"{execution}/input.json", _json_text(task_input))
    writer.write(f"{execution}/solver/turn-000/request.json", _json_text(request))
    writer.write(f"{execution}/solver/turn-000/response.json", _json_text(response))
    writer.write(
        f"{execution}/solver-trace.json",
        _json_text({"turns": [{"turn": 0, "request": "solver/turn-000/request.json"}]}),
    )
    attempt = writer.write(
        f"{execution}/attempt.json",
        _json_text(
            {"verification": verification, "verifier_executed": True, "done": True, "turns": 1}
        ),
    )
    trace_events = [
        {"at": _stamp(spec.started_at), "event": "verifier_started"},
        {"at": _stamp(spec.started_at), "event": "answer_extracted", "answer": answer},
        {
            "at": _stamp(spec.started_at),
            "event": "verifier_finished",
            "status": spec.verification_status,
        },
    ]
    trace = writer.write(
        f"{execution}/verifier-trace.jsonl",
        "".join(json.dumps(event) + "\n" for event in trace_events),
    )
    writer.write(f"{execution}/verifier.stdout", f"{EXAMPLE_NOTICE}: verifier output {answer}\n")
    writer.write(f"{execution}/verifier.stderr", "")
    subject = {
        "id": f"task:{spec.source_id}:{number}",
        "level": "task",
        "repository": spec.repository,
        "dataset_revision": spec.dataset_revision,
        "source_id": spec.source_id,
        "task_id": number,
        "task_path": task_path,
        "row_index": index,
    }
    sample = {"task_path": task_path, "row_index": index}
    single = {
        "scope": "single_task",
        "sample_count": 1,
        "population_count": spec.population_count,
        "sampling_method": "seeded_random",
        "seed": "0",
        "samples": [sample],
    }
    runtime = _review(
        spec,
        review_id=f"runtime-{number}",
        subject_id=subject["id"],
        reviewer=_actor(
            "organization:native-task-verifier", "Native task verifier", "organization"
        ),
        reviewed_at=clock.next(),
        method="runtime_execution",
        tests_executed=True,
        coverage=single,
        summary=f"{EXAMPLE_NOTICE}. Native attempt of example task {number}.",
        verdict="keep" if verified else "inconclusive",
        metrics=[{"key": "verifier_score", "value": verification["score"], "scale": None}],
        evidence=[
            writer.evidence(attempt, pointer="/verification"),
            writer.evidence(trace, lines="1-3"),
        ],
        attributes={
            "verification": verification,
            "execution_path": execution,
            "route": "skyrl_gym",
            "verifyit_enabled": False,
        },
    )
    judges = []
    for judge_index, (verdict, model) in enumerate(
        zip(spec.judge_verdicts, spec.judge_models, strict=True), start=1
    ):
        parsed = writer.write(
            f"{task_path}/judges/{judge_index}/parsed.json",
            _json_text({"verdict": verdict, "notice": EXAMPLE_NOTICE}),
        )
        findings = spec.judge_findings if index == 0 else ()
        judges.append(
            _review(
                spec,
                review_id=f"judge-{number}-{judge_index}",
                subject_id=subject["id"],
                reviewer=_actor(model, f"Example judge {judge_index}"),
                reviewed_at=clock.next(),
                method="model_judgment",
                tests_executed=False,
                coverage=single,
                summary=f"{EXAMPLE_NOTICE}. Judge {judge_index} on example task {number}.",
                verdict=verdict,
                findings=_findings(f"judge-{number}-{judge_index}", findings),
                evidence=[writer.evidence(parsed, pointer="/verdict")],
                attributes={
                    "judge_index": judge_index,
                    "independent_session": True,
                    "prompt": "Example judge prompt",
                    "evidence_segments": 1,
                    "segment_consolidation_prompt": None,
                },
            )
        )
    synthesis = _review(
        spec,
        review_id=f"task-synthesis-{number}",
        subject_id=subject["id"],
        reviewer=_actor("model:example/coalescer", "Example combined reviewer"),
        reviewed_at=clock.next(),
        method="synthesis",
        tests_executed=None,
        coverage=single,
        summary=f"{EXAMPLE_NOTICE}. Combined review of example task {number}.",
        verdict=spec.judge_verdicts[0],
        evidence=[writer.evidence(attempt, pointer="/verification")],
        derived_from=[runtime["id"], *(judge["id"] for judge in judges)],
    )
    return {"subject": subject, "sample": sample, "reviews": [runtime, *judges, synthesis]}


def _provenance(spec: RunSpec) -> dict[str, Any] | None:
    if not spec.native:
        return None
    provenance: dict[str, Any] = {
        "marinskyrl_commit": EXAMPLE_COMMIT,
        "marinskyrl_dirty": False,
        "marinskyrl_python_tree_sha256": EXAMPLE_TREE,
        "harbor_commit": None,
    }
    if spec.grading is not None:
        provenance["grading_revision"] = spec.grading["grading_revision"]
    return provenance


def _run_identity(spec: RunSpec) -> dict[str, Any]:
    return {
        "notice": EXAMPLE_NOTICE,
        "config_path": "example-review.toml",
        "config": {"source_id": spec.source_id},
        "tasks": [f"tasks/{index:04d}" for index in range(spec.sample_count)],
        "n": spec.sample_count,
        "seed": 0,
        "population": spec.population_count,
        "schema_sha256": hashlib.sha256(SCHEMA_PATH.read_bytes()).hexdigest(),
        "implementation": {},
        "marinskyrl": {
            "checkout": "example",
            "commit": EXAMPLE_COMMIT,
            "dirty": False,
            "python_tree_sha256": EXAMPLE_TREE,
        },
        "grading": spec.grading,
        "input_sha256": None,
        "selected_task_files": {},
        "packed_input_files": {},
    }


def spec_for_row(row: dict[str, Any], profile: ExampleProfile) -> RunSpec:
    return RunSpec(
        source_id=row["id"],
        dataset_revision=row.get("dataset_revision"),
        repository=row.get("dataset_id") or row.get("canonical_source") or row["id"],
        population_count=row.get("task_count"),
        label=profile.label,
        **profile.overrides,
    )
