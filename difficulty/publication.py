"""Publishing a difficulty run directory onto the source's current review."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from atlas.jsonio import json_values
from atlas.models import Source
from atlas.rules import timestamps
from atlas.rules.vocabularies import ChangeKind
from atlas.services.changes import curation_state, record_curation
from atlas.services.display import refresh_display_state
from difficulty.attestation import (
    ATTESTATION_PATH,
    AttestationError,
    validation_paths,
    verify_attestation,
)
from difficulty.classification import CURRENT, classify_report
from difficulty.counting import check_report_counts
from difficulty.eligibility import INACTIVE, NOT_GOOD, Standing, refusal
from difficulty.reports import (
    CONTEXT_PATH,
    HISTORY_PREFIX,
    REPORT_PATH,
    NotAReportError,
    missing_key,
    models_of,
    outcomes_of,
    parse_report,
    referenced_paths,
    run_identity_path,
)
from difficulty.summary import build_summary
from reviews.models import Review, ReviewArtifact
from reviews.production.format.evidence_claims import ClaimContradicted
from reviews.services.defects import has_open_defect
from reviews.services.intake import (
    ArtifactFile,
    RunDirectory,
    as_text,
    check_against_stored,
    max_artifact_bytes,
    not_text,
    read_limited,
    store_new_artifacts,
    text_artifact,
)
from reviews.services.jobs import Importer

RESULT_FILE = "atlas-difficulty-publication.json"


class DifficultyPublicationError(Exception):
    """A check failed; nothing was written."""


def publish_difficulty_run(*, run_dir: Path, atlas_id: str, user: Any = None) -> dict[str, Any]:
    """Validate the whole run directory, then write in one transaction; returns the result.
    ``user`` is who published (the catalog history records it); artifacts carry no author."""
    run_dir = Path(run_dir)
    report_text = _read_report(run_dir=run_dir)
    report = _checked_report(text=report_text, atlas_id=atlas_id)
    with transaction.atomic():
        source = Source.objects.active().select_for_update().filter(id=atlas_id).first()
        if source is None:
            raise DifficultyPublicationError(INACTIVE)
        review = _checked_source(source=source, report=report)
        evidence = _checked_evidence(run_dir=run_dir, report=report, report_text=report_text)
        _check_counted_from(review=review, report=report, evidence=evidence)
        _check_counts(report=report, evidence=evidence)
        _check_existing(review=review, evidence=evidence)
        before = curation_state(source_id=source.id)
        republished = ReviewArtifact.objects.filter(
            review=review, path=REPORT_PATH, sha256=evidence[0].sha256
        ).exists()
        archived = _archive_previous_report(review=review, new_sha256=evidence[0].sha256)
        _store(review=review, evidence=evidence)
        classification = classify_report(report=report)
        text = build_summary(report=report, classification=classification)["text"]
        Source.objects.filter(id=source.id).update(difficulty=text)
        refresh_display_state(source_ids=[source.id])
        record_curation(
            kind=ChangeKind.DIFFICULTY_PUBLISHED,
            source_id=source.id,
            before=before,
            user=user,
            review_id=review.id,
            note=text,
            only_if_changed=republished,
        )
    result = {
        "atlas_id": atlas_id,
        "review_id": review.id,
        "status": classification.status,
        "difficulty": text,
        "archived_previous_report": archived,
        "url": f"{settings.ATLAS_PUBLIC_URL.rstrip('/')}/reviews/{review.id}/#difficulty",
    }
    (run_dir / RESULT_FILE).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def _read_report(*, run_dir: Path) -> str:
    path = RunDirectory(run_dir).resolve(REPORT_PATH)
    if path is None:
        raise DifficultyPublicationError(str(NotAReportError()))
    data = read_limited(
        path, relative=REPORT_PATH, limit=max_artifact_bytes(), error=DifficultyPublicationError
    )
    text = as_text(data)
    if text is None:
        raise DifficultyPublicationError(str(NotAReportError()))
    return text


def _checked_report(*, text: str, atlas_id: str) -> dict[str, Any]:
    try:
        report = parse_report(text=text)
    except NotAReportError as error:
        raise DifficultyPublicationError(str(error)) from error
    unstorable = json_values.unstorable_path(report)
    if unstorable is not None:
        raise DifficultyPublicationError(
            "Difficulty report holds a value the Atlas cannot store at "
            + json_values.refusal_at(unstorable)
        )
    key = missing_key(report=report)
    if key:
        raise DifficultyPublicationError(f"Difficulty report lacks {key}")
    if report["atlas_id"] != atlas_id:
        raise DifficultyPublicationError("Difficulty report names a different Atlas source")
    estimated_at = timestamps.parse_or_none(report["estimated_at"])
    if estimated_at is not None and estimated_at > timestamps.latest_acceptable():
        raise DifficultyPublicationError(
            f"Difficulty measurement time is in the future: {report['estimated_at']}"
        )
    return report


def _checked_source(*, source: Source, report: dict[str, Any]) -> Review:
    review = Review.objects.filter(id=source.review_id, source=source).first()
    refused = refusal(
        Standing(
            active=source.active,
            effective_quality=source.effective_quality,
            review_stale=source.review_stale,
            # Counted, not read from the display cache: the source row is locked, the issue
            # table is the truth.
            open_defect=has_open_defect(source_id=source.id),
            review_is_current=review is not None,
        )
    )
    if refused:
        raise DifficultyPublicationError(refused)
    if review is None:  # cannot happen: refusal() refuses a source without a current review
        raise DifficultyPublicationError(NOT_GOOD)
    if "source_revision" in report and report["source_revision"] != (source.payload or {}).get(
        "dataset_revision"
    ):
        raise DifficultyPublicationError(
            "Difficulty report covers a different data revision than the current Atlas source"
        )
    classification = classify_report(report=report)
    if classification.status != CURRENT:
        raise DifficultyPublicationError(
            f"Difficulty report does not follow the current protocol: {classification.note}"
        )
    return review


def _check_counted_from(
    *, review: Review, report: dict[str, Any], evidence: list[ArtifactFile]
) -> None:
    """A report is attached to the source's current review: the review its inputs were counted
    from (``difficulty/context.json``'s reviewer baseline, each arm's ``run.json``
    ``atlas_review_id``, as make_difficulty read them from ``source.current_review`` and
    ``source.grading_snapshot``) must be that review, not one a newer publication superseded."""
    files = {file.path: file.content for file in evidence}
    named: list[tuple[str, Any]] = []
    context = _json_or_none(files.get(CONTEXT_PATH))
    baseline = context.get("reviewer_rollout_baseline") if isinstance(context, dict) else None
    if isinstance(baseline, dict) and "review_id" in baseline:
        named.append((CONTEXT_PATH, baseline["review_id"]))
    for model in models_of(report):
        path = run_identity_path(report=report, size=str(model.get("size")))
        identity = _json_or_none(files.get(path))
        if isinstance(identity, dict) and identity.get("atlas_review_id") is not None:
            named.append((path, identity["atlas_review_id"]))
    for path, counted in named:
        if counted != review.id:
            shown = json_values.printable(str(counted), limit=80)
            raise DifficultyPublicationError(
                f"Difficulty report was counted from review {shown} ({path}), "
                f"but the source's current review is {review.id}: run make_difficulty again with "
                f"source.current_review and source.grading_snapshot of review {review.id}"
            )


def _check_counts(*, report: dict[str, Any], evidence: list[ArtifactFile]) -> None:
    try:
        check_report_counts(report=report, archive={file.path: file.content for file in evidence})
    except ClaimContradicted as error:
        raise DifficultyPublicationError(str(error)) from None


def _json_or_none(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _required_paths(report: dict[str, Any]) -> set[str]:
    required = {
        run_identity_path(report=report, size=str(m.get("size"))) for m in models_of(report)
    }
    for model in models_of(report):
        required.update(
            o["execution_path"]
            for o in outcomes_of(model)
            if isinstance(o.get("execution_path"), str)
        )
    return required


def _checked_evidence(
    *, run_dir: Path, report: dict[str, Any], report_text: str
) -> list[ArtifactFile]:
    run = RunDirectory(run_dir)
    required = _required_paths(report)
    references = referenced_paths(report=report)
    references += sorted(required - set(references))
    cited: list[Path] = []
    for relative in references:
        target = run.contains(relative)
        if target is None:
            raise DifficultyPublicationError(
                f"Difficulty evidence path escapes the run directory: {relative}"
            )
        # os.path.exists: a path the system cannot name (too long) does not exist, where
        # Path.exists raised OSError (Python 3.11) instead of a refusal.
        if not os.path.exists(target):
            if relative in required:
                raise DifficultyPublicationError(f"Difficulty evidence missing: {relative}")
            continue
        cited.extend(_contained(run, target))
    attestation = run.resolve(ATTESTATION_PATH)
    if attestation is not None:
        try:
            text = attestation.read_text(encoding="utf-8")
            document = verify_attestation(text=text, run_dir=run.root)
        except (AttestationError, UnicodeDecodeError) as error:
            raise DifficultyPublicationError(str(error)) from error
        cited.append(attestation)
        # The validation of changed execution code is evidence too: archive what it names.
        for relative in validation_paths(document=document):
            target = run.contains(relative)
            if target is not None and os.path.isfile(target):
                cited.extend(_contained(run, target))
    folder = run.contains("difficulty")
    globbed = _contained(run, folder) if folder is not None and folder.is_dir() else []
    return _evidence_files(run=run, report_text=report_text, cited=cited, globbed=globbed)


def _contained(run: RunDirectory, target: Path) -> list[Path]:
    files, refused = run.files_under(target)
    if refused:
        raise DifficultyPublicationError(
            f"Difficulty evidence path escapes the run directory: {refused[0]}"
        )
    return files


def _evidence_files(
    *, run: RunDirectory, report_text: str, cited: list[Path], globbed: list[Path]
) -> list[ArtifactFile]:
    limit = max_artifact_bytes()
    error = DifficultyPublicationError
    report = text_artifact(
        relative=REPORT_PATH, data=report_text.encode("utf-8"), limit=limit, error=error
    )
    if report is None:  # cannot happen: the report parsed as UTF-8 JSON, which holds no NUL
        raise DifficultyPublicationError(not_text(path=REPORT_PATH))
    files = [report]
    seen = {REPORT_PATH}
    cited_set = {path.resolve() for path in cited}
    for path in [*cited, *globbed]:
        relative = run.relative(path)
        if relative in seen:
            continue
        data = read_limited(path, relative=relative, limit=limit, error=error)
        file = text_artifact(relative=relative, data=data, limit=limit, error=error)
        if file is None:
            if path.resolve() in cited_set:
                raise DifficultyPublicationError(not_text(path=relative))
            continue  # uncited non-text files of the globbed set are skipped
        files.append(file)
        seen.add(relative)
    return files


def _check_existing(*, review: Review, evidence: list[ArtifactFile]) -> None:
    # difficulty.json is the one replaceable path: the previous report is archived first.
    check_against_stored(
        review_id=review.id,
        files=evidence,
        replaceable=frozenset({REPORT_PATH}),
        error=DifficultyPublicationError,
    )


def archive_path(*, estimated_at: Any, sha256: str, fallback: dt.datetime) -> str:
    """difficulty/history/<estimated_at as YYYYMMDDTHHMMSSZ>-<first 12 hex>.json"""
    moment = timestamps.parse_or_none(estimated_at) or fallback
    stamp = timestamps.compact_stamp(moment)
    return f"{HISTORY_PREFIX}{stamp}-{sha256[:12]}.json"


def _archive_previous_report(*, review: Review, new_sha256: str) -> str | None:
    previous = ReviewArtifact.objects.filter(review=review, path=REPORT_PATH).first()
    if previous is None or previous.sha256 == new_sha256:
        return None
    try:
        estimated_at = json.loads(previous.content).get("estimated_at")
    except (ValueError, AttributeError):
        estimated_at = None
    path = archive_path(
        estimated_at=estimated_at, sha256=previous.sha256, fallback=previous.created_at
    )
    ReviewArtifact.objects.get_or_create(
        review=review,
        path=path,
        defaults={"content": previous.content, "sha256": previous.sha256, "size": previous.size},
    )
    return path


def _store(*, review: Review, evidence: list[ArtifactFile]) -> None:
    """difficulty.json is the one replaceable path; every other file is inserted if absent
    (_check_existing has already refused different bytes at an existing path)."""
    report = next(item for item in evidence if item.path == REPORT_PATH)
    ReviewArtifact.objects.update_or_create(
        review=review,
        path=REPORT_PATH,
        defaults={"content": report.content, "sha256": report.sha256, "size": report.size},
    )
    store_new_artifacts(
        review=review, files=[item for item in evidence if item.path != REPORT_PATH]
    )


def _import_upload(*, run_dir: Path, publication: Any) -> dict[str, Any]:
    return publish_difficulty_run(
        run_dir=run_dir, atlas_id=publication.atlas_id, user=publication.created_by
    )


IMPORTER = Importer(publish=_import_upload, refusals=(DifficultyPublicationError,))
