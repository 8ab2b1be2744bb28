"""Source definitions: load every ``*.toml`` under a directory, check them all, and
build the exported catalog rows. Nothing is written here and nothing is fetched."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas.jsonio import json_values
from atlas.rules import source_ids, timestamps
from atlas.rules.vocabularies import UNCLASSIFIED, Quality, SourceType, Turns

TAG_RE = re.compile(r"^[a-z0-9][a-z0-9_.:/+-]*$")
FAMILY_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
HEX40_RE = re.compile(r"^[0-9a-f]{40}$")
HEX64_RE = re.compile(r"^[0-9a-f]{64}$")
QUALITY_GRADES = tuple(Quality.values)
GRADING_MODES = ("verifyit", "legacy", "harbor")

SOURCE_KEYS = {
    "id", "title", "origin", "family", "tags", "count", "notes",
    "dataset", "verifier", "pipeline", "review",
}  # fmt: skip
DEFAULT_KEYS = {"origin", "family", "tags", "dataset", "verifier"}
DATASET_KEYS = {"name", "revision", "url"}
VERIFIER_KEYS = {"name", "revision", "url", "grading"}
GRADING_KEYS = {
    "mode", "revision", "manifest", "agents", "marinskyrl_revision", "harbor_revision",
    "verifyit_revision",
    "task_assets",
}  # fmt: skip
TASK_ASSET_KEYS = {"blend", "proxies", "membership", "component", "partition"}
TASK_ASSET_FILE_KEYS = {"repository", "revision", "filename"}
PIPELINE_KEYS = {"name", "version", "files"}
REVIEW_KEYS = {"grade", "evidence_url", "reviewed_at", "dataset_revision", "verifier_revision"}

# The tag that classifies a source's type (the lowercase stored value), in order of precedence
# when a source carries several.
TYPE_TAGS = tuple(
    (kind.value.lower(), kind.value)
    for kind in (SourceType.RLVR, SourceType.AGENTIC, SourceType.ALIGNMENT)
)


class DefinitionErrors(Exception):
    """All violations found in a definitions directory, one ``<file>: <id>: <message>`` per line."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass
class _Entry:
    path: Path
    label: str  # the source id, or "#<index>" when the id is unusable
    data: dict[str, Any]
    errors: list[str] = field(default_factory=list)

    def fail(self, message: str) -> None:
        self.errors.append(f"{self.path}: {self.label}: {message}")


def load_rows(definitions_dir: Path) -> list[dict[str, Any]]:
    """Load, check and convert every definition; raise DefinitionErrors listing every violation."""
    definitions_dir = Path(definitions_dir)
    if not definitions_dir.is_dir():
        raise DefinitionErrors([f"{definitions_dir}: definitions directory not found"])
    errors: list[str] = []
    entries: list[_Entry] = []
    for path in _definition_files(definitions_dir):
        entries.extend(_read_file(path, errors))
    rows: list[dict[str, Any]] = []
    for entry in entries:
        row = _build_row(entry)
        errors.extend(entry.errors)
        if row is not None:
            rows.append(row)
    errors.extend(_cross_file_errors(entries))
    if errors:
        raise DefinitionErrors(errors)
    return sorted(rows, key=lambda row: row["id"])


def _definition_files(root: Path) -> list[Path]:
    found = []
    for path in root.rglob("*.toml"):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if path.is_file():
            found.append(path)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def _read_file(path: Path, errors: list[str]) -> list[_Entry]:
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        errors.append(f"{path}: #file: not a readable UTF-8 TOML file: {exc}")
        return []
    unknown = sorted(set(document) - {"defaults", "source"})
    for key in unknown:
        errors.append(f"{path}: #file: Unknown key {key}")
    defaults = document.get("defaults", {})
    if not isinstance(defaults, dict):
        errors.append(f"{path}: #file: defaults must be a table")
        defaults = {}
    for key in sorted(set(defaults) - DEFAULT_KEYS):
        errors.append(f"{path}: #file: Unknown key defaults.{key}")
    sources = document.get("source", [])
    if not isinstance(sources, list) or not all(isinstance(s, dict) for s in sources):
        errors.append(f"{path}: #file: source must be an array of tables")
        return []
    entries = []
    for index, raw in enumerate(sources):
        merged = _apply_defaults(defaults, raw)
        source_id = raw.get("id")
        label = source_id if isinstance(source_id, str) and source_id else f"#{index}"
        entries.append(_Entry(path=path, label=label, data=merged))
    return entries


