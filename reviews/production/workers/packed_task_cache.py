"""Packed Harbor tasks: a task manifest's ``packed_task`` unpacked
into the execution's ``packed-task-cache/``.

Two formats:

- MarinSkyRL's packed-task reference (``marinskyrl.packed_tasks.PackedTaskReference``): a row of a
  TaskTrove Parquet dataset — ``{dataset_path, dataset_uri, dataset_identity, verifier_ref,
  row_group, row, source, path, dockerfile_id, mode}`` — whose ``task_binary`` column holds the
  task as a tar (optionally gzipped) archive. When the checkout provides MarinSkyRL's own
  materialiser it is used, as the reference tooling does; otherwise the project's reads the same
  format by the same rules: the row's identity must match the reference, the archive may hold
  only regular files at safe relative paths, no ``solution/``, and it must hold
  ``instruction.md``, ``task.toml`` and ``environment/Dockerfile``. The task lands in
  ``packed-task-cache/tasks/<16 hex of the dataset identity>/<20 hex of source and path>/``.
- The project's own: ``{dataset_path, key}`` naming a record ``{id, files: {path: text}}`` of a
  JSON or JSON Lines file, unpacked into ``packed-task-cache/<key>/``.

Standalone: imported by the Harbor worker inside the native interpreter; ``pyarrow`` is needed
only for the reference format.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

CACHE = "packed-task-cache"
REFERENCE_FIELDS = ("dataset_path", "dataset_uri", "dataset_identity", "verifier_ref",
                    "row_group", "row", "source", "path", "dockerfile_id", "mode")  # fmt: skip
IDENTITY_COLUMNS = ("source", "path", "dockerfile_id", "mode")
REQUIRED_FILES = ("instruction.md", "task.toml", "environment/Dockerfile")
COMPLETE_MARKER = ".marinskyrl-complete"
MARINSKYRL_MATERIALIZER = "marinskyrl.packed_tasks"


class PackedTaskError(ValueError):
    """A packed task that cannot be unpacked safely and completely."""


def materialize(*, packed: dict[str, Any], execution_dir: Path) -> tuple[Path, str]:
    """The unpacked task's folder and which materialiser made it (``marinskyrl``, ``project``
    or ``project-json``)."""
    cache = execution_dir / CACHE
    if "key" in packed:
        return materialize_json_record(packed=packed, cache=cache), "project-json"
    missing = [name for name in REFERENCE_FIELDS if name not in packed]
    if missing:
        raise PackedTaskError(f"Packed task reference lacks {', '.join(missing)}")
    try:
        native = importlib.import_module(MARINSKYRL_MATERIALIZER)
    except ImportError:
        return materialize_reference(reference=packed, cache=cache), "project"
    reference = native.PackedTaskReference(**{name: packed[name] for name in REFERENCE_FIELDS})
    materializer = native.PackedTaskMaterializer(cache)
    try:
        return Path(materializer.materialize_batch([reference])[reference]), "marinskyrl"
    finally:
        close = getattr(materializer, "close", None)
        if close is not None:
            close()


def task_folder(*, reference: dict[str, Any], cache: Path) -> Path:
    identity = hashlib.sha256(str(reference["dataset_identity"]).encode("utf-8")).hexdigest()
    task = f"{reference['source']}\0{reference['path']}".encode()
    return cache / "tasks" / identity[:16] / hashlib.sha256(task).hexdigest()[:20]


def materialize_reference(*, reference: dict[str, Any], cache: Path) -> Path:
    target = task_folder(reference=reference, cache=cache)
    if (target / COMPLETE_MARKER).is_file():
        return target
    import pyarrow.parquet as pq

    row_group, row = int(reference["row_group"]), int(reference["row"])
    parquet = pq.ParquetFile(str(reference["dataset_path"]).removeprefix("file://"))
    if not 0 <= row_group < parquet.num_row_groups:
        raise PackedTaskError(f"Packed task row group {row_group} is not in the dataset")
    rows = parquet.read_row_group(row_group, columns=[*IDENTITY_COLUMNS, "task_binary"])
    if not 0 <= row < rows.num_rows:
        raise PackedTaskError(f"Packed task row {row} is not in row group {row_group}")
    values = rows.slice(row, 1).to_pylist()[0]
    if tuple(values[c] for c in IDENTITY_COLUMNS) != tuple(reference[c] for c in IDENTITY_COLUMNS):
        raise PackedTaskError(f"Packed task identity changed at row group {row_group}, row {row}")
    write_task(target=target, files=archive_files(values["task_binary"]))
    return target


def archive_files(blob: bytes) -> dict[str, tuple[bytes, int]]:
    """The archive's regular files by safe relative path, with their modes."""
    raw = gzip.decompress(blob) if blob[:2] == b"\x1f\x8b" else blob
    files: dict[str, tuple[bytes, int]] = {}
    with tarfile.open(fileobj=io.BytesIO(raw)) as archive:
        for member in archive.getmembers():
            path = PurePosixPath(member.name.removeprefix("./"))
            # The project's path-safety policy (reviews/production/format/path_safety.py) is out of
            # reach in the native interpreter; these are MarinSkyRL's materialiser's own rules.
            if path.is_absolute() or ".." in path.parts:
                raise PackedTaskError(f"Unsafe task archive path: {member.name!r}")
            if path.parts and path.parts[0] == "solution":
                raise PackedTaskError("Packed task contains a solution")
            if member.isdir():
                continue
            if not member.isfile():
                raise PackedTaskError(f"Task archive holds a link or special file: {member.name!r}")
            name = path.as_posix()
            if name in files:
                raise PackedTaskError(f"Task archive holds {name!r} twice")
            stream = archive.extractfile(member)
            if stream is None:
                raise PackedTaskError(f"Cannot read task archive member {member.name!r}")
            files[name] = (stream.read(), member.mode)
    missing = sorted(set(REQUIRED_FILES) - files.keys())
    if missing:
        raise PackedTaskError(f"Packed task lacks {', '.join(missing)}")
    return files


def write_task(*, target: Path, files: dict[str, tuple[bytes, int]]) -> None:
    """Written into a staging folder and moved into place whole, marked complete."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for relative, (content, mode) in files.items():
            destination = staging / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(content)
            destination.chmod(mode & 0o777)
        (staging / COMPLETE_MARKER).write_text("1\n", encoding="utf-8")
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def materialize_json_record(*, packed: dict[str, Any], cache: Path) -> Path:
    dataset = Path(packed["dataset_path"])
    text = dataset.read_text(encoding="utf-8")
    records = json.loads(text) if dataset.suffix == ".json" else [
        json.loads(line) for line in text.splitlines() if line.strip()
    ]  # fmt: skip
    key = packed["key"]
    record = next((r for r in records if r.get("id") == key), None)
    if record is None:
        raise PackedTaskError(f"Packed task {key} is not in {dataset}")
    target = cache / str(key)
    for relative, content in sorted(record["files"].items()):
        path = (target / relative).resolve()
        if not path.is_relative_to(target.resolve()):
            raise PackedTaskError(f"Packed task file escapes its folder: {relative}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return target
