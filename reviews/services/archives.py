"""Safe extraction of uploaded run-directory archives (.tar.gz or .zip).

Every entry is checked before anything is extracted: absolute paths, `..`, links and devices are
refused, the number of entries is bounded, and the declared and the actually decompressed size
are both bounded.
"""

from __future__ import annotations

import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from django.conf import settings

from atlas.jsonio.json_values import printable
from reviews.production.format.evidence_set import COLLECTION_FILE
from reviews.production.format.path_safety import relative_form, resolves_inside

DEFAULT_MAX_PUBLICATION_BYTES = 512 * 1024 * 1024
DEFAULT_MAX_EXTRACTED_BYTES = 4 * DEFAULT_MAX_PUBLICATION_BYTES
DEFAULT_MAX_EXPANSION_RATIO = 100
# Entries an archive may hold: each costs a file system operation however small it is (300,000
# empty files kept a worker busy for minutes), and a run directory of a thousand tasks holds a
# few tens of thousands of files.
DEFAULT_MAX_ARCHIVE_ENTRIES = 50_000
CHUNK = 256 * 1024


class ArchiveRejected(Exception):
    """The archive cannot be imported; the message says why."""


class ArchiveTooLarge(ArchiveRejected):
    pass


@dataclass(frozen=True)
class _Entry:
    name: str
    relative: str
    is_dir: bool
    size: int


def max_publication_bytes() -> int:
    return int(getattr(settings, "ATLAS_MAX_PUBLICATION_BYTES", DEFAULT_MAX_PUBLICATION_BYTES))


def max_extracted_bytes() -> int:
    return int(getattr(settings, "ATLAS_MAX_EXTRACTED_BYTES", DEFAULT_MAX_EXTRACTED_BYTES))


def max_archive_entries() -> int:
    return int(getattr(settings, "ATLAS_MAX_ARCHIVE_ENTRIES", DEFAULT_MAX_ARCHIVE_ENTRIES))


def _too_many_entries(limit: int) -> ArchiveTooLarge:
    return ArchiveTooLarge(f"Publication archive holds more than {limit} entries")


def archive_format(name: str) -> str:
    lowered = name.lower()
    if lowered.endswith((".tar.gz", ".tgz")):
        return "tar"
    if lowered.endswith(".zip"):
        return "zip"
    raise ArchiveRejected("Publication archive must be a .tar.gz or .zip file")


def max_expansion_ratio() -> int:
    return int(getattr(settings, "ATLAS_MAX_EXPANSION_RATIO", DEFAULT_MAX_EXPANSION_RATIO))


def extraction_budget(archive_bytes: int) -> int:
    """Bytes an archive may expand to: the configured total, and at most ``max_expansion_ratio``
    times the upload (a tiny archive of zeros must not fill the disk)."""
    return min(max_extracted_bytes(), max(archive_bytes, 1) * max_expansion_ratio())


def too_large() -> str:
    """The refusal of an upload over ``max_publication_bytes`` (worker, API and admin alike)."""
    return f"Publication archive exceeds {max_publication_bytes()} bytes"


def extract_archive(*, archive: Path, name: str, destination: Path) -> Path:
    """Extract ``archive`` into ``destination`` and return the run directory inside it."""
    kind = archive_format(name)
    size = archive.stat().st_size
    if size > max_publication_bytes():
        raise ArchiveTooLarge(too_large())
    budget = extraction_budget(size)
    opener = _tar_entries if kind == "tar" else _zip_entries
    try:
        with opener(archive) as (entries, open_entry):
            _check_total(entries, budget)
            destination.mkdir(parents=True, exist_ok=True)
            _extract(entries, open_entry, destination, budget)
    except ArchiveRejected:
        raise
    except (
        tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, struct.error,
        # Unsupported compression methods, encrypted members, malformed headers.
        NotImplementedError, RuntimeError, ValueError,
    ) as exc:  # fmt: skip
        raise ArchiveRejected(
            f"Publication archive is not a readable {_kind_name(kind)}: {_reason(exc)}"
        ) from None
    except OSError as exc:
        # strerror only: the full message names server paths.
        raise ArchiveRejected(
            f"Publication archive could not be extracted: {exc.strerror or type(exc).__name__}"
        ) from None
    return run_root(destination)


