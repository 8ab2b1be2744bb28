"""``import_audit``: an audit written outside the Atlas — a Task Trove dashboard note, a task
audit — made into the imported collection ``publish_review`` puts in a source's review pool.

The curator writes what the audit says as a small JSON note (``NOTE_KEYS``) beside the files it
cites; the tool refuses a note that is not whole (one line naming the key and what it must be)
before anything is written, then writes a run directory — the note and its files under
``audit/``, one ``source_mappings`` entry confirming the Atlas source it describes, the audit as
reviews of its own upstream subjects (the source, and each audited task) — checked as publication
will check it. Nothing in it rates a source: an imported audit stays historical evidence until a
source synthesis (``synthesise_source``) cites it. Its date stays unknown unless the note gives
one.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviews.production.curation import records
from reviews.production.format.path_safety import resolves_inside
from reviews.production.format.run_files import normalized_relative
from reviews.production.make_review import records as production_records
from reviews.production.runtime.errors import CurationRefused
from reviews.production.runtime.rundir import COLLECTION_FILE, StagedOutput, checked_new, finish

TOOL = "import_audit"
AUDIT_DIR = "audit"
NOTE_NAME = "note.json"
NOTE_KEYS = {
    "atlas_source_id": "the Atlas source the audit describes",
    "upstream": "{name, repository, dataset_revision}: the audited dataset as the audit names it",
    "mapping": "{applicability, note}: how far the audit applies to the Atlas source",
    "reviewer": "{label, kind}: who wrote the audit",
    "reviewed_at": "when it was written (RFC 3339), or null when unknown",
    "method": "static_inspection, human_judgment or unknown",
    "summary": "what the audit says",
    "verdict": "keep, reject, conditional, inconclusive or unrated",
    "findings": "[{text, dimension, severity, kind}]",
    "evidence": "[paths of the files it cites, beside the note]",
    "tasks": "(optional) [{task_id, task_path, row_index, summary, verdict, findings}]",
}
OPTIONAL = frozenset({"tasks"})
METHODS = ("static_inspection", "human_judgment", "unknown")
VERDICTS = ("keep", "reject", "conditional", "inconclusive", "unrated")
APPLICABILITY = ("exact_revision", "historical", "unknown")
ACTOR_KINDS = ("human", "organization", "unknown")
SEVERITIES = ("info", "low", "medium", "high", "critical", None)
FINDING_KINDS = ("issue", "observation", "unknown")


@dataclass(frozen=True)
class ImportOptions:
    note: Path
    output: Path


@dataclass
class ImportResult:
    output: Path
    source_id: str

    @property
    def collection_path(self) -> Path:
        return self.output / COLLECTION_FILE


def import_audit(*, options: ImportOptions) -> ImportResult:
    checked_new(options.output)
    note_path = Path(options.note)
    note = read_note(note_path)
    with StagedOutput(options.output, command=TOOL) as stage:
        audit = stage.path / AUDIT_DIR
        audit.mkdir()
        shutil.copyfile(note_path, audit / NOTE_NAME)
        for relative in note["evidence"]:
            target = audit / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(note_path.parent / relative, target)
        evidence = production_records.EvidenceWriter(stage.path, url_root=stage.output)
        finish(output=stage.path, collection=_collection(note, evidence=evidence))
        output = stage.publish()
    return ImportResult(output=output, source_id=note["atlas_source_id"])


# --- the note ----------------------------------------------------------------------------------


def read_note(path: Path) -> dict[str, Any]:
    """The whole note checked before anything is written; the first problem refuses it."""
    try:
        note = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CurationRefused(f"Cannot read the audit note {path}: {exc}") from None
    if not isinstance(note, dict):
        raise CurationRefused(f"The audit note {path} is not a JSON object")
    unknown = sorted(set(note) - set(NOTE_KEYS))
    if unknown:
        raise CurationRefused(f"The audit note has unknown keys: {', '.join(unknown)}")
    for key in NOTE_KEYS:
        if key not in note and key not in OPTIONAL:
            raise CurationRefused(f"The audit note lacks {key}: {NOTE_KEYS[key]}")
    _text(note, "atlas_source_id")
    upstream = _object(note, "upstream", ("name", "repository", "dataset_revision"))
    _text(upstream, "name", where="upstream.")
    _text(upstream, "repository", where="upstream.")
    _text(upstream, "dataset_revision", where="upstream.", null=True)
    mapping = _object(note, "mapping", ("applicability", "note"))
    _choice(mapping, "applicability", APPLICABILITY, where="mapping.")
    _text(mapping, "note", where="mapping.", null=True)
    reviewer = _object(note, "reviewer", ("label", "kind"))
    _text(reviewer, "label", where="reviewer.")
    _choice(reviewer, "kind", ACTOR_KINDS, where="reviewer.")
    _timestamp(note, "reviewed_at")
    _choice(note, "method", METHODS)
    _judgment(note, where="")
    for number, task in enumerate(_list(note, "tasks") if "tasks" in note else []):
        where = f"tasks[{number}]."
        if not isinstance(task, dict):
            raise CurationRefused(f"The audit note's {where[:-1]} must be an object")
        extra = sorted(
            set(task) - {"task_id", "task_path", "row_index", "summary", "verdict", "findings"}
        )
        if extra:
            raise CurationRefused(f"The audit note's {where[:-1]} has unknown keys: {extra}")
        _text(task, "task_id", where=where)
        _text(task, "task_path", where=where)
        row = task.get("row_index")
        if row is not None and (not isinstance(row, int) or isinstance(row, bool) or row < 0):
            raise CurationRefused(f"The audit note's {where}row_index must be a whole number")
        _judgment(task, where=where)
    _evidence(note, root=path.parent)
    return note


def _judgment(value: dict[str, Any], *, where: str) -> None:
    _text(value, "summary", where=where)
    _choice(value, "verdict", VERDICTS, where=where)
    for number, finding in enumerate(_list(value, "findings", where=where)):
        at = f"{where}findings[{number}]."
        if not isinstance(finding, dict) or set(finding) - {
            "text",
            "dimension",
            "severity",
            "kind",
        }:
            raise CurationRefused(
                f"The audit note's {at[:-1]} must be {{text, dimension, severity, kind}}"
            )
        _text(finding, "text", where=at)
        _text(finding, "dimension", where=at)
        _choice(finding, "severity", SEVERITIES, where=at)
        _choice(finding, "kind", FINDING_KINDS, where=at)
        if finding["kind"] == "observation" and finding["severity"] not in ("info", None):
            raise CurationRefused(
                f"The audit note's {at}severity of an observation must be info or null"
            )


def _evidence(note: dict[str, Any], *, root: Path) -> None:
    paths = _list(note, "evidence")
    if not paths:
        raise CurationRefused("The audit note's evidence must name at least one file it cites")
    for number, value in enumerate(paths):
        relative = normalized_relative(value) if isinstance(value, str) else None
        if relative is None or relative == NOTE_NAME:
            raise CurationRefused(
                f"The audit note's evidence[{number}] must be a relative path beside the note"
            )
        paths[number] = relative
        source = root / relative
        if not resolves_inside(source, root) or not source.is_file():
            raise CurationRefused(
                f"The audit note's evidence[{number}] is not a file beside the note: {relative}"
            )


def _object(note: dict[str, Any], key: str, keys: tuple[str, ...]) -> dict[str, Any]:
    value = note[key]
    if not isinstance(value, dict) or set(value) != set(keys):
        raise CurationRefused(f"The audit note's {key} must be {{{', '.join(keys)}}}")
    return value


def _list(value: dict[str, Any], key: str, *, where: str = "") -> list[Any]:
    found = value.get(key)
    if not isinstance(found, list):
        raise CurationRefused(f"The audit note's {where}{key} must be a list")
    return found


def _text(value: dict[str, Any], key: str, *, where: str = "", null: bool = False) -> None:
    found = value.get(key)
    if found is None and null:
        return
    if not isinstance(found, str) or not found.strip():
        allowed = "text or null" if null else "text"
        raise CurationRefused(f"The audit note's {where}{key} must be {allowed}")


def _choice(value: dict[str, Any], key: str, choices: tuple[Any, ...], *, where: str = "") -> None:
    if value.get(key) not in choices:
        named = ", ".join("null" if choice is None else str(choice) for choice in choices)
        raise CurationRefused(f"The audit note's {where}{key} must be one of {named}")


def _timestamp(note: dict[str, Any], key: str) -> None:
    value = note.get(key)
    if value is None:
        return
    try:
        parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise CurationRefused(
            f"The audit note's {key} must be an RFC 3339 time with its offset, or null"
        )


# --- the collection --------------------------------------------------------------------------


def _collection(
    note: dict[str, Any], *, evidence: production_records.EvidenceWriter
) -> dict[str, Any]:
    upstream = note["upstream"]
    imported_at = records.now_stamp()
    cited = [evidence.item(f"{AUDIT_DIR}/{NOTE_NAME}")] + [
        evidence.item(f"{AUDIT_DIR}/{relative}") for relative in note["evidence"]
    ]
    source = _subject("upstream:source", upstream=upstream)
    reviewer = {
        "id": f"{note['reviewer']['kind']}:{note['reviewer']['label']}",
        "label": note["reviewer"]["label"],
        "kind": note["reviewer"]["kind"],
    }
    subjects = [source]
    reviews = [
        _review(
            "audit:source", subject=source, note=note, judged=note, reviewer=reviewer,
            evidence=cited, imported_at=imported_at,
        )
    ]  # fmt: skip
    for task in note.get("tasks") or []:
        subject = _subject(f"upstream:task/{task['task_id']}", upstream=upstream, task=task)
        subjects.append(subject)
        reviews.append(
            _review(
                f"audit:task/{task['task_id']}",
                subject=subject,
                note=note,
                judged=task,
                reviewer=reviewer,
                evidence=cited,
                imported_at=imported_at,
            )
        )
    return {
        "schema_version": production_records.SCHEMA_VERSION,
        "execution_provenance": None,
        "created_at": imported_at,
        "subjects": subjects,
        "reviews": reviews,
        "tag_assignments": [],
        "source_mappings": [
            {
                "id": "mapping:source",
                "subject_id": source["id"],
                "atlas_source_ids": [note["atlas_source_id"]],
                "status": "confirmed",
                "applicability": note["mapping"]["applicability"],
                "evidence": cited,
                "note": note["mapping"]["note"],
            }
        ],
    }


def _subject(
    subject_id: str, *, upstream: dict[str, Any], task: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "id": subject_id,
        "level": "task" if task else "source",
        "repository": upstream["repository"],
        "dataset_revision": upstream["dataset_revision"],
        "source_id": upstream["name"],
        "task_id": task["task_id"] if task else None,
        "task_path": task["task_path"] if task else None,
        "row_index": task.get("row_index") if task else None,
    }


def _review(
    review_id: str,
    *,
    subject: dict[str, Any],
    note: dict[str, Any],
    judged: dict[str, Any],
    reviewer: dict[str, str],
    evidence: list[dict[str, Any]],
    imported_at: str,
) -> dict[str, Any]:
    task = subject["level"] == "task"
    review = production_records.review(
        review_id=review_id,
        subject_id=subject["id"],
        reviewer=reviewer,
        reviewed_at=note["reviewed_at"],
        imported_at=imported_at,
        method=note["method"],
        tests_executed=None,
        coverage={
            "scope": "single_task" if task else "unknown",
            "sample_count": 1 if task else None,
            "population_count": None,
            "sampling_method": "Imported audit" if task else None,
            "seed": None,
            "samples": (
                [{"task_path": subject["task_path"], "row_index": subject["row_index"]}]
                if task
                else []
            ),
        },
        summary=judged["summary"],
        verdict=judged["verdict"],
        metrics=[],
        findings=judged["findings"],
        evidence=evidence,
        derived_from=[],
        attributes={"imported_with": TOOL, "audit_note": f"{AUDIT_DIR}/{NOTE_NAME}"},
    )
    review["publisher"] = records.tool_actor(TOOL)
    return review
