"""The catalog artifact (``dist/catalog.json``): canonical form, revision, writing, and the complete
validation a sync runs before it changes anything.

Validation is complete so one bad row cannot take the site down after a sync: the documented rules
run in their order of precedence, then every row is checked against the checked-in JSON Schema
(``atlas/schema/catalog.schema.json``, every field the pages, API and CSV read) and every value
against what the database can store (no NUL or lone surrogate in a string, integers within 64 bits,
finite numbers, nesting within ``MAX_DEPTH``). A refusal names the row and the field path.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson
from django.conf import settings

from atlas.artifact.canonical_form import canonical_row, catalog_revision
from atlas.jsonio import json_stream, json_values
from atlas.jsonio.json_schemas import SchemaValidator
from atlas.rules import source_ids, timestamps
from atlas.rules.vocabularies import UNCLASSIFIED, Quality, SourceType, Turns

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


SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "catalog.schema.json"
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
    # Per row, in the artifact's order: its id and its canonical bytes
    # (``atlas.artifact.canonical_form``; a hundred thousand parsed rows took three times the
    # memory).
    ids: tuple[str, ...]
    parts: tuple[bytes, ...]

    @property
    def rows(self) -> tuple[dict[str, Any], ...]:
        """The rows, parsed anew at every access (the sync parses ``parts`` a batch at a time).
        orjson reads a validated row's canonical bytes exactly as it was read from the artifact:
        validation refused every value the two readers could read differently."""
        return tuple(map(orjson.loads, self.parts))


@dataclass(frozen=True)
class ValidatedCatalog:
    revision: str
    revised_at: str | None
    snapshots: tuple[OriginSnapshot, ...]

    @property
    def source_ids(self) -> set[str]:
        return {source_id for snapshot in self.snapshots for source_id in snapshot.ids}


_cache_lock = threading.Lock()
_cache: dict[str, ValidatedCatalog] = {}


def max_catalog_bytes() -> int:
    return int(getattr(settings, "ATLAS_MAX_CATALOG_BYTES", DEFAULT_MAX_CATALOG_BYTES))


class _Artifact:
    """The artifact's bytes as the validation reads them: within the size cap, hashed as read."""

    def __init__(self, stream: BinaryIO, *, limit: int | None, path: Path | None = None) -> None:
        self.stream = stream
        self.limit = limit
        self.path = path
        self.rewind()

    def rewind(self) -> None:
        self.stream.seek(0)
        self.size = 0
        self.hash = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size if self.limit is None else self._allowed(size))
        self.size += len(data)
        if self.limit is not None and self.size > self.limit:
            raise CatalogInvalid(f"Catalog artifact exceeds {self.limit} bytes: {self.path}")
        self.hash.update(data)
        return data

    def _allowed(self, size: int) -> int:
        # One byte beyond the cap is enough to know it is exceeded.
        left = self.limit + 1 - self.size  # type: ignore[operator]
        return left if size < 0 else min(size, left)

    def digest(self) -> str:
        """The SHA-256 of the whole artifact (read to its end, then rewound)."""
        while self.read(json_stream.CHUNK_BYTES):
            pass
        found = self.hash.hexdigest()
        self.rewind()
        return found


def _not_found(path: Path) -> CatalogInvalid:
    """Rule 1's refusal: a missing file, and a path that is a directory, alike."""
    return CatalogInvalid(f"Catalog artifact not found: {path}")


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[_Artifact]:
    """The artifact, if it is a regular file within the size cap (a FIFO or a device must neither
    hang the sync nor exhaust memory)."""
    limit = max_catalog_bytes()
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        raise _not_found(path) from None
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise _not_found(path)
        raise CatalogInvalid(f"Catalog artifact is not a regular file: {path}")
    with os.fdopen(descriptor, "rb") as handle:
        if info.st_size > limit:
            raise CatalogInvalid(f"Catalog artifact exceeds {limit} bytes: {path}")
        yield _Artifact(handle, limit=limit, path=path)


def load_catalog(path: Path) -> ValidatedCatalog:
    """Read and validate the whole artifact. An unchanged file (same bytes) is validated once."""
    with _opened(Path(path)) as artifact:
        if _cache:  # this process validated an artifact before: is this file the same?
            with _cache_lock:
                cached = _cache.get(artifact.digest())
            if cached is not None:
                return cached
        validated = _validated(artifact)
        digest = artifact.hash.hexdigest()  # of the bytes the validation read
    with _cache_lock:
        _cache.clear()
        _cache[digest] = validated
    return validated


def validate_bytes(data: bytes) -> ValidatedCatalog:
    """Validate an artifact held in memory, as ``load_catalog`` validates a file."""
    return _validated(_Artifact(io.BytesIO(data), limit=None))


