"""Which files of a run directory a publication archives (reviews.md §6.3) and how they are read."""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

COLLECTION_FILE = "quality-reviews.json"
PUBLICATION_RESULT_FILE = "atlas-publication.json"
GRADING_CLAIM_PATH = "publication/grading-applicability.json"
RUN_FILES = ("run.json", "quality-review.schema.json", "artifact-manifest.json")
_EXECUTION = r"tasks/[^/]+/execution-[^/]+"
ARCHIVED_PATTERN = re.compile(
    "|".join(
        [
            r"publication/.+",
            _EXECUTION + r"/(?:input\.json|attempt\.json|solver-trace\.json|verifier-trace\.jsonl"
            r"|verifier\.stdout|verifier\.stderr|harbor-result\.json|native-code-index\.json)",
            _EXECUTION + r"/solver/turn-[^/]+/(?:request|response)\.json",
            _EXECUTION + r"/[^/]+/agent/(?:trajectory|offline-tooling)\.json",
        ]
    )
)
WALKED_FOLDERS = ("publication", "tasks")


@dataclass(frozen=True)
class ArtifactFile:
    path: str
    content: str
    sha256: str
    size: int


def artifact_file(*, path: str, data: bytes, content: str) -> ArtifactFile:
    return ArtifactFile(
        path=path, content=content, sha256=hashlib.sha256(data).hexdigest(), size=len(data)
    )


def normalized_relative(path: str) -> str | None:
    """The POSIX-normalised relative form of a cited path; None when absolute or escaping."""
    if not path or path.startswith("/") or "\\" in path or "\x00" in path:
        return None
    normalized = posixpath.normpath(path)
    if normalized == "." or normalized == ".." or normalized.startswith("../"):
        return None
    return normalized


class RunDirectory:
    """Resolves paths inside one run directory, following symlinks (reviews.md §5.5).

    Resolved folders are cached: a run holds thousands of files in a few folders, and resolving
    every component of every path again would dominate the cost of a large publication.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))
        self._folders: dict[str, str] = {}

    def resolve(self, relative: str) -> Path | None:
        """The regular file ``relative`` names inside the run directory, else None."""
        folder, _, name = relative.rpartition("/")
        resolved_folder = self._folders.get(folder)
        if resolved_folder is None:
            resolved_folder = os.path.realpath(os.path.join(self.root, folder))
            self._folders[folder] = resolved_folder
        candidate = os.path.join(resolved_folder, name)
        if os.path.islink(candidate):
            candidate = os.path.realpath(candidate)
        target = Path(candidate)
        if not target.is_relative_to(self.root) or not target.is_file():
            return None
        return target


def as_text(data: bytes) -> str | None:
    """Artifacts are stored as text: strict UTF-8 without NUL characters (databases refuse them)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def globbed_files(run: RunDirectory) -> dict[str, Path]:
    """The optional run files, publication/ files and execution files present (§6.3), by
    relative path. One walk of each folder; globbing per execution folder costs far more."""
    found: dict[str, Path] = {}
    for name in RUN_FILES:
        target = run.resolve(name)
        if target is not None:
            found[name] = target
    for top in WALKED_FOLDERS:
        if (run.root / top).is_dir() and not (run.root / top).is_symlink():
            _walk(run, top, found)
    return found


def _walk(run: RunDirectory, top: str, found: dict[str, Path]) -> None:
    # Walked without following folder links from the resolved root, so a regular file met here
    # is inside the run directory; only file links need resolving.
    pending = [top]
    while pending:
        folder = pending.pop()
        with os.scandir(run.root / folder) as entries:
            for entry in entries:
                relative = f"{folder}/{entry.name}"
                if entry.is_dir(follow_symlinks=False):
                    pending.append(relative)
                elif ARCHIVED_PATTERN.fullmatch(relative):
                    if entry.is_file(follow_symlinks=False):
                        found[relative] = Path(entry.path)
                    elif (target := run.resolve(relative)) is not None:
                        found[relative] = target
