"""Path safety: where a path that input names may lead. One policy for the run files publication
and ``make_review`` read, the members of a publication archive, the paths a dataset's rows and
manifests name, and the run-relative files a difficulty report cites.

Two checks, each asked in one way:

- ``relative_form``: a name that must stay relative (a run file, an archive member) — non-empty
  text, not absolute (``/``, ``\\``, a drive letter), no backslash, no NUL, no ``..`` segment —
  in its POSIX-normalised form;
- ``resolves_inside``: a path that must stay inside a folder once links are followed —
  ``Path.resolve()`` of the path is the folder or lies below it (``Path.is_relative_to``).

What a caller adds is its own, not path safety: whether the file is regular, on the run's file
system, with one link (``reviews.production.format.run_files``), whether its name can be stored
(``atlas.jsonio.json_values.storable_text``).

Standard library only: ``make_review`` and the curators' tools import it without Django. The
native workers (``reviews/production/workers/``) run in another interpreter without the project
on their path; see docs/architecture.md for the one check they keep.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

__all__ = ["relative_form", "resolved", "resolves_inside"]


def relative_form(name: object) -> str | None:
    """The POSIX-normalised form of ``name`` read as a relative path (``.`` for the folder
    itself), or None when it is not one: not text, empty, absolute (``/``, ``\\``, ``C:``),
    holding a backslash or a NUL, or with a ``..`` segment anywhere (``a/../b`` too: a folder
    link makes ``a/..`` lead elsewhere than the name says)."""
    if not isinstance(name, str) or not name or "\x00" in name or "\\" in name:
        return None
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    if ".." in name.split("/"):
        return None
    return posixpath.normpath(name)


def resolved(path: str | os.PathLike[str]) -> Path | None:
    """``Path.resolve()`` of ``path`` (links followed, the path need not exist), or None when
    the operating system cannot name it (a NUL, a name it cannot encode)."""
    try:
        return Path(path).resolve()
    except (OSError, ValueError):
        return None


def resolves_inside(path: str | os.PathLike[str], root: Path) -> bool:
    """Whether ``path``, links followed, is ``root`` or lies below it; ``root`` already
    resolved (``Path.resolve()``)."""
    target = resolved(path)
    return target is not None and target.is_relative_to(root)