def _validated(artifact: _Artifact) -> ValidatedCatalog:
    """Stream the rows through the rules; a document the stream reader does not take is read
    whole, so that a refusal names what the whole-document reader names."""
    watching = json_values.WatchingDecoder()
    intake = _Intake()
    header: dict[str, Any] = {}
    listed = False
    numbers = 0  # the decoder's count of unstorable numbers so far
    try:
        for event in json_stream.read_object(
            artifact.read,
            array_key="sources",
            decoder=watching.decoder,
            flag=json_values.TEXT_ESCAPES,
        ):
            counts = watching.unstorable_numbers
            if isinstance(event, json_stream.Item):
                intake.add(event.value, thorough=event.flagged or counts != numbers)
            elif isinstance(event, json_stream.ArrayStart):
                listed = True
            else:
                header[event.key] = event.value
            numbers = counts
    except json_stream.Unstreamable:
        artifact.rewind()
        return _validated_whole(artifact.read())
    return intake.verdict(header, listed=listed)


def _validated_whole(data: bytes) -> ValidatedCatalog:
    try:
        scanned = json_values.loads_scanned(data)
    except json_values.UnreadableJson as exc:
        raise CatalogInvalid(f"Catalog artifact is not valid JSON: {exc}") from None
    document = scanned.document
    if not isinstance(document, dict):
        raise CatalogInvalid("Catalog artifact is not valid JSON: the document is not an object")
    intake = _Intake()
    rows = document.get("sources")
    if isinstance(rows, list):
        for row in rows:
            intake.add(row, thorough=scanned.suspicious)
    return intake.verdict(document, listed=isinstance(rows, list))


class _Intake:
    """The rules of a row, checked as the row is read; the verdict waits for the whole document,
    so that the first failure reported is that of the first rule in the rules' order (and of the
    first row failing it), whatever the position of the rows and members in the document."""

    def __init__(self) -> None:
        self.revision = hashlib.sha256(b"[")  # ``canonical_form.revision_of``, row by row
        self.separator = b""
        self.ids: set[str] = set()
        self.by_origin: dict[str, tuple[list[str], list[bytes]]] = {}
        self.malformed = False  # rule 7
        self.duplicate: str | None = None  # rule 8
        self.invalid: str | None = None  # rule 9

    def add(self, row: Any, *, thorough: bool) -> None:
        """``thorough``: the row's text could hold an unstorable value."""
        part = canonical_row(row)
        self.revision.update(self.separator)
        self.revision.update(part)
        self.separator = b","
        if self.malformed:
            return
        source_id, origin = (
            (row.get("id"), row.get("origin")) if isinstance(row, dict) else ("", "")
        )
        if not (isinstance(source_id, str) and source_id and isinstance(origin, str) and origin):
            self.malformed = True
            self.by_origin.clear()  # never used now: the artifact is refused
            return
        if source_id in self.ids:
            self.duplicate = self.duplicate or source_id
        self.ids.add(source_id)
        if self.duplicate is not None or self.invalid is not None:
            return
        self.invalid = _row_failure(row, thorough=thorough)
        ids, parts = self.by_origin.setdefault(origin, ([], []))
        ids.append(source_id)
        parts.append(part)

    def verdict(self, header: dict[str, Any], *, listed: bool) -> ValidatedCatalog:
        """The validated catalog, or the first failed rule's refusal. ``header``: the document's
        members besides the streamed rows; ``listed``: whether ``sources`` is an array."""
        version = header.get("schema_version")
        if type(version) is not int or version != SCHEMA_VERSION:
            raise CatalogInvalid(f"Unsupported catalog schema version: {json.dumps(version)}")
        revision = header.get("revision")
        if not isinstance(revision, str) or not revision:
            raise CatalogInvalid("Generated catalog has no revision")
        if not listed:
            raise CatalogInvalid("Catalog sources must be a list")
        self.revision.update(b"]")
        if self.revision.hexdigest() != revision:
            raise CatalogInvalid("Catalog revision does not match its sources")
        if self.malformed:
            raise CatalogInvalid("Catalog source requires a nonempty id and origin")
        if self.duplicate is not None:
            raise CatalogInvalid(f"Duplicate catalog source: {self.duplicate}")
        if self.invalid is not None:
            raise CatalogInvalid(self.invalid)
        revised_at = header.get("revised_at")
        if revised_at is not None and not timestamps.is_valid(revised_at):
            raise CatalogInvalid("Catalog revised_at must be a timestamp or null")
        snapshots = tuple(
            OriginSnapshot(
                origin=origin,
                revision=revision,
                revised_at=revised_at,
                ids=tuple(ids),
                parts=tuple(parts),
            )
            for origin, (ids, parts) in sorted(self.by_origin.items())
        )
        return ValidatedCatalog(revision=revision, revised_at=revised_at, snapshots=snapshots)


def _row_failure(row: dict[str, Any], *, thorough: bool) -> str | None:
    """The refusal of a row that fails rule 9 (its id, then its fields), else None."""
    if not source_ids.is_valid(row["id"]):
        return f"Catalog source {json_values.printable(row['id'], limit=300)} has an invalid id"
    bad_field = _bad_field(row, thorough=thorough)
    return f"Catalog source {row['id']} has an invalid {bad_field}" if bad_field else None


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
