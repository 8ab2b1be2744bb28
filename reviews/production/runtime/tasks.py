"""Task inputs: the task record and the three input formats.

Readers are generators so sampling sees one row at a time: a Parquet file is streamed in
record batches and never loaded whole.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from reviews.production.format.path_safety import resolves_inside
from reviews.production.runtime.errors import ReviewProductionError

PARQUET_BATCH_ROWS = 1024
MISSING = "does not exist (or is a broken link)"
SPECIAL_FILE = "is a special file (a device, pipe or socket), not a regular file"
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
    # Where the task's files must stay (the dataset's folder), checked when it is sampled
    # (``check_task_files``); not part of the task's record.
    confinement: Confinement | None = field(default=None, compare=False, repr=False)

    def record(self) -> dict[str, Any]:
        """The task as recorded in ``run.json`` and handed to the worker."""
        # Shallow: records are serialised, never mutated, and built for every review of the task.
        record = {name: getattr(self, name) for name in RECORD_FIELDS}
        if record["packed_task"] is None:
            del record["packed_task"]
        return record

    @property
    def identity(self) -> tuple[str, str | None, str, str]:
        return (self.repository, self.dataset_revision, self.source_id, self.id)


@dataclass(frozen=True)
class Confinement:
    """The dataset's folder: every path a row or manifest names, and every file of a task
    folder, must resolve (links followed) inside it
    (``reviews.production.format.path_safety.resolves_inside``) and be a regular file or folder — a
    row naming ``/home/me/.ssh`` or a link to ``/dev/zero`` is refused, never copied into a run
    or sent to a model endpoint.

    A dataset in a Hugging Face hub cache keeps its files as links from ``snapshots/<revision>/``
    into the repository's ``blobs/``: those links stay inside the repository's cache folder."""

    folder: Path  # the dataset's folder as configured
    roots: tuple[Path, ...]  # where resolved paths may lie

    @classmethod
    def of(cls, folder: Path) -> Confinement:
        resolved = Path(folder).resolve()
        roots = [resolved]
        for parent in (resolved, *resolved.parents):
            if parent.parent.name == "snapshots" and parent.parent.parent.name.startswith(
                ("datasets--", "models--", "spaces--")
            ):
                blobs = parent.parent.parent / "blobs"
                if blobs.is_dir():
                    roots.append(blobs)
                break
        return cls(folder=Path(os.path.abspath(folder)), roots=tuple(roots))

    def inside(self, path: str | Path) -> bool:
        return any(resolves_inside(path, root) for root in self.roots)

    def named_path(self, value: Any, *, base: Path, what: str, kind: str) -> str:
        """A path a row names, resolved against ``base``: inside the dataset's folder and of
        ``kind`` (``folder`` or ``file``), else refused with ``what`` naming the row."""
        if not isinstance(value, str) or not value or "\x00" in value:
            raise ReviewProductionError(f"{what} must be a path inside the dataset's folder")
        path = os.path.abspath(os.path.join(base, value))
        # Whether it exists is checked when the task is sampled: a row the sample does not draw
        # may name a folder this machine lacks.
        where = f"{what} {json.dumps(value, ensure_ascii=False)}"
        self.check(path, kind=kind, where=where, missing_ok=True)
        return path

    def check(self, path: str | Path, *, kind: str, where: str, missing_ok: bool = False) -> None:
        """``path`` a regular ``kind`` inside the dataset's folder, else refused: a special
        file first (it is never opened), then a path outside, then a missing one."""
        problem = file_problem(path, kind=kind)
        if missing_ok and problem == MISSING:
            problem = None
        if problem == SPECIAL_FILE:
            raise ReviewProductionError(f"{where} {problem}")
        if not self.inside(path):
            raise ReviewProductionError(
                f"{where} resolves outside the dataset's folder {self.folder}"
            )
        if problem is not None:
            raise ReviewProductionError(f"{where} {problem}")


def file_problem(path: str | Path, *, kind: str) -> str | None:
    """Why ``path`` is not a regular file (``kind`` file) or folder (``kind`` folder)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return MISSING
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if kind == "folder" and stat.S_ISDIR(mode):
        return None
    if kind == "file" and stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return f"is not a {kind}"
    return SPECIAL_FILE


