"""From a Task Trove source's catalog row to the ``task_manifest`` records make_review reads.

A Task Trove release is a Parquet dataset whose rows are packed Harbor tasks (``source, tags, mode,
path, dockerfile_id, task_binary``). A source of the catalog is the rows whose ``source`` column
names it (its Atlas id without the ``Task Trove:`` prefix). Preparing it, as MarinSkyRL's task
selection does:

1. the row must pin the dataset (``dataset_id``, a 40-hex ``dataset_revision``);
2. every Parquet file of the local snapshot the row names (``pipeline.files``, or the files given)
   must have been downloaded at that revision (the check ``count_inputs`` makes);
3. each file must have TaskTrove's columns with their Arrow types;
4. at least one row must belong to the source;

then the files are linked (or copied) into the output folder beside ``tasks.jsonl``: one record
per selected row, with MarinSkyRL's packed-task reference (``dataset_path`` relative to the
manifest, ``dataset_uri``, ``dataset_identity``, ``verifier_ref``, ``row_group``, ``row``,
``source``, ``path``, ``dockerfile_id``, ``mode``), and ``prepared-tasks.json`` (the selection, its
digest as MarinSkyRL computes it, the files' SHA-256 and the ``source`` block of a review config).
Nothing is written unless every check passes. Django-free.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atlas.artifact import input_counts
from reviews.production.runtime.errors import ReviewProductionError

ORIGIN_PREFIX = "Task Trove:"
MANIFEST = "tasks.jsonl"
SUMMARY = "prepared-tasks.json"
COMMIT = re.compile(r"^[0-9a-f]{40}$")
METADATA_COLUMNS = ("source", "tags", "mode", "path", "dockerfile_id")


class TaskPreparationError(ReviewProductionError):
    """A row, snapshot or dataset that cannot give review inputs; nothing was written."""


@dataclass(frozen=True)
class Prepared:
    manifest: Path
    count: int
    source: dict[str, Any]


def required_types() -> dict[str, Any]:
    import pyarrow as pa

    return {
        "source": pa.string(),
        "tags": pa.list_(pa.string()),
        "mode": pa.string(),
        "path": pa.string(),
        "dockerfile_id": pa.string(),
        "task_binary": pa.binary(),
    }


def prepare_tasks(
    *, row: dict[str, Any], snapshot: Path, output: Path, files: str | None = None
) -> Prepared:
    source_id = str(row.get("id") or "")
    if not source_id.startswith(ORIGIN_PREFIX):
        raise TaskPreparationError(f"Only Task Trove sources are prepared, not {source_id!r}")
    name = source_id.removeprefix(ORIGIN_PREFIX)
    dataset, revision = row.get("dataset_id"), row.get("dataset_revision")
    if not dataset or not isinstance(revision, str) or not COMMIT.match(revision):
        raise TaskPreparationError(f"The catalog row of {source_id} pins no dataset revision")
    pattern = files or _row_files(row)
    if output.exists():
        raise TaskPreparationError(f"Output already exists: {output}")
    try:
        counts = input_counts.count_parquet_rows(
            snapshot=snapshot, revision=revision, files=pattern
        )
    except input_counts.InputCountError as exc:
        raise TaskPreparationError(str(exc)) from None
    identity = f"{dataset}@{revision}"
    references = []
    for relative in counts:
        references.extend(
            _references(
                snapshot=snapshot,
                relative=relative,
                name=name,
                identity=identity,
                dataset=str(dataset),
                revision=revision,
                row=row,
            )
        )
    if not references:
        raise TaskPreparationError(
            f"The snapshot's {pattern} holds no task of {name} at revision {revision}"
        )
    source_block = {
        "source_id": source_id,
        "repository": dataset,
        "revision": revision,
        "tasks_path": str(output / MANIFEST),
        "format": "task_manifest",
    }
    _write(output=output, snapshot=snapshot, references=references, row=row,
           source_block=source_block, files=sorted(counts))  # fmt: skip
    return Prepared(manifest=output / MANIFEST, count=len(references), source=source_block)


def _row_files(row: dict[str, Any]) -> str:
    pipeline = row.get("pipeline") or {}
    named = pipeline.get("files") or []
    if len(named) != 1:
        raise TaskPreparationError(
            f"The catalog row of {row.get('id')} names {len(named)} files; pass --files"
        )
    return str(named[0])


def verifier_ref(row: dict[str, Any]) -> str:
    """The verifier the row pins: its URL when it has one, else name@revision."""
    if row.get("verifier_url"):
        return str(row["verifier_url"])
    return f"{row.get('verifier_name') or 'Harbor'}@{row.get('verifier_revision') or 'unpinned'}"


def _references(
    *, snapshot: Path, relative: str, name: str, identity: str, dataset: str, revision: str,
    row: dict[str, Any],
) -> list[dict[str, Any]]:  # fmt: skip
    import pyarrow.parquet as pq

    with pq.ParquetFile(snapshot / relative) as parquet:
        schema = parquet.schema_arrow
        for column, expected in required_types().items():
            index = schema.get_field_index(column)
            if index < 0:
                raise TaskPreparationError(f"{relative}: TaskTrove column {column!r} is missing")
            if schema.field(index).type != expected:
                raise TaskPreparationError(
                    f"{relative}: TaskTrove column {column!r} must have type {expected}, "
                    f"found {schema.field(index).type}"
                )
        found = []
        for group in range(parquet.num_row_groups):
            rows = parquet.read_row_group(group, columns=list(METADATA_COLUMNS)).to_pylist()
            for index, values in enumerate(rows):
                if values["source"] != name:
                    continue
                found.append({
                    "dataset_path": relative,
                    "dataset_uri": f"hf://datasets/{dataset}@{revision}/{relative}",
                    "dataset_identity": identity,
                    "verifier_ref": verifier_ref(row),
                    "row_group": group,
                    "row": index,
                    "source": values["source"],
                    "path": values["path"],
                    "dockerfile_id": values["dockerfile_id"],
                    "mode": values["mode"],
                    "tags": values["tags"],
                })  # fmt: skip
    return found


def selection_digest(references: list[dict[str, Any]]) -> str:
    """MarinSkyRL's selection digest: each reference's identity as compact sorted JSON, one per
    line, in (row group, row) order."""
    digest = hashlib.sha256()
    for reference in references:
        identity = {
            key: reference[key]
            for key in (
                "dataset_identity",
                "dockerfile_id",
                "mode",
                "path",
                "row",
                "row_group",
                "source",
            )
        }
        digest.update(json.dumps(identity, sort_keys=True, separators=(",", ":")).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def _record(*, index: int, reference: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    packed = {key: value for key, value in reference.items() if key != "tags"}
    return {
        "id": reference["path"],
        "route": "harbor",
        "repository": row["dataset_id"],
        "dataset_revision": row["dataset_revision"],
        "source_id": row["id"],
        "task_path": reference["path"],
        "row_index": index,
        "prompt": [],
        "extras": {
            "tags": reference["tags"],
            "mode": reference["mode"],
            "dockerfile_id": reference["dockerfile_id"],
        },
        "env_id": None,
        "task_dir": None,
        "packed_task": packed,
    }


def _write(
    *, output: Path, snapshot: Path, references: list[dict[str, Any]], row: dict[str, Any],
    source_block: dict[str, Any], files: list[str],
) -> None:  # fmt: skip
    """Everything into a staging folder beside ``output``, then moved into place whole."""
    output.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{output.name}.", dir=output.parent))
    try:
        hashes = {}
        for relative in files:
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            _link_or_copy(snapshot / relative, target)
            with target.open("rb") as stream:
                hashes[relative] = hashlib.file_digest(stream, "sha256").hexdigest()
        with (staging / MANIFEST).open("w", encoding="utf-8") as manifest:
            for index, reference in enumerate(references):
                manifest.write(json.dumps(_record(index=index, reference=reference, row=row)))
                manifest.write("\n")
        summary = {
            "source": source_block,
            "files": hashes,
            "count": len(references),
            "selection_digest": selection_digest(references),
            "distinct_environment_count": len({r["dockerfile_id"] for r in references}),
        }
        (staging / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        os.replace(staging, output)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _link_or_copy(source: Path, target: Path) -> None:
    """A hard link where the file system allows one (a release can be gigabytes), else a copy;
    never a symbolic link, which make_review's confinement of the manifest's folder refuses."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
