"""Files of a run directory as evidence: the pure half of evidence intake (no Django), shared by
publication and by ``make_review``, which runs without an Atlas database.

What a run file is — a cited path must stay inside the run directory whatever way it could escape
(``..``, absolute paths, symbolic links, hard links to files elsewhere, other file systems mounted
inside, FIFOs and devices; the path rules are ``reviews.production.format.path_safety``'s) — and the
size and UTF-8 limits with their messages. Callers pass the exception class their refusal is
reported with. The database half (stored-artifact conflicts, bulk writes) is
``reviews.services.intake``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from atlas.jsonio.json_values import printable, storable_text
from reviews.production.format.path_safety import relative_form, resolved

DEFAULT_MAX_ARTIFACT_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class ArtifactFile:
    path: str
    content: str
    sha256: str
    size: int


def artifact_file(
    *, path: str, data: bytes, content: str, sha256: str | None = None
) -> ArtifactFile:
    """``sha256``: the digest of ``data`` when the caller already computed it (no file is hashed
    twice)."""
    digest = sha256 if sha256 is not None else hashlib.sha256(data).hexdigest()
    return ArtifactFile(path=path, content=content, sha256=digest, size=len(data))


# Paths in messages are ``printable``: a file name that is not UTF-8 is read with lone surrogates
# standing for its bytes, and a refusal naming it could be neither stored nor shown.


def too_large(*, limit: int, path: str) -> str:
    return f"Review evidence exceeds {limit} bytes: {printable(path)}"


def not_text(*, path: str) -> str:
    return f"Review evidence must be UTF-8 text: {printable(path)}"


def conflicting(*, path: str) -> str:
    return f"Artifact {printable(path)} already exists with different content"


# --- path safety ---------------------------------------------------------------------------------


def normalized_relative(path: str) -> str | None:
    """The POSIX-normalised relative form of a cited path
    (``reviews.production.format.path_safety.relative_form``); None when it is not one, names the
    run itself, or holds a lone surrogate (no file name the run can archive or the database
    store)."""
    normalized = relative_form(path)
    if normalized is None or normalized == "." or not storable_text(normalized):
        return None
    return normalized


class RunDirectory:
    """Resolves paths inside one run directory.

    Symbolic links are followed and must land inside; the file found must be a regular file on
    the run directory's own file system with no other hard link (a hard link is the same file as
    one outside). Resolved folders are cached, each resolved from its parent: a run holds
    thousands of files in few folders, or two files in each of thousands.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.device = os.stat(self.root).st_dev
        # Per run-relative folder: its resolved path as text, and whether that lies inside.
        self._folders: dict[str, tuple[str, bool]] = {"": (str(self.root), True)}

    def resolve(self, relative: str) -> Path | None:
        """The contained regular file ``relative`` names, else None."""
        located = self._located(relative)
        return None if located is None else Path(located[0])

    def read(self, relative: str, *, limit: int, error: type[Exception]) -> bytes | None:
        """The bytes of the contained regular file ``relative`` names, else None; refused for size
        before anything over the limit is read.

        ``resolve`` and ``read_limited`` in one: the file is stat'ed once and opened without a
        pathlib or file object (a 10,000-file run spent more on those than on reading)."""
        located = self._located(relative)
        if located is None:
            return None
        candidate, info = located
        try:
            # O_NOFOLLOW and the inode comparison: the file checked is the file read, even if the
            # name was replaced in between (by a link out, or a FIFO whose open would block).
            descriptor = os.open(candidate, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            opened = os.fstat(descriptor)
            if (opened.st_ino, opened.st_dev) != (info.st_ino, info.st_dev):
                return None
            return _read_bounded(
                read=functools.partial(os.read, descriptor),
                size=opened.st_size, limit=limit, relative=relative, error=error,
            )  # fmt: skip
        finally:
            os.close(descriptor)

    def _located(self, relative: str) -> tuple[str, os.stat_result] | None:
        """The resolved path and status of the contained regular file ``relative`` names.

        Containment is decided by ``Path.is_relative_to`` once per folder and for each file that
        is a link; a file that is not lies where its folder does (the path is joined as text:
        thousands of pathlib objects per run cost more than the file system calls themselves)."""
        folder, _, name = relative.rpartition("/")
        folder_text, inside = self._resolved_folder(folder)
        candidate = os.path.join(folder_text, name)
        try:
            info = os.lstat(candidate)
            if stat.S_ISLNK(info.st_mode):
                target = Path(candidate).resolve()
                inside = target.is_relative_to(self.root)
                candidate = str(target)
                info = os.stat(candidate)
        except (OSError, ValueError):
            return None
        if not inside or not self._contained_status(info):
            return None
        return candidate, info

    def _resolved_folder(self, folder: str) -> tuple[str, bool]:
        """``Path.resolve()`` of a run-relative folder and whether it lies inside the run, from
        its nearest resolved ancestor down with one lstat per folder: resolving each of a run's
        thousands of execution folders from the file system root was most of the cost of
        reading their two files each."""
        known = self._folders.get(folder)
        unresolved = []
        while known is None:
            unresolved.append(folder)
            folder = folder.rpartition("/")[0]
            known = self._folders.get(folder)  # "" (the root) is always there
        for child in reversed(unresolved):
            parent, inside = known
            candidate = os.path.join(parent, child.rpartition("/")[2])
            if os.path.islink(candidate):
                target = Path(candidate).resolve()
                candidate, inside = str(target), target.is_relative_to(self.root)
            elif not inside:  # out through a link and back in below it: the run itself
                inside = Path(candidate).is_relative_to(self.root)
            known = self._folders[child] = (candidate, inside)
        return known

    def _contained_file(self, path: Path) -> bool:
        """Whether ``path``, links followed, is a contained regular file."""
        target = resolved(path)
        if target is None or not target.is_relative_to(self.root):
            return False
        try:
            info = os.stat(target)
        except OSError:
            return False
        return self._contained_status(info)

    def _contained_status(self, info: os.stat_result) -> bool:
        return stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_dev == self.device

    def contains(self, relative: str) -> Path | None:
        """The resolved path (file or folder) ``relative`` names inside the run, else None;
        for the escape checks of paths that may name folders."""
        normalized = normalized_relative(relative)
        if normalized is None:
            return None
        target = resolved(self.root / normalized)
        return target if target is not None and target.is_relative_to(self.root) else None

    def files_under(self, target: Path) -> tuple[list[Path], list[str]]:
        """(contained regular files at or below ``target``, run-relative paths of entries that
        are not — links out, hard links, devices, FIFOs, other file systems —, ``printable`` for
        a message). Folder links are not followed."""
        candidates = [target]
        if target.is_dir():
            candidates = []
            for folder, folders, names in os.walk(target, followlinks=False):
                folders.sort()
                candidates.extend(Path(folder) / name for name in sorted(names))
        found, refused = [], []
        for path in candidates:
            if self._contained_file(path):
                found.append(path)
            else:
                refused.append(printable(os.path.relpath(path, self.root).replace(os.sep, "/")))
        return found, refused

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


# --- contents ------------------------------------------------------------------------------------


def as_text(data: bytes) -> str | None:
    """Artifacts are stored as text: strict UTF-8 without NUL characters (databases refuse them)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def read_limited(path: Path, *, relative: str, limit: int, error: type[Exception]) -> bytes:
    """The file's bytes, refused for size before anything over the limit is read."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        return _read_bounded(
            read=handle.read, size=size, limit=limit, relative=relative, error=error
        )