def check_task_files(task: Task) -> None:
    """Every file of a sampled task's folder inside the dataset's folder and regular (links
    followed, as the worker's copy follows them); called before anything reads them."""
    confinement = task.confinement
    if confinement is None:
        return
    named = f"task {json.dumps(task.id, ensure_ascii=False)}:"
    dataset = (task.packed_task or {}).get("dataset_path")
    if isinstance(dataset, str):
        confinement.check(dataset, kind="file", where=f"{named} packed_task.dataset_path {dataset}")
    if not task.task_dir:
        return
    confinement.check(task.task_dir, kind="folder", where=f"{named} task_dir {task.task_dir}")
    seen: set[str] = set()
    for root, dirs, names in os.walk(task.task_dir, followlinks=True):
        real = os.path.realpath(root)
        if real in seen:  # a link back up the tree: walked once
            dirs[:] = []
            continue
        seen.add(real)
        for name in [*dirs, *names]:
            path = Path(root) / name
            shown = path.relative_to(task.task_dir).as_posix()
            where = f"{named} {shown}"
            confinement.check(path, kind="folder" if name in dirs else "file", where=where)


# What a task record holds (``Task.record``): a record read back from a saved run names these
# and nothing else (never a ``confinement``, which only a reader of the dataset sets).
RECORD_FIELDS = tuple(f.name for f in fields(Task) if f.name != "confinement")


def expected_routes(*, source: dict[str, Any]) -> tuple[str, ...]:
    """The route a source's format implies before its rows are read: prepared rows are Gym
    tasks unless a row names a Terminal-Bench task, a folder of tasks is Harbor's; a manifest
    names each record's route. A warm host for it starts importing (~2 s on the Gym route)
    while the rows are read and sampled."""
    implied: dict[str, tuple[str, ...]] = {
        "skyrl_prepared": (GYM_ROUTE,),
        "harbor_directory": (HARBOR_ROUTE,),
    }
    kind = source.get("format")
    return implied.get(kind, ()) if isinstance(kind, str) else ()


def read_tasks(*, source: dict[str, Any]) -> Iterator[Task]:
    """Every candidate task of the configured source, in input order."""
    path = Path(source["tasks_path"])
    if not path.exists():
        raise ReviewProductionError(f"Task input not found: {path}")
    expected = "folder" if source["format"] == "harbor_directory" else "file"
    problem = file_problem(path, kind=expected)
    if problem is not None:
        raise ReviewProductionError(f"Task input {path} {problem}")
    if source["format"] == "skyrl_prepared":
        yield from _prepared_tasks(path, source)
    elif source["format"] == "harbor_directory":
        yield from _harbor_tasks(path, source)
    else:
        yield from _manifest_tasks(path)


def read_rows(*, path: Path) -> Iterator[dict[str, Any]]:
    """Rows by suffix: Parquet in record batches, ``.json`` an array, else JSON Lines."""
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
    confinement = Confinement.of(path.parent)
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
            task_dir = confinement.named_path(
                row["task_dir"], base=path.parent, what=f"Prepared row {index}: task_dir",
                kind="folder",
            )  # fmt: skip
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
            confinement=confinement,
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
    confinement = Confinement.of(path)
    if (path / "instruction.md").exists():
        folders = [path]
    else:
        folders = sorted(found.parent for found in path.glob("*/instruction.md"))
    for index, folder in enumerate(folders):
        for name in ("instruction.md", "tests/test.sh", "task.toml"):
            if not (folder / name).exists() and not (folder / name).is_symlink():
                raise ReviewProductionError(f"Incomplete Harbor task: {folder}")
            confinement.check(
                folder / name, kind="file", where=f"Harbor task {folder.name}: {name}"
            )
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
            confinement=confinement,
        )


def _manifest_tasks(path: Path) -> Iterator[Task]:
    confinement = Confinement.of(path.parent)
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
            task_dir = confinement.named_path(
                task_dir, base=path.parent, what=f"Task manifest record {index}: task_dir",
                kind="folder",
            )  # fmt: skip
        packed = record.get("packed_task")
        if isinstance(packed, dict) and "dataset_path" in packed:
            dataset_path = confinement.named_path(
                packed["dataset_path"], base=path.parent, kind="file",
                what=f"Task manifest record {index}: packed_task.dataset_path",
            )  # fmt: skip
            packed = {**packed, "dataset_path": dataset_path}
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
            confinement=confinement,
        )
