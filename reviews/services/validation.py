"""Validation of a review run directory before publication.

Checks run in the order ; the first failure raises ``PublicationRejected`` with the exact
message. Nothing here writes: ``publish_run_directory`` calls this inside its transaction, after
which the caller holds the row lock taken by check 8.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction

from atlas.jsonio import json_values
from atlas.models import Source
from atlas.rules import timestamps
from atlas.rules.source_ids import ABSENT_OR_INACTIVE
from reviews.applicability import grading_claim_text
from reviews.identity import Difference, identity_differences
from reviews.kinds import detect_kind, pool_role
from reviews.models import Review, ReviewArtifact
from reviews.production.format.attestations import Bridge, find_bridge
from reviews.production.format.collection_checks import (
    CitedFile,
    CollectionRejected,
    check_collection,
)
from reviews.production.format.evidence_claims import ClaimContradicted, check_collection_claims
from reviews.production.format.evidence_set import (
    COLLECTION_FILE,
    GRADING_CLAIM_PATH,
    globbed_files,
)
from reviews.rating import source_syntheses, source_synthesis
from reviews.services.intake import (
    ArtifactFile,
    RunDirectory,
    artifact_file,
    check_against_stored,
    max_artifact_bytes,
    not_text,
    text_artifact,
)
from reviews.vocabularies import ReviewKind

COMMIT = re.compile(r"^[0-9a-f]{40}$")
LATE_PROOF = re.compile(r"publication/[^/]+\.json")
NATIVE_ATTESTATION = re.compile(r"publication/native-revision-attestation-[^/]+\.json")
MAX_LATE_PROOFS = 20
NO_SOURCE_SUBJECT = "Review subject does not identify the requested Atlas population"


class PublicationRejected(Exception):
    """The run directory cannot be published; the message says what is wrong."""


@dataclass(frozen=True)
class ValidatedRun:
    run_dir: Path
    atlas_id: str
    review_id: str
    collection: dict[str, Any]
    kind: str
    updated_at: dt.datetime | None
    source: Source
    native: bool
    reviewed_data_revision: str | None
    run_grading: dict[str, Any] | None
    files: tuple[ArtifactFile, ...]
    # What executed and differs from the row's pins (rating): empty when the review is current.
    identity_differences: tuple[Difference, ...] = ()


def validate_run_directory(*, run_dir: Path, atlas_id: str) -> ValidatedRun:
    run_dir = Path(run_dir)
    raw, collection = _load_collection(run_dir)
    files_in_run = RunDirectory(run_dir)
    try:
        # Steps 2–6: the same checks make_review runs before it writes a collection.
        cited = check_collection(
            collection=collection, run_dir=run_dir, max_file_bytes=max_artifact_bytes()
        )
    except CollectionRejected as exc:
        raise PublicationRejected(str(exc)) from exc
    kind = detect_kind(collection)
    _check_provenance(collection, kind)
    source = _locked_active_source(atlas_id)
    source_subject = _check_identity(collection, kind, atlas_id)
    native = collection["execution_provenance"] is not None
    payload = source.payload or {}
    run_grading = None
    reviewed_data_revision = None
    updated_at = latest_reviewed_at(collection)
    _check_not_in_future(updated_at)
    if kind == ReviewKind.RATING:
        if source_subject is None:  # _check_identity returns it for every kind but imported
            raise PublicationRejected(NO_SOURCE_SUBJECT)
        if native and payload.get("grading_revision"):
            run_grading = _check_grading_identity(run_dir, collection, atlas_id, payload)
        reviewed_data_revision = _check_data_revision(run_dir, collection, source_subject, payload)
        _check_single_source_synthesis(collection)
        _check_not_older(source, updated_at)
    review_id = hashlib.sha256(raw).hexdigest()
    generated = []
    if run_grading is not None:
        claim = grading_claim_text(
            source_id=atlas_id,
            review_id=review_id,
            source_revision=reviewed_data_revision,
            captured_verifier_revision=payload.get("verifier_revision"),
            grading_revision=payload["grading_revision"],
            execution_grading=run_grading,
        )
        generated.append(
            artifact_file(path=GRADING_CLAIM_PATH, data=claim.encode("utf-8"), content=claim)
        )
    files = _archived_files(files_in_run, raw, review_id, cited, generated)
    if kind != ReviewKind.IMPORTED:  # an outside audit archives no native runs to hold it to
        _check_claims_against_archive(collection, files)
    _check_existing_artifacts(review_id, files)
    differences: tuple[Difference, ...] = ()
    if kind == ReviewKind.RATING and run_grading is None:
        # A verified grading identity already proves the executed grading code equal to the
        # row's manifest (source-specific tracking); otherwise identity decides currency.
        differences = tuple(
            identity_differences(
                payload=payload,
                collection=collection,
                attestations={
                    file.path: file.content
                    for file in files
                    if NATIVE_ATTESTATION.fullmatch(file.path)
                },
            )
        )
    return ValidatedRun(
        run_dir=run_dir,
        atlas_id=atlas_id,
        review_id=review_id,
        collection=collection,
        kind=kind,
        updated_at=updated_at,
        source=source,
        native=native,
        reviewed_data_revision=reviewed_data_revision,
        run_grading=run_grading,
        files=files,
        identity_differences=differences,
    )


def latest_reviewed_at(collection: dict[str, Any]) -> dt.datetime | None:
    dates = [
        parse_timestamp(review["reviewed_at"])
        for review in collection["reviews"]
        if review["reviewed_at"] is not None
    ]
    return max(dates) if dates else None


def parse_timestamp(value: str) -> dt.datetime:
    """The schema's date-time format already checked ``value`` (RFC 3339)."""
    return timestamps.parse(value)