def _read_bounded(
    *, read: Callable[[int], bytes], size: int, limit: int, relative: str, error: type[Exception]
) -> bytes:
    """Read a file whose status gave ``size``. The read is sized by the file, not the limit: a
    16 MiB buffer per small evidence file cost more than reading it; one byte more tells a file
    that grew since, which is then read on, still bounded."""
    if size > limit:
        raise error(too_large(limit=limit, path=relative))
    data = read(size + 1)
    if len(data) > size:
        data += read(limit + 1 - len(data))
    if len(data) > limit:
        raise error(too_large(limit=limit, path=relative))
    return data


def text_artifact(
    *, relative: str, data: bytes, limit: int, error: type[Exception], sha256: str | None = None
) -> ArtifactFile | None:
    """An artifact of UTF-8 text within the limit; None when the bytes are not text, or the name
    is not (the caller decides whether that refuses the run or skips the file)."""
    if len(data) > limit:
        raise error(too_large(limit=limit, path=relative))
    text = as_text(data)
    if text is None or not storable_text(relative):
        # A file name that is not UTF-8 (read with lone surrogates for its bytes) cannot be an
        # artifact's path: it reached the database, which raised instead of a refusal.
        return None
    return artifact_file(path=relative, data=data, content=text, sha256=sha256)
