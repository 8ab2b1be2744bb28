"""Task inputs (review-production.md §3): the task record and the three input formats.

Readers are generators so sampling (§4) sees one row at a time: a Parquet file is streamed in
record batches and never loaded whole.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from reviews.production.errors import ReviewProductionError

PARQUET_BATCH_ROWS = 1024
HARBOR_ROUTE = "harbor"
GYM_ROUTE = "skyrl_gym"
MANIFEST_FIELDS = (
    "id", "route", "repository", "dataset_revision", "source_id", "task_path", "row_index",
    "prompt", "extras", "env_id",
)  # fmt: skip


@dataclass(frozen=True)
class Task:
    id: str
    route: str
    repository: str
    dataset_revision: str | None
    source_id: str
    task_path: str
    row_index: int | None
    prompt: list[dict[str, Any]]
    extras: dict[str, Any]
    env_id: str | None
    task_dir: str | None = None
    packed_task: dict[str, Any] | None = None

    def record(self) -> dict[str, Any]:
        """The task as recorded in ``run.json`` and handed to the worker."""
        # Shallow: records are serialised, never mutated, and built for every review of the task.
        record = {field.name: getattr(self, field.name) for field in fields(self)}
        if record["packed_task"] is None:
            del record["packed_task"]
        return record

    @property
    def identity(self) -> tuple[str, str | None, str, str]:
        return (self.repository, self.dataset_revision, self.source_id, self.id)


def read_tasks(*, source: dict[str, Any]) -> Iterator[Task]:
    """Every candidate task of the configured source, in input order."""
    path = Path(source["tasks_path"])
    if not path.exists():
        raise ReviewProductionError(f"Task input not found: {path}")
    if source["format"] == "skyrl_prepared":
        yield from _prepared_tasks(path, source)
    elif source["format"] == "harbor_directory":
        yield from _harbor_tasks(path, source)
    else:
        yield from _manifest_tasks(path)


def read_rows(*, path: Path) -> Iterator[dict[str, Any]]:
    """Rows by suffix (§3.2): Parquet in record batches, ``.json`` an array, else JSON Lines."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        with pq.ParquetFile(path) as parquet:
            for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS):
                yield from batch.to_pylist()
        return
    if path.suffix == ".json":
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ReviewProductionError(f"Task input is not valid JSON: {path}: {exc}") from None
        if not isinstance(rows, list):
            raise ReviewProductionError(f"Task input must be a JSON array: {path}")
        yield from rows
        return
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except ValueError as exc:
                raise ReviewProductionError(
                    f"Task input line {number} is not valid JSON: {path}: {exc}"
                ) from None


def _prepared_tasks(path: Path, source: dict[str, Any]) -> Iterator[Task]:
    for index, row in enumerate(read_rows(path=path)):
        if not isinstance(row, dict) or "prompt" not in row or "env_class" not in row:
            raise ReviewProductionError(f"Prepared row {index} needs prompt and env_class")
        extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class", "task_dir")}
        raw_info = extras.get("extra_info")
        extra_info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
        nemotron = extra_info.get("nemotron_ultra")
        nemotron = nemotron if isinstance(nemotron, dict) else {}
        route = GYM_ROUTE
        task_dir = None
        if nemotron.get("route") == "terminal_bench":
            if not row.get("task_dir"):
                raise ReviewProductionError(
                    f"Prepared SWE row {index} needs its actual Harbor task_dir; "
                    "use a task_manifest for packed_task references"
                )
            route = HARBOR_ROUTE
        if row.get("task_dir"):
            task_dir = os.path.abspath(os.path.join(path.parent, row["task_dir"]))
        identifier = prepared_task_id(nemotron=nemotron, extra_info=extra_info, index=index)
        yield Task(
            id=identifier,
            route=route,
            repository=source["repository"],
            dataset_revision=source["revision"],
            source_id=source["source_id"],
            task_path=identifier,
            row_index=index,
            prompt=row["prompt"],
            extras=extras,
            env_id=row["env_class"],
            task_dir=task_dir,
        )


def prepared_task_id(*, nemotron: dict[str, Any], extra_info: dict[str, Any], index: int) -> str:
    """``nemotron_ultra.uuid``, else ``extra_info.index``, else the row index. As in the reference,
    an empty uuid falls back; so does a missing or empty index here: a task id is never empty
    (nor the text ``None``)."""
    for candidate in (nemotron.get("uuid"), extra_info.get("index")):
        if candidate is not None and str(candidate) != "":
            return str(candidate)
    return str(index)


def _harbor_tasks(path: Path, source: dict[str, Any]) -> Iterator[Task]:
    if (path / "instruction.md").is_file():
        folders = [path]
    else:
        folders = sorted(found.parent for found in path.glob("*/instruction.md"))
    for index, folder in enumerate(folders):
        if not (folder / "tests" / "test.sh").is_file() or not (folder / "task.toml").is_file():
            raise ReviewProductionError(f"Incomplete Harbor task: {folder}")
        instruction = (folder / "instruction.md").read_text(encoding="utf-8")
        yield Task(
            id=folder.name,
            route=HARBOR_ROUTE,
            repository=source["repository"],
            dataset_revision=source["revision"],
            source_id=source["source_id"],
            task_path=folder.name,
            row_index=index,
            prompt=[{"role": "user", "content": instruction}],
            extras={},
            env_id=None,
            task_dir=os.path.abspath(folder),
        )


def _manifest_tasks(path: Path) -> Iterator[Task]:
    for index, record in enumerate(read_rows(path=path)):
        if not isinstance(record, dict):
            raise ReviewProductionError(f"Task manifest record {index} must be an object")
        missing = [field for field in MANIFEST_FIELDS if field not in record]
        if missing:
            raise ReviewProductionError(f"Task manifest record {index} lacks {', '.join(missing)}")
        if not isinstance(record["route"], str) or not record["route"]:
            raise ReviewProductionError(f"Task manifest record {index} has no route")
        task_dir = record.get("task_dir")
        if task_dir:
            task_dir = os.path.abspath(os.path.join(path.parent, task_dir))
        packed = record.get("packed_task")
        if isinstance(packed, dict) and isinstance(packed.get("dataset_path"), str):
            packed = {
                **packed,
                "dataset_path": os.path.abspath(os.path.join(path.parent, packed["dataset_path"])),
            }
        yield Task(
            id=str(record["id"]),
            route=record["route"],
            repository=record["repository"],
            dataset_revision=record["dataset_revision"],
            source_id=record["source_id"],
            task_path=str(record["task_path"]),
            row_index=record["row_index"],
            prompt=record["prompt"],
            extras=record["extras"],
            env_id=record["env_id"],
            task_dir=task_dir or None,
            packed_task=packed if isinstance(packed, dict) else None,
        )
