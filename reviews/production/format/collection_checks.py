"""The database-free checks of a review collection (publication steps 2–6).

One code path for two callers: publication (``reviews.services.validation``) runs these before the
checks against the Atlas source, and production (``reviews.production``) runs
them after each judge and on the final collection. Nothing here touches the database, so
``make_review`` can validate on a machine without an Atlas database.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atlas.jsonio.json_schemas import SchemaValidator
from atlas.jsonio.json_values import printable
from reviews.production.format.run_files import (
    DEFAULT_MAX_ARTIFACT_BYTES,
    RunDirectory,
    normalized_relative,
)

SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "quality-review.schema.json"


class CollectionRejected(Exception):
    """The collection breaks one of publication steps 2–6; the message says which rule."""


@functools.cache
def shipped_validator() -> SchemaValidator:
    return SchemaValidator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


def json_pointer(parts: Any) -> str:
    """The RFC 6901 pointer of a path, each key ``printable`` (a message must be storable and
    shown: a model's answer may hold a lone surrogate in a key)."""
    escaped = [printable(str(part)).replace("~", "~0").replace("/", "~1") for part in parts]
    return "/" + "/".join(escaped) if escaped else "/"


def check_collection(
    *, collection: Any, run_dir: Path, max_file_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES
) -> dict[str, CitedFile]:
    """Steps 2–6 in order; returns every cited evidence file by normalised path."""
    check_schema(collection)
    check_unique_identities(collection)
    check_review_references(collection)
    cited = check_evidence_files(
        files_in_run=RunDirectory(Path(run_dir)), collection=collection, limit=max_file_bytes
    )
    check_tag_references(collection)
    return cited


def check_schema(collection: Any) -> None:
    error = shipped_validator().first_error(collection)
    if error is not None:
        raise CollectionRejected(
            "Review collection does not match quality-review.schema.json at "
            f"{json_pointer(error.path)}: {error.message}"
        )


def check_unique_identities(collection: dict[str, Any]) -> None:
    for items in (collection["subjects"], collection["reviews"]):
        ids = [item["id"] for item in items]
        if len(ids) != len(set(ids)):
            raise CollectionRejected("Duplicate subject/review identity")


def check_review_references(collection: dict[str, Any]) -> None:
    subject_ids = {subject["id"] for subject in collection["subjects"]}
    review_ids = {review["id"] for review in collection["reviews"]}
    for review in collection["reviews"]:
        if review["subject_id"] not in subject_ids or not set(
            review["derived_from_review_ids"]
        ).issubset(review_ids):
            raise CollectionRejected("Unresolved review reference")


def _all_evidence(collection: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for review in collection["reviews"]:
        yield from review["evidence"]
    for mapping in collection["source_mappings"]:
        yield from mapping["evidence"]


@dataclass(frozen=True)
class CitedFile:
    """A cited evidence file as checked: its bytes and their digest (hashed once per run)."""

    data: bytes
    sha256: str


def _mismatch(snapshot_path: str) -> CollectionRejected:
    return CollectionRejected(f"Review evidence path/hash mismatch: {printable(snapshot_path)}")


def check_evidence_files(
    *, files_in_run: RunDirectory, collection: dict[str, Any], limit: int
) -> dict[str, CitedFile]:
    """Every cited snapshot, hash-checked; returns them by normalised path."""
    cited: dict[str, CitedFile] = {}
    for evidence in _all_evidence(collection):
        snapshot_path = evidence["snapshot_path"]
        relative = normalized_relative(snapshot_path)
        if relative is None:
            raise _mismatch(snapshot_path)
        file = cited.get(relative)
        if file is None:
            # Bounded like every artifact: a huge cited file is refused, not read into memory.
            data = files_in_run.read(relative, limit=limit, error=CollectionRejected)
            if data is not None:
                file = CitedFile(data=data, sha256=hashlib.sha256(data).hexdigest())
        if file is None or file.sha256 != evidence["sha256"]:
            raise _mismatch(snapshot_path)
        cited[relative] = file
    return cited


def check_tag_references(collection: dict[str, Any]) -> None:
    known = {
        "subject": {subject["id"] for subject in collection["subjects"]},
        "review": {review["id"] for review in collection["reviews"]},
        "finding": {
            finding["id"] for review in collection["reviews"] for finding in review["findings"]
        },
    }
    for assignment in collection["tag_assignments"]:
        target = assignment["target"]
        if target["id"] not in known[target["kind"]] or not set(
            assignment["evidence_review_ids"]
        ).issubset(known["review"]):
            raise CollectionRejected("Unresolved tag reference")
