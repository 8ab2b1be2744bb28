"""The validate stage: the checks publication runs (its steps 2–6) on every collection the run
writes — each judge's fresh reviews as they finish, the final collection, a saved one on resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviews.production.format.collection_checks import CollectionRejected, check_collection
from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.rundir import (
    COLLECTION_FILE,
    MANIFEST_FILE,
    artifact_manifest,
    json_text,
    read_json,
    write_json_file,
    write_text_file,
)


def validate(*, collection: dict[str, Any], run_dir: Path) -> None:
    """The same checks as publication steps 2–6."""
    try:
        check_collection(collection=collection, run_dir=run_dir)
    except CollectionRejected as exc:
        raise ReviewProductionError(str(exc)) from None


def revalidate(*, run_dir: Path) -> int:
    """A finished run's saved collection, checked again; its number of reviews."""
    path = run_dir / COLLECTION_FILE
    collection = read_json(path)
    if collection is None:
        raise ReviewProductionError(f"Saved collection is not valid JSON: {path}")
    validate(collection=collection, run_dir=run_dir)
    return len(collection["reviews"])


def write_collection(*, collection: dict[str, Any], run_dir: Path) -> None:
    """The final collection, validated, then its artifact manifest."""
    validate(collection=collection, run_dir=run_dir)
    write_text_file(run_dir / COLLECTION_FILE, json_text(collection))
    write_json_file(run_dir / MANIFEST_FILE, artifact_manifest(run_dir=run_dir))