# --- the collection on its own ---


def _load_collection(run_dir: Path) -> tuple[bytes, Any]:
    raw = RunDirectory(run_dir).read(
        COLLECTION_FILE, limit=max_artifact_bytes(), error=PublicationRejected
    )
    if raw is None:
        raise PublicationRejected("Run directory has no quality-reviews.json")
    try:
        collection, unstorable = json_values.loads_storable(raw)
    except json_values.UnreadableJson as exc:
        raise PublicationRejected(f"Review collection is not valid JSON: {exc}") from None
    if unstorable is not None:
        raise PublicationRejected(
            "Review collection holds a value the Atlas cannot store at "
            + json_values.refusal_at(unstorable)
        )
    return raw, collection


def _check_provenance(collection: dict[str, Any], kind: str) -> None:
    if collection["execution_provenance"] is not None or kind == ReviewKind.IMPORTED:
        return
    if kind == ReviewKind.SUPPLEMENTAL:
        carriers = [review for review in collection["reviews"] if pool_role(review)]
    else:
        source_subjects = {s["id"] for s in collection["subjects"] if s["level"] == "source"}
        carriers = [
            review
            for review in collection["reviews"]
            if review["method"] == "synthesis" and review["subject_id"] in source_subjects
        ]
    if not any(
        isinstance(commit := review["attributes"].get("inspected_marinskyrl_commit"), str)
        and COMMIT.match(commit)
        for review in carriers
    ):
        raise PublicationRejected("Native reviews must record the MSkyRL commit")


# --- against the Atlas source ---


def _locked_active_source(atlas_id: str) -> Source:
    with transaction.atomic():
        rows = list(Source.objects.active().select_for_update().filter(id=atlas_id))
    if len(rows) != 1:
        raise PublicationRejected(ABSENT_OR_INACTIVE)
    return rows[0]


def _check_identity(collection: dict[str, Any], kind: str, atlas_id: str) -> dict[str, Any] | None:
    if kind == ReviewKind.IMPORTED:
        if not any(
            mapping["status"] == "confirmed" and mapping["atlas_source_ids"] == [atlas_id]
            for mapping in collection["source_mappings"]
        ):
            raise PublicationRejected(
                "Imported review has no confirmed mapping to the requested Atlas population"
            )
        return None
    source_subjects = [s for s in collection["subjects"] if s["level"] == "source"]
    if len(source_subjects) != 1 or source_subjects[0]["source_id"] != atlas_id:
        raise PublicationRejected(NO_SOURCE_SUBJECT)
    return source_subjects[0]


def _check_grading_identity(
    run_dir: Path, collection: dict[str, Any], atlas_id: str, payload: dict[str, Any]
) -> dict[str, Any]:
    try:
        run = json.loads((run_dir / "run.json").read_bytes())
    except (OSError, ValueError, RecursionError):  # nested thousands deep: as unreadable
        run = None
    grading = run.get("grading") if isinstance(run, dict) else None
    if not isinstance(grading, dict) or grading.get("source_id") != atlas_id:
        raise PublicationRejected(
            "Native review lacks its source-specific executed grading identity"
        )
    expected = payload["grading_revision"]
    executed = collection["execution_provenance"].get("grading_revision")
    if grading.get("grading_revision") != expected or executed != expected:
        raise PublicationRejected("Executed grading identity differs from the current Atlas source")
    return grading


