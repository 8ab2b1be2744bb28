"""The run directory: creation, the run lock, file writing and
the artifact manifest."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Any, TextIO

from reviews.production.format.collection_checks import (
    SCHEMA_PATH,
    CollectionRejected,
    check_collection,
)
from reviews.production.runtime.errors import CurationRefused, ReviewProductionError

LOCK_FILE = ".run.lock"
RUN_FILE = "run.json"
SCHEMA_COPY = "quality-review.schema.json"
COLLECTION_FILE = "quality-reviews.json"
PANEL_FILE = "panel-reviews.partial.json"
MANIFEST_FILE = "artifact-manifest.json"
SKIPPED_NAMES = frozenset({"__pycache__"})


def task_folder(*, run_dir: Path, number: int) -> Path:
    return run_dir / "tasks" / f"{number:04d}"


def json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def write_json_file(path: Path, value: Any) -> None:
    write_text_file(path, json_text(value))


def write_text_file(path: Path, text: str) -> None:
    """Written beside the target and renamed over it: an interrupted write never leaves a
    half-written file that a resume would trust."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class RunLock:
    """A non-blocking exclusive lock on ``.run.lock`` held for the whole run."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK_FILE
        self._stream: TextIO | None = None

    def acquire(self) -> None:
        stream = open(self.path, "a+")  # noqa: SIM115 - held open until release()
        try:
            fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            stream.close()
            raise ReviewProductionError(
                "Another make_review run holds this output directory"
            ) from None
        self._stream = stream

    def release(self) -> None:
        if self._stream is not None:
            fcntl.flock(self._stream.fileno(), fcntl.LOCK_UN)
            self._stream.close()
            self._stream = None


def prepare_output(*, output: Path, resume: bool) -> None:
    """An existing directory needs --resume; a new one is created with mode 0700."""
    if output.exists() and not resume:
        raise ReviewProductionError("Output already exists; use --resume or a new output directory")
    output.parent.mkdir(parents=True, exist_ok=True)
    if not output.exists():
        output.mkdir(mode=0o700)
        os.chmod(output, 0o700)  # mkdir's mode is masked by the umask


def artifact_manifest(*, run_dir: Path) -> dict[str, Any]:
    """``{files: [{path, bytes, sha256}]}`` for every file but the lock and the manifest itself."""
    from reviews.production.runtime.identity import sha256_file

    files = []
    for root, dirs, names in os.walk(run_dir):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_NAMES)
        for name in names:
            path = Path(root) / name
            relative = path.relative_to(run_dir).as_posix()
            if relative in (LOCK_FILE, MANIFEST_FILE) or name.endswith(".tmp"):
                continue
            if not path.is_file():
                continue
            files.append(
                {"path": relative, "bytes": path.stat().st_size, "sha256": sha256_file(path)}
            )
    return {"files": sorted(files, key=lambda item: item["path"])}


# --- the curators' run directories: always new (a re-run costs seconds of native execution and no
# model call, so they are never resumed), finished with the checks publication runs.


def checked_new(path: Path) -> Path:
    """``path`` made absolute, refused when it exists (checked first, before any other work)."""
    output = Path(os.path.abspath(os.path.expanduser(str(path))))
    if output.exists():
        raise CurationRefused(f"Output already exists; use a new output directory: {output}")
    return output


def new_output(path: Path) -> Path:
    """``path`` made absolute and created with mode 0700; an existing one is refused."""
    output = checked_new(path)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.mkdir(mode=0o700)
    os.chmod(output, 0o700)  # mkdir's mode is masked by the umask
    return output


def finish(*, output: Path, collection: dict[str, Any]) -> Path:
    """Validate the collection as publication will (steps 2–6), then write it, the schema it
    was checked against and the artifact manifest."""
    try:
        check_collection(collection=collection, run_dir=output)
    except CollectionRejected as exc:
        raise CurationRefused(str(exc)) from None
    if not (output / SCHEMA_COPY).is_file():
        shutil.copyfile(SCHEMA_PATH, output / SCHEMA_COPY)
    path = output / COLLECTION_FILE
    write_text_file(path, json_text(collection))
    write_json_file(output / MANIFEST_FILE, artifact_manifest(run_dir=output))
    return path
