"""The catalog artifact (``dist/catalog.json``): canonical form, revision, writing, and the complete
validation a sync runs before it changes anything."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atlas import timestamps
from atlas.vocabularies import UNCLASSIFIED, Quality, SourceType, Turns

SCHEMA_VERSION = 1
TYPES = (*SourceType.values, UNCLASSIFIED)
TURNS = (*Turns.values, UNCLASSIFIED)
QUALITIES = tuple(Quality.values)
STRING_OR_NULL_FIELDS = (
    "name", "display_name", "family", "notes", "dataset_id", "dataset_revision", "url",
    "canonical_source", "canonical_url", "verifier_name", "verifier_revision", "verifier_url",
    "quality", "review_url", "review_date", "review_source_revision", "review_verifier_revision",
    "difficulty", "grading_revision",
)  # fmt: skip


class CatalogInvalid(Exception):
    """The artifact failed validation; ``str(exc)`` is the message for the user."""


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def catalog_revision(rows: list[dict[str, Any]]) -> str:
    return hashlib.sha256(canonical_json(rows).encode("ascii")).hexdigest()


def render_document(rows: list[dict[str, Any]]) -> str:
    document = {
        "schema_version": SCHEMA_VERSION,
        "revision": catalog_revision(rows),
        "sources": rows,
    }
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=True) + "\n"


def write_document(*, rows: list[dict[str, Any]], output: Path) -> str:
    """Write atomically (temporary file + rename) and return the revision."""
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    text = render_document(rows)
    handle, temporary = tempfile.mkstemp(
        dir=output.parent, prefix=f".{output.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "w", encoding="ascii", newline="\n") as stream:
            stream.write(text)
        os.replace(temporary, output)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return catalog_revision(rows)


@dataclass(frozen=True)
class OriginSnapshot:
    origin: str
    revision: str
    revised_at: str | None
    rows: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class ValidatedCatalog:
    revision: str
    revised_at: str | None
    snapshots: tuple[OriginSnapshot, ...]

    @property
    def source_ids(self) -> set[str]:
        return {row["id"] for snapshot in self.snapshots for row in snapshot.rows}


_cache_lock = threading.Lock()
_cache: dict[str, ValidatedCatalog] = {}


def load_catalog(path: Path) -> ValidatedCatalog:
    """Read and validate the whole artifact. An unchanged file (same bytes) is validated once."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        raise CatalogInvalid(f"Catalog artifact not found: {path}") from None
    digest = hashlib.sha256(data).hexdigest()
    with _cache_lock:
        cached = _cache.get(digest)
    if cached is not None:
        return cached
    validated = validate_bytes(data)
    with _cache_lock:
        _cache.clear()
        _cache[digest] = validated
    return validated


def validate_bytes(data: bytes) -> ValidatedCatalog:
    try:
        document = json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError as exc:
        raise CatalogInvalid(f"Catalog artifact is not valid JSON: {exc}") from None
    except (json.JSONDecodeError, ValueError) as exc:
        raise CatalogInvalid(f"Catalog artifact is not valid JSON: {exc}") from None
    if not isinstance(document, dict):
        raise CatalogInvalid("Catalog artifact is not valid JSON: the document is not an object")
    version = document.get("schema_version")
    if type(version) is not int or version != SCHEMA_VERSION:
        raise CatalogInvalid(f"Unsupported catalog schema version: {json.dumps(version)}")
    revision = document.get("revision")
    if not isinstance(revision, str) or not revision:
        raise CatalogInvalid("Generated catalog has no revision")
    rows = document.get("sources")
    if not isinstance(rows, list):
        raise CatalogInvalid("Catalog sources must be a list")
    if catalog_revision(rows) != revision:
        raise CatalogInvalid("Catalog revision does not match its sources")
    # Rules 7, 8 and 9 are checked in that order over the whole list (one pass per rule), so the
    # reported message follows the rules' precedence rather than the position of the bad row.
    for row in rows:
        if not isinstance(row, dict):
            raise CatalogInvalid("Catalog source requires a nonempty id and origin")
        source_id, origin = row.get("id"), row.get("origin")
        if not (isinstance(source_id, str) and source_id and isinstance(origin, str) and origin):
            raise CatalogInvalid("Catalog source requires a nonempty id and origin")
    seen: set[str] = set()
    for row in rows:
        if row["id"] in seen:
            raise CatalogInvalid(f"Duplicate catalog source: {row['id']}")
        seen.add(row["id"])
    for row in rows:
        bad_field = _invalid_field(row)
        if bad_field:
            raise CatalogInvalid(f"Catalog source {row['id']} has an invalid {bad_field}")
    revised_at = document.get("revised_at")
    if revised_at is not None and not timestamps.is_valid(revised_at):
        raise CatalogInvalid("Catalog revised_at must be a timestamp or null")
    by_origin: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_origin.setdefault(row["origin"], []).append(row)
    snapshots = tuple(
        OriginSnapshot(origin=o, revision=revision, revised_at=revised_at, rows=tuple(by_origin[o]))
        for o in sorted(by_origin)
    )
    return ValidatedCatalog(revision=revision, revised_at=revised_at, snapshots=snapshots)


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are Python extensions, not JSON.
    raise ValueError(f"{name} is not a JSON value")


def _invalid_field(row: dict[str, Any]) -> str | None:
    count = row.get("task_count")
    if count is not None and (type(count) is not int or count < 0):
        return "task_count"
    tags = row.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        return "tags"
    if type(row.get("is_benchmark", False)) is not bool:
        return "is_benchmark"
    if row.get("status", "Available") not in ("Available", "Excluded"):
        return "status"
    if row.get("kind", "Dataset") not in ("Dataset", "Generator"):
        return "kind"
    if row.get("type", "") not in TYPES:
        return "type"
    if row.get("turns", "") not in TURNS:
        return "turns"
    for name in STRING_OR_NULL_FIELDS:
        value = row.get(name)
        if value is not None and not isinstance(value, str):
            return name
    if row.get("quality") not in (None, *QUALITIES):
        return "quality"
    traces = row.get("traces")
    if traces is not None and (type(traces) is not int or traces < 0):
        return "traces"
    pipeline = row.get("pipeline")
    if pipeline is not None and not isinstance(pipeline, dict):
        return "pipeline"
    return None