def _kind_name(kind: str) -> str:
    return ".tar.gz" if kind == "tar" else ".zip"


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    # A reason never carries a server path (extraction happens in a scratch directory).
    return text.split(" /", 1)[0].split(" '/", 1)[0][:200]


def run_root(destination: Path) -> Path:
    """The archive root, or its single top-level folder when a whole directory was archived."""
    if (destination / COLLECTION_FILE).exists():
        return destination
    children = list(destination.iterdir())
    if len(children) == 1 and children[0].is_dir() and (children[0] / COLLECTION_FILE).exists():
        return children[0]
    return destination


def _unsafe(name: str) -> ArchiveRejected:
    # A member name that is not UTF-8 is read with lone surrogates for its bytes: printed as it
    # is, the job's error could not be stored (the worker raised, the job stayed running).
    return ArchiveRejected(f"Publication archive contains an unsafe path: {printable(name)}")


@contextmanager
def _tar_entries(archive: Path) -> Iterator:
    limit = max_archive_entries()
    with tarfile.open(archive, mode="r:gz") as bundle:
        entries: list[_Entry] = []
        by_name: dict[str, tarfile.TarInfo] = {}
        # Member by member, so counting stops at the limit before the rest is even read.
        for member in bundle:
            if len(entries) >= limit:
                raise _too_many_entries(limit)
            relative = relative_form(member.name)
            if relative is None or not (member.isfile() or member.isdir()):
                raise _unsafe(member.name)
            entries.append(_Entry(member.name, relative, member.isdir(), member.size))
            by_name[member.name] = member

        def open_entry(entry: _Entry) -> IO[bytes]:
            stream = bundle.extractfile(by_name[entry.name])
            if stream is None:  # only regular files are opened, and each of them has a stream
                raise _unsafe(entry.name)
            return stream

        yield entries, open_entry


@contextmanager
def _zip_entries(archive: Path) -> Iterator:
    limit = max_archive_entries()
    with zipfile.ZipFile(archive) as bundle:
        if len(bundle.infolist()) > limit:
            raise _too_many_entries(limit)
        entries = []
        for info in bundle.infolist():
            relative = relative_form(info.filename)
            mode = info.external_attr >> 16
            file_type = stat.S_IFMT(mode)
            special = file_type not in (0, stat.S_IFREG, stat.S_IFDIR)
            if relative is None or special:
                raise _unsafe(info.filename)
            entries.append(_Entry(info.filename, relative, info.is_dir(), info.file_size))

        def open_entry(entry: _Entry) -> IO[bytes]:
            return bundle.open(entry.name)

        yield entries, open_entry


def _check_total(entries: list[_Entry], budget: int) -> None:
    if sum(entry.size for entry in entries) > budget:
        raise ArchiveTooLarge(f"Publication archive expands beyond {budget} bytes")


def _extract(entries: list[_Entry], open_entry, destination: Path, limit: int) -> None:
    budget = limit
    root = destination.resolve()
    for entry in entries:
        target = root / entry.relative
        if not resolves_inside(target, root):
            raise _unsafe(entry.name)
        if entry.is_dir or entry.relative == ".":
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with open_entry(entry) as source, target.open("wb") as sink:
            while chunk := source.read(CHUNK):
                budget -= len(chunk)
                # Declared sizes can lie (zip bombs); the bytes actually written are what count.
                if budget < 0:
                    raise ArchiveTooLarge(f"Publication archive expands beyond {limit} bytes")
                sink.write(chunk)