def _apply_defaults(defaults: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
    merged = {key: value for key, value in defaults.items() if key in DEFAULT_KEYS}
    merged.update(raw)
    default_tags = defaults.get("tags")
    if isinstance(default_tags, list) and "tags" in raw and isinstance(raw["tags"], list):
        # Default tags first, then the source's own tags that the defaults do not already carry.
        # A tag repeated within the source's own list is kept twice so that the tag check
        # reports it instead of the merge hiding it.
        merged["tags"] = [*default_tags, *(tag for tag in raw["tags"] if tag not in default_tags)]
    return merged


# --- per-entry checks -------------------------------------------------------------------------


def _string(entry: _Entry, table: dict[str, Any], key: str, dotted: str, *, required: bool):
    if key not in table:
        if required:
            entry.fail(f"{dotted} is required")
        return None
    value = table[key]
    if not isinstance(value, str):
        entry.fail(f"{dotted} must be a string")
        return None
    return value


def _table(entry: _Entry, data: dict[str, Any], key: str, allowed: set[str]):
    if key not in data:
        return None
    value = data[key]
    if not isinstance(value, dict):
        entry.fail(f"{key} must be a table")
        return None
    for unknown in sorted(set(value) - allowed):
        entry.fail(f"Unknown key {key}.{unknown}")
    return value


def _revision(entry: _Entry, table: dict[str, Any], key: str, dotted: str):
    value = _string(entry, table, key, dotted, required=False)
    if value is not None and not (HEX40_RE.match(value) or HEX64_RE.match(value)):
        entry.fail(f"{dotted} must be a 40-hex commit or a 64-hex SHA-256")
        return None
    return value


def _https(entry: _Entry, value: str | None, dotted: str, *, allow_empty: bool = False):
    if value is None or (allow_empty and value == ""):
        return value
    if not value.startswith("https://") or len(value) <= len("https://"):
        entry.fail(f"Only https URLs are allowed: {dotted}")
        return None
    return value


def _build_row(entry: _Entry) -> dict[str, Any] | None:
    data = entry.data
    for unknown in sorted(set(data) - SOURCE_KEYS):
        entry.fail(f"Unknown key {unknown}")

    source_id = _string(entry, data, "id", "id", required=True)
    title = _string(entry, data, "title", "title", required=True)
    origin = _string(entry, data, "origin", "origin", required=True)
    if origin == "":
        entry.fail("origin must be a non-empty string")
    if source_id is not None and origin:
        prefix, sep, key = source_id.partition(":")
        if not sep or prefix != origin:
            entry.fail(f"Source id must start with its origin: {source_id}")
        elif not key:
            entry.fail(f"Source id needs a key after the origin: {source_id}")
        elif not source_ids.is_valid(source_id):
            entry.fail(
                "Source id must hold letters, digits, spaces and . _ : / + @ ( ) [ ] = , - only, "
                "without leading or trailing spaces or slashes: "
                + json_values.printable(str(source_id), limit=300)
            )

    family = _string(entry, data, "family", "family", required=False) or ""
    if family and not FAMILY_RE.match(family):
        entry.fail("family must be a lowercase slug")
    notes = _string(entry, data, "notes", "notes", required=False) or ""

    tags = _tags(entry, data)
    count = data.get("count")
    if "count" in data and (not isinstance(count, int) or isinstance(count, bool) or count < 0):
        entry.fail("count must be an integer >= 0")
        count = None

    if "agentic" in tags and "multi-turn" not in tags:
        entry.fail("Agentic sources must be multi-turn")
    if "single-turn" in tags and "multi-turn" in tags:
        entry.fail("A source cannot be both single-turn and multi-turn")
    if "generator" in tags and "count" in data:
        entry.fail("Generators have no fixed count")

    dataset = _dataset(entry, data)
    verifier, grading = _verifier(entry, data)
    pipeline = _pipeline(entry, data, dataset)
    review = _review(entry, data)

    if entry.errors or source_id is None or origin is None or title is None:
        return None
    row: dict[str, Any] = {
        "id": source_id,
        "name": pipeline["name"] if pipeline else source_id.partition(":")[2],
        "display_name": title,
        "origin": origin,
        "family": family,
        "tags": tags,
        "task_count": count,
        "notes": notes,
        "dataset_id": dataset.get("name"),
        "dataset_revision": dataset.get("revision"),
        "url": dataset.get("url"),
        "canonical_source": dataset.get("name"),
        "canonical_url": dataset.get("url"),
        "verifier_name": verifier.get("name"),
        "verifier_revision": verifier.get("revision"),
        "verifier_url": verifier.get("url"),
        **derived_fields(tags),
        "pipeline": pipeline,
        **review,
        "difficulty": None,
        "traces": None,
    }
    row.update(grading)
    return row


def derived_fields(tags: list[str]) -> dict[str, Any]:
    """The row fields derived from tags."""
    row_type = next((label for tag, label in TYPE_TAGS if tag in tags), "")
    turns = next((value for value in Turns.values if value.lower() in tags), UNCLASSIFIED)
    return {
        "type": row_type,
        "turns": turns,
        "is_benchmark": "benchmark" in tags,
        "kind": "Generator" if "generator" in tags else "Dataset",
        "status": "Excluded" if "excluded" in tags else "Available",
    }


def _tags(entry: _Entry, data: dict[str, Any]) -> list[str]:
    raw = data.get("tags", [])
    if not isinstance(raw, list):
        entry.fail("tags must be an array of strings")
        return []
    seen: list[str] = []
    for tag in raw:
        if not isinstance(tag, str):
            entry.fail("tags must be an array of strings")
            continue
        if not TAG_RE.match(tag) or tag in seen:
            entry.fail(f"Invalid tag: {tag}")
            continue
        seen.append(tag)
    return seen


def _dataset(entry: _Entry, data: dict[str, Any]) -> dict[str, Any]:
    table = _table(entry, data, "dataset", DATASET_KEYS)
    if table is None:
        return {}
    return {
        "name": _string(entry, table, "name", "dataset.name", required=True),
        "revision": _revision(entry, table, "revision", "dataset.revision"),
        "url": _https(
            entry, _string(entry, table, "url", "dataset.url", required=False), "dataset.url"
        ),
    }


def _verifier(entry: _Entry, data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    table = _table(entry, data, "verifier", VERIFIER_KEYS)
    if table is None:
        return {}, {}
    url = _string(entry, table, "url", "verifier.url", required=False)
    verifier = {
        "name": _string(entry, table, "name", "verifier.name", required=True),
        "revision": _revision(entry, table, "revision", "verifier.revision"),
        "url": _https(entry, url, "verifier.url", allow_empty=True),
    }
    return verifier, _grading(entry, table)


def _grading(entry: _Entry, verifier: dict[str, Any]) -> dict[str, Any]:
    """Export fields of ``verifier.grading``.

    The real inventory declares a grading *selection* (mode, agents, pinned MarinSkyRL/Harbor
    commits, task assets) without a precomputed fingerprint; it is exported as ``grading_scope``.
    ``grading_revision``/``grading_manifest`` appear only when a checked-in manifest proves one.
    """
    if "grading" not in verifier:
        return {}
    grading = verifier["grading"]
    if not isinstance(grading, dict):
        entry.fail("verifier.grading must be a table")
        return {}
    for unknown in sorted(set(grading) - GRADING_KEYS):
        entry.fail(f"Unknown key verifier.grading.{unknown}")
    mode = _string(entry, grading, "mode", "verifier.grading.mode", required=True)
    if mode is not None and mode not in GRADING_MODES:
        entry.fail("verifier.grading.mode must be one of verifyit, legacy, harbor")
    agents = grading.get("agents", [])
    if not isinstance(agents, list) or not all(isinstance(a, str) for a in agents):
        entry.fail("verifier.grading.agents must be an array of strings")
        agents = []
    scope: dict[str, Any] = {"mode": mode, "agents": agents}
    # The pins a review's executed identity is compared with (reviews.identity); verifyit's only
    # where the mode grades with verifyit.
    for key in ("marinskyrl_revision", "harbor_revision", "verifyit_revision"):
        if key == "verifyit_revision" and key in grading and mode != "verifyit":
            entry.fail("verifier.grading.verifyit_revision applies only to mode verifyit")
            continue
        if key in grading:
            value = _string(entry, grading, key, f"verifier.grading.{key}", required=False)
            if value is not None and not HEX40_RE.match(value):
                entry.fail(f"verifier.grading.{key} must be a 40-hex commit")
            scope[key] = value
    if "task_assets" in grading:
        scope["task_assets"] = _task_assets(entry, grading["task_assets"])
    exported: dict[str, Any] = {"grading_scope": scope}

    has_revision, has_manifest = "revision" in grading, "manifest" in grading
    if has_revision != has_manifest:
        entry.fail("verifier.grading.revision and verifier.grading.manifest go together")
    elif has_revision:
        revision = _string(entry, grading, "revision", "verifier.grading.revision", required=True)
        manifest_path = _string(
            entry, grading, "manifest", "verifier.grading.manifest", required=True
        )
        if revision is not None and not HEX64_RE.match(revision):
            entry.fail("verifier.grading.revision must be a 64-hex SHA-256")
        elif revision is not None and manifest_path is not None:
            manifest = _load_manifest(entry, manifest_path, revision)
            if manifest is not None:
                exported["grading_revision"] = revision
                exported["grading_manifest"] = manifest
    return exported


def _task_assets(entry: _Entry, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        entry.fail("verifier.grading.task_assets must be a table")
        return {}
    for unknown in sorted(set(value) - TASK_ASSET_KEYS):
        entry.fail(f"Unknown key verifier.grading.task_assets.{unknown}")
    assets: dict[str, Any] = {}
    for key in ("blend", "proxies", "membership"):
        if key not in value:
            continue
        item = value[key]
        dotted = f"verifier.grading.task_assets.{key}"
        if not isinstance(item, dict):
            entry.fail(f"{dotted} must be a table")
            continue
        for unknown in sorted(set(item) - TASK_ASSET_FILE_KEYS):
            entry.fail(f"Unknown key {dotted}.{unknown}")
        assets[key] = {
            "repository": _string(entry, item, "repository", f"{dotted}.repository", required=True),
            "revision": _revision(entry, item, "revision", f"{dotted}.revision"),
            "filename": _string(entry, item, "filename", f"{dotted}.filename", required=True),
        }
    for key in ("component", "partition"):
        if key in value:
            assets[key] = _string(
                entry, value, key, f"verifier.grading.task_assets.{key}", required=False
            )
    return assets


def grading_manifest_revision(manifest: Any) -> str:
    """SHA-256 of the manifest's JSON with sorted keys and the default separators."""
    return hashlib.sha256(json.dumps(manifest, sort_keys=True).encode("utf-8")).hexdigest()


def _load_manifest(entry: _Entry, relative: str, revision: str) -> Any:
    path = (entry.path.parent / relative).resolve()
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        entry.fail(f"Grading manifest not found: {relative}")
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        entry.fail("Grading manifest does not match its revision")
        return None
    if grading_manifest_revision(manifest) != revision:
        entry.fail("Grading manifest does not match its revision")
        return None
    return manifest


def _pipeline(entry: _Entry, data: dict[str, Any], dataset: dict[str, Any]):
    table = _table(entry, data, "pipeline", PIPELINE_KEYS)
    if table is None:
        return None
    name = _string(entry, table, "name", "pipeline.name", required=True)
    version = _string(entry, table, "version", "pipeline.version", required=False) or "1"
    files = table.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        entry.fail("pipeline.files must be an array of strings")
        files = []
    return {
        "name": name,
        "version": version,
        "source": dataset.get("name"),
        "revision": dataset.get("revision"),
        "files": list(files),
    }


def _review(entry: _Entry, data: dict[str, Any]) -> dict[str, Any]:
    table = _table(entry, data, "review", REVIEW_KEYS) or {}
    grade = _string(entry, table, "grade", "review.grade", required=False)
    if grade is not None and grade not in QUALITY_GRADES:
        entry.fail("review.grade must be good, some_issues or bad")
        grade = None
    evidence_url = _https(
        entry,
        _string(entry, table, "evidence_url", "review.evidence_url", required=False),
        "review.evidence_url",
    )
    return {
        "quality": grade,
        "review_url": evidence_url,
        "review_date": _review_date(entry, table.get("reviewed_at")),
        "review_source_revision": _revision(
            entry, table, "dataset_revision", "review.dataset_revision"
        ),
        "review_verifier_revision": _revision(
            entry, table, "verifier_revision", "review.verifier_revision"
        ),
    }


def _review_date(entry: _Entry, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            entry.fail("review.reviewed_at must be a date or an offset date-time")
            return None
        return timestamps.format_utc(value, seconds=True)
    if isinstance(value, dt.date):
        return value.isoformat()
    entry.fail("review.reviewed_at must be a date or an offset date-time")
    return None


def _cross_file_errors(entries: list[_Entry]) -> list[str]:
    errors: list[str] = []
    seen_ids: dict[str, _Entry] = {}
    seen_pipelines: dict[str, _Entry] = {}
    for entry in entries:
        source_id = entry.data.get("id")
        if isinstance(source_id, str) and source_id:
            if source_id in seen_ids:
                errors.append(
                    f"{entry.path}: {source_id}: Duplicate RL source identifiers: {source_id}"
                )
            seen_ids.setdefault(source_id, entry)
        pipeline = entry.data.get("pipeline")
        name = pipeline.get("name") if isinstance(pipeline, dict) else None
        if isinstance(name, str):
            if name in seen_pipelines:
                errors.append(f"{entry.path}: {entry.label}: Duplicate pipeline name: {name}")
            seen_pipelines.setdefault(name, entry)
    return errors
