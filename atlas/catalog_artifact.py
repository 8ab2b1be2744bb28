"""The catalog artifact (``dist/catalog.json``): canonical form, revision, writing, and the complete
validation a sync runs before it changes anything.

Validation is complete so one bad row cannot take the site down after a sync: the documented rules
run in their order of precedence, then every row is checked against the checked-in JSON Schema
(``atlas/schema/catalog.schema.json``, every field the pages, API and CSV read) and every value
against what the database can store (no NUL or lone surrogate in a string, integers within 64 bits,
finite numbers, nesting within ``MAX_DEPTH``). A refusal names the row and the field path.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import tempfile
import threading
from collections.abc import Callable, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from atlas import json_values, source_ids, timestamps, validated_rows
from atlas.canonical_form import canonical_rows, catalog_revision, revision_of
from atlas.json_schemas import SchemaValidator
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


SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "catalog.schema.json"
MAX_DEPTH = 12  # a row's deepest legitimate value (grading_scope.task_assets.blend.x) is at 4
DEFAULT_MAX_CATALOG_BYTES = 1024 * 2**20


class CatalogInvalid(Exception):
    """The artifact failed validation; ``str(exc)`` is the message for the user."""


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
    digests: tuple[str, ...]  # each row's validation digest (``atlas.validated_rows``)


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


def max_catalog_bytes() -> int:
    return int(getattr(settings, "ATLAS_MAX_CATALOG_BYTES", DEFAULT_MAX_CATALOG_BYTES))


def read_artifact(path: Path) -> bytes:
    """The artifact's bytes: a regular file within the size cap (a FIFO or a device must neither
    hang the sync nor exhaust memory)."""
    limit = max_catalog_bytes()
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        raise CatalogInvalid(f"Catalog artifact not found: {path}") from None
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise CatalogInvalid(f"Catalog artifact not found: {path}")
        raise CatalogInvalid(f"Catalog artifact is not a regular file: {path}")
    with os.fdopen(descriptor, "rb") as handle:
        if info.st_size > limit:
            raise CatalogInvalid(f"Catalog artifact exceeds {limit} bytes: {path}")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise CatalogInvalid(f"Catalog artifact exceeds {limit} bytes: {path}")
    return data


def load_catalog(path: Path, *, proven: Callable[[], Set[str]] | None = None) -> ValidatedCatalog:
    """Read and validate the whole artifact. An unchanged file (same bytes) is validated once.
    ``proven`` answers the validation digests known to have passed (the stored sources'); it is
    asked once the artifact has been read and its revision checked."""
    data = read_artifact(Path(path))
    digest = hashlib.sha256(data).hexdigest()
    with _cache_lock:
        cached = _cache.get(digest)
    if cached is not None:
        return cached
    validated = validate_bytes(data, proven=proven)
    with _cache_lock:
        _cache.clear()
        _cache[digest] = validated
    return validated


def validate_bytes(
    data: bytes, *, proven: Callable[[], Set[str]] | None = None
) -> ValidatedCatalog:
    try:
        scanned = json_values.loads_scanned(data)
    except json_values.UnreadableJson as exc:
        raise CatalogInvalid(f"Catalog artifact is not valid JSON: {exc}") from None
    document = scanned.document
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
    parts = canonical_rows(rows, has_floats=scanned.has_floats)
    if revision_of(parts) != revision:
        raise CatalogInvalid("Catalog revision does not match its sources")
    # Rules 7, 8 and 9 are checked in that order over the whole list (one pass per rule), so the
    # reported message follows the rules' precedence rather than the position of the bad row.
    ids = []
    for row in rows:
        if not isinstance(row, dict):
            raise CatalogInvalid("Catalog source requires a nonempty id and origin")
        source_id, origin = row.get("id"), row.get("origin")
        if not (isinstance(source_id, str) and source_id and isinstance(origin, str) and origin):
            raise CatalogInvalid("Catalog source requires a nonempty id and origin")
        ids.append(source_id)
    if len(set(ids)) != len(ids):  # then the first repeated id, in the list's order
        seen: set[str] = set()
        for source_id in ids:
            if source_id in seen:
                raise CatalogInvalid(f"Duplicate catalog source: {source_id}")
            seen.add(source_id)
    digests = validated_rows.row_digests(parts)
    # A row whose exact content passed these rules before (a stored source's digest) passes now.
    passed = proven() if proven is not None else frozenset()
    by_origin: dict[str, tuple[list[dict[str, Any]], list[str]]] = {}
    for row, digest in zip(rows, digests, strict=True):
        if digest not in passed:
            if not source_ids.is_valid(row["id"]):
                shown = source_ids.shown(row["id"])
                raise CatalogInvalid(f"Catalog source {shown} has an invalid id")
            bad_field = _bad_field(row, thorough=scanned.suspicious)
            if bad_field:
                raise CatalogInvalid(f"Catalog source {row['id']} has an invalid {bad_field}")
        origin_rows, origin_digests = by_origin.setdefault(row["origin"], ([], []))
        origin_rows.append(row)
        origin_digests.append(digest)
    revised_at = document.get("revised_at")
    if revised_at is not None and not timestamps.is_valid(revised_at):
        raise CatalogInvalid("Catalog revised_at must be a timestamp or null")
    snapshots = tuple(
        OriginSnapshot(
            origin=origin,
            revision=revision,
            revised_at=revised_at,
            rows=tuple(by_origin[origin][0]),
            digests=tuple(by_origin[origin][1]),
        )
        for origin in sorted(by_origin)
    )
    return ValidatedCatalog(revision=revision, revised_at=revised_at, snapshots=snapshots)


def _bad_field(row: dict[str, Any], *, thorough: bool) -> str | None:
    """The field a row's first failed rule names. The compiled schema is as strict as
    ``_invalid_field`` but for one thing (every value it refuses, the schema refuses: the tests of
    each refusal hold it so), so a row the schema accepts needs only that and the storage check,
    and the documented rules run in their order only for a row that fails."""
    # The one thing: JSON Schema counts 5.0 as an integer, the catalog's counts do not.
    counts_whole = type(row.get("task_count")) is not float and type(row.get("traces")) is not float
    if counts_whole and _row_validator().is_valid(row):
        return _unstorable(row, thorough=thorough)
    return _invalid_field(row) or _schema_failure(row) or _unstorable(row, thorough=thorough)


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
    review_date = row.get("review_date")
    if review_date is not None and timestamps.parse_date_or_datetime(review_date) is None:
        return "review_date"
    return None


@functools.cache
def _row_validator() -> SchemaValidator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return SchemaValidator({**schema["$defs"]["source"], "$defs": schema["$defs"]})


def _schema_failure(row: dict[str, Any]) -> str | None:
    """The field path of the row's first schema violation, or None."""
    error = _row_validator().first_error(row)
    if error is None:
        return None
    return json_values.field_path(error.path) or "row"


def _unstorable(row: dict[str, Any], *, thorough: bool) -> str | None:
    """A value the database cannot store, or nesting beyond ``MAX_DEPTH``. Unless the artifact's
    text could hold such a value (``thorough``), only the free-form parts of the row — which the
    schema does not shape — are walked, for their depth."""
    if thorough:
        path = json_values.unstorable_path(row, max_depth=MAX_DEPTH)
        return None if path is None else path or "row"
    if not row.keys() - _shaped_fields():  # most rows: one set operation, in C
        return None
    for key, value in row.items():
        if key in _shaped_fields():
            continue
        path = json_values.deeper_than(value, max_depth=MAX_DEPTH - 1)
        if path is not None:
            return f"{key}{path if path.startswith('[') else '.' + path if path else ''}"
    return None


# Row fields whose contents the schema leaves open (checked for depth like unknown fields).
FREE_FORM_FIELDS = frozenset({"grading_scope", "grading_manifest"})


@functools.cache
def _shaped_fields() -> frozenset[str]:
    """The row fields whose values the schema shapes all the way down."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return frozenset(schema["$defs"]["source"]["properties"]) - FREE_FORM_FIELDS
