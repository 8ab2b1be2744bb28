"""The run directory: creation, the run lock, file writing and
the artifact manifest."""

from __future__ import annotations

import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, TextIO

import orjson

from reviews.production.format.collection_checks import (
    SCHEMA_PATH,
    CollectionRejected,
    check_collection,
)
from reviews.production.runtime.errors import (
    CurationInterrupted,
    CurationRefused,
    ReviewProductionError,
)

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
    """Indented JSON as ``json.dumps(value, indent=2, ensure_ascii=False)`` writes it. The
    standard library indents only in its pure-Python encoder (~60 ms for a 24-task collection,
    ~1.4 ms per saved request: a fifth of make_review's own CPU); orjson writes the same text in
    a tenth of that. What orjson does not take (an integer past 64 bits, a key that is not a
    string) goes to the standard library. A float may be spelled otherwise (``1e-05`` as
    ``0.00001``), the same number when read back; a NaN or an infinity, which JSON has no word
    for, is null."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8") + "\n"
    except orjson.JSONEncodeError:
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


def run_file_paths(run_dir: Path) -> list[tuple[str, str]]:
    """Every regular file under ``run_dir`` (``__pycache__`` folders skipped) as ``(path
    relative to the run, in POSIX form; the file's own path)``, folders in sorted order.
    Plain strings and ``os.scandir``: a run holds hundreds of files per task, and building
    ``Path`` objects for each was most of the cost of listing them at the end of a run."""
    found: list[tuple[str, str]] = []
    pending = [(os.fspath(run_dir), "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        folders = []
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_NAMES:
                    folders.append((entry.path, f"{prefix}{entry.name}/"))
            elif entry.is_file(follow_symlinks=False):
                found.append((f"{prefix}{entry.name}", entry.path))
        pending.extend(reversed(folders))
    return found


def artifact_manifest(*, run_dir: Path) -> dict[str, Any]:
    """``{files: [{path, bytes, sha256}]}`` for every file but the lock and the manifest itself."""
    files = []
    for relative, path in run_file_paths(run_dir):
        if relative in (LOCK_FILE, MANIFEST_FILE) or relative.endswith(".tmp"):
            continue
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            digest = hashlib.file_digest(stream, "sha256").hexdigest()
        files.append({"path": relative, "bytes": size, "sha256": digest})
    return {"files": sorted(files, key=lambda item: item["path"])}


# --- the curators' run directories: always new, written in full or not at all. A curator's run
# costs seconds of native execution and at most one model call, so it is never resumed: it is
# written in a hidden staging folder beside its output and renamed into place only when it is
# finished. A refusal, an interruption or a full disk removes the staging folder, so the corrected
# retry runs into the same output, and nothing half-made can be mistaken for evidence.

STAGING = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.partial$")


def checked_new(path: Path) -> Path:
    """``path`` made absolute, refused when it exists (checked first, before any other work)."""
    output = Path(os.path.abspath(os.path.expanduser(str(path))))
    if output.exists():
        raise CurationRefused(f"Output already exists; use a new output directory: {output}")
    return output


class StagedOutput:
    """A curator's output directory: ``path`` is where the run writes (the staging folder),
    ``publish()`` renames it to ``output``. Used as a context manager, any exception removes the
    staging folder; an interruption becomes ``CurationInterrupted`` and an error of the file
    system (a full disk, a read-only folder) a ``CurationRefused``, each one line saying that
    nothing was kept (the command prints it, never a traceback)."""

    def __init__(self, output: Path, *, command: str) -> None:
        self.output = checked_new(output)
        self.command = command
        self.path = self.output.with_name(f".{self.output.name}.{os.getpid()}.partial")
        self.published = False

    def __enter__(self) -> StagedOutput:
        self.output.parent.mkdir(parents=True, exist_ok=True)
        _sweep_abandoned(self.output)
        self.path.mkdir(mode=0o700)
        os.chmod(self.path, 0o700)  # mkdir's mode is masked by the umask
        return self

    def publish(self) -> Path:
        """The finished run, renamed into place (the same file system: one atomic rename)."""
        if self.output.exists():
            raise CurationRefused(
                f"Output already exists; use a new output directory: {self.output}"
            )
        os.rename(self.path, self.output)
        self.published = True
        return self.output

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, _tb) -> None:
        if kind is None:
            return
        if not self.published:
            shutil.rmtree(self.path, ignore_errors=True)
        if isinstance(exc, KeyboardInterrupt):
            raise CurationInterrupted(
                f"{self.command}: interrupted; nothing was kept in {self.output}"
            ) from None
        if isinstance(exc, OSError):
            raise CurationRefused(
                f"{self.command} stopped: {self._reason(exc)}; nothing was kept in {self.output}"
            ) from None

    def _reason(self, exc: OSError) -> str:
        """The error in words, a staging path named by its place in the output."""
        reason = exc.strerror or str(exc)
        if exc.filename:
            name = str(exc.filename).replace(str(self.path), str(self.output))
            reason = f"{reason}: {name}"
        return reason


def _sweep_abandoned(output: Path) -> None:
    """Staging folders of the same output left by a process that no longer runs (killed before
    it could clean up): removed, so they never pile up beside the output."""
    for sibling in output.parent.glob(f".{glob.escape(output.name)}.*.partial"):
        match = STAGING.match(sibling.name)
        if match is None or match["name"] != output.name or _running(int(match["pid"])):
            continue
        shutil.rmtree(sibling, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


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