def _check_data_revision(
    run_dir: Path,
    collection: dict[str, Any],
    source_subject: dict[str, Any],
    payload: dict[str, Any],
) -> str | None:
    executed = source_subject["dataset_revision"]
    current = payload.get("dataset_revision")
    if executed == current:
        return executed
    synthesis = source_synthesis(collection)
    bridge = find_bridge(
        run_dir=run_dir,
        executed_revision=executed,
        current_revision=current,
        synthesis_population=synthesis["coverage"]["population_count"] if synthesis else None,
        task_count=payload.get("task_count"),
    )
    if bridge is Bridge.ABSENT:
        raise PublicationRejected("Reviewed data revision differs from the current Atlas source")
    if bridge is Bridge.INVALID:
        raise PublicationRejected(
            "Dataset revision attestation does not bridge the reviewed and current data revisions"
        )
    return current


def _check_single_source_synthesis(collection: dict[str, Any]) -> None:
    if len(source_syntheses(collection)) != 1:
        raise PublicationRejected("Publish one Atlas source population per review collection")


def _check_not_older(source: Source, updated_at: dt.datetime | None) -> None:
    if updated_at is None or not source.review_id:
        return
    current = (
        Review.objects.filter(id=source.review_id).values_list("updated_at", flat=True).first()
    )
    if current is not None and updated_at < current:
        raise PublicationRejected("A newer review is already current for this source")


# --- the files to archive ---


def _archived_files(
    files_in_run: RunDirectory,
    raw: bytes,
    review_id: str,
    cited: dict[str, CitedFile],
    generated: list[ArtifactFile],
) -> tuple[ArtifactFile, ...]:
    """The collection, cited evidence and present optional files; the publisher's own files
    (``generated``) replace any copy left in the run directory by an earlier publication. Files
    already hashed (the collection, whose digest is ``review_id``, and the cited evidence) are
    not hashed again."""
    limit = max_artifact_bytes()
    collection_file = text_artifact(
        relative=COLLECTION_FILE, data=raw, limit=limit, error=PublicationRejected, sha256=review_id
    )
    if collection_file is None:  # cannot happen: the collection parsed as UTF-8 JSON (no NUL)
        raise PublicationRejected(not_text(path=COLLECTION_FILE))
    files = [collection_file]
    skipped = {COLLECTION_FILE, *(file.path for file in generated)}
    for path in sorted(set(cited).union(globbed_files(files_in_run))):
        if path in skipped:
            continue
        checked = cited.get(path)
        if checked is None:
            # Links out, hard links, devices, FIFOs and other mounts are left out.
            data = files_in_run.read(path, limit=limit, error=PublicationRejected)
            if data is None:
                continue
            digest = None
        else:
            data, digest = checked.data, checked.sha256
        file = text_artifact(
            relative=path, data=data, limit=limit, error=PublicationRejected, sha256=digest
        )
        if file is None:
            if checked is not None:
                raise PublicationRejected(not_text(path=path))
            continue  # uncited non-text files of the globbed set are skipped
        files.append(file)
    return tuple(sorted([*files, *generated], key=lambda file: file.path))


def _check_claims_against_archive(
    collection: dict[str, Any], files: tuple[ArtifactFile, ...]
) -> None:
    """What the reviews say agrees with the native records archived beside them."""
    try:
        check_collection_claims(
            collection=collection, archive={file.path: file.content for file in files}
        )
    except ClaimContradicted as exc:
        raise PublicationRejected(str(exc)) from None


def _check_not_in_future(updated_at: dt.datetime | None) -> None:
    """A judgment dated beyond the clock-skew allowance would block every later real review of
    the source as "older"."""
    if updated_at is not None and updated_at > timestamps.latest_acceptable():
        raise PublicationRejected(
            f"Review judgment time is in the future: {timestamps.format_utc(updated_at)}"
        )


def _check_existing_artifacts(review_id: str, files: tuple[ArtifactFile, ...]) -> None:
    check_against_stored(review_id=review_id, files=files, error=PublicationRejected)
    if not Review.objects.filter(id=review_id).exists():
        return
    # A published review's evidence is immutable: the same bytes again are a no-op and a new file
    # is refused — except the few publisher proofs a later re-publication attaches (attestations
    # and grading proofs directly under publication/, bounded in number). Difficulty artifacts
    # attached by publish_difficulty are not part of this comparison.
    stored = set(ReviewArtifact.objects.filter(review_id=review_id).values_list("path", flat=True))
    added = sorted(file.path for file in files if file.path not in stored)
    refused = [path for path in added if not LATE_PROOF.fullmatch(path)]
    if not refused:
        budget = MAX_LATE_PROOFS - sum(1 for path in stored if LATE_PROOF.fullmatch(path))
        refused = added[max(budget, 0) :]
    if refused:
        raise PublicationRejected(
            f"Review collection is already published; its evidence cannot change: {refused[0]}"
        )
