"""Whole-file parquet row counts of a local Hugging Face snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO


class InputCountError(Exception):
    """A precondition failed; the message names the file and what is wrong."""


def count_parquet_rows(*, snapshot: Path, revision: str, files: str) -> dict[str, int]:
    """Check every matching file's download revision, then count rows from parquet footers only."""
    snapshot = Path(snapshot)
    if not snapshot.is_dir():
        raise InputCountError(f"Snapshot directory not found: {snapshot}")
    # Only the snapshot's own .cache directory (download metadata) is excluded; the snapshot itself
    # may live below a directory named .cache (e.g. ~/.cache/...).
    matches = sorted(
        path
        for path in snapshot.glob(files)
        if path.is_file() and ".cache" not in path.relative_to(snapshot).parts
    )
    if not matches:
        raise InputCountError(f"No parquet inputs match {files}")
    relative = [path.relative_to(snapshot).as_posix() for path in matches]
    for name in relative:
        check_download_revision(snapshot=snapshot, name=name, revision=revision)
    counts = {}
    for name, path in zip(relative, matches, strict=True):
        try:
            with _open_input(path) as stream:
                counts[name] = footer_row_count(stream)
        except Exception as exc:  # pyarrow raises several types for corrupt footers
            raise InputCountError(f"{name}: not a readable parquet file: {exc}") from None
    return dict(sorted(counts.items()))


def check_download_revision(*, snapshot: Path, name: str, revision: str) -> None:
    """The snapshot's Hugging Face download record of file ``name`` names ``revision``."""
    metadata = snapshot / ".cache" / "huggingface" / "download" / f"{name}.metadata"
    if not metadata.is_file():
        raise InputCountError(f"{name}: download metadata not found")
    lines = metadata.read_text(encoding="utf-8").splitlines()
    found = lines[0].strip() if lines else ""
    if found != revision:
        raise InputCountError(f"{name}: expected revision {revision}, found {found}")


def _open_input(path: Path) -> BinaryIO:
    return open(path, "rb")


def footer_row_count(stream: BinaryIO) -> int:
    """Rows of a parquet file according to its footer; pyarrow reads the trailing magic, the footer
    length and the FileMetaData only (no column chunk or data page)."""
    import pyarrow.parquet as pq  # here: make_review imports the revision check without it

    return pq.read_metadata(stream).num_rows
