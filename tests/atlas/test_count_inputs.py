"""count_inputs: footer-only parquet row counts of a local download."""

from __future__ import annotations

import io
import json
from io import StringIO
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

import atlas.artifact.input_counts as input_counts

REV = "02923004846e4e73862c20962f823a6d05100e7a"
OTHER = "131d8a8470c7a81113baac898c0c232db3f5ae31"


def add_parquet(snapshot: Path, relative: str, rows: int, revision: str | None = REV) -> Path:
    path = snapshot / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({"task": [f"t{i}" for i in range(rows)], "n": list(range(rows))})
    pq.write_table(table, path)
    if revision is not None:
        write_metadata(snapshot, relative, revision)
    return path


def write_metadata(snapshot: Path, relative: str, revision: str) -> None:
    metadata = snapshot / ".cache" / "huggingface" / "download" / f"{relative}.metadata"
    metadata.parent.mkdir(parents=True, exist_ok=True)
    # Hugging Face local-dir metadata: commit, etag, timestamp.
    metadata.write_text(f'{revision}\n"etag-{relative}"\n1727600000.0\n', encoding="utf-8")


def run(snapshot: Path, files: str, revision: str = REV) -> str:
    out = StringIO()
    call_command(
        "count_inputs",
        "--snapshot",
        str(snapshot),
        "--revision",
        revision,
        "--files",
        files,
        stdout=out,
    )
    return out.getvalue()


@pytest.fixture
def snapshot(tmp_path) -> Path:
    root = tmp_path / "TaskTrove"
    add_parquet(root, "b__set/tasks.parquet", 7)
    add_parquet(root, "a__set/tasks.parquet", 3)
    add_parquet(root, "a__set/extra/tasks.parquet", 0)
    add_parquet(root, "c__set/tasks.parquet", 11)
    return root


def test_counts_every_match_as_sorted_json(snapshot):
    text = run(snapshot, "*/tasks.parquet")
    assert json.loads(text) == {
        "a__set/tasks.parquet": 3,
        "b__set/tasks.parquet": 7,
        "c__set/tasks.parquet": 11,
    }
    assert text.rstrip("\n") == json.dumps(json.loads(text), indent=2, sort_keys=True)
    assert text.index("a__set") < text.index("b__set") < text.index("c__set")


def test_recursive_glob_and_posix_relative_keys(snapshot):
    counts = json.loads(run(snapshot, "**/*.parquet"))
    assert counts == {
        "a__set/extra/tasks.parquet": 0,
        "a__set/tasks.parquet": 3,
        "b__set/tasks.parquet": 7,
        "c__set/tasks.parquet": 11,
    }


def test_no_match(snapshot):
    with pytest.raises(CommandError) as caught:
        run(snapshot, "missing/*.parquet")
    assert str(caught.value) == "No parquet inputs match missing/*.parquet"


def test_metadata_files_are_never_inputs(snapshot):
    # A parquet file inside the download cache is not an input of the snapshot.
    add_parquet(snapshot / ".cache" / "huggingface" / "download", "x.parquet", 1, revision=None)
    with pytest.raises(
        CommandError, match=r"^No parquet inputs match \.cache/huggingface/download/"
    ):
        run(snapshot, ".cache/huggingface/download/*.parquet")


def test_snapshot_below_a_dot_cache_directory_still_counts(tmp_path):
    # Hugging Face keeps caches under ~/.cache; only the snapshot's own .cache is excluded.
    root = tmp_path / ".cache" / "hub" / "TaskTrove"
    add_parquet(root, "a/tasks.parquet", 4)
    assert json.loads(run(root, "*/tasks.parquet")) == {"a/tasks.parquet": 4}


def test_missing_metadata(snapshot):
    add_parquet(snapshot, "d__set/tasks.parquet", 2, revision=None)
    with pytest.raises(CommandError) as caught:
        run(snapshot, "*/tasks.parquet")
    assert str(caught.value) == "d__set/tasks.parquet: download metadata not found"


def test_revision_mismatch_names_file_and_both_revisions(snapshot):
    write_metadata(snapshot, "b__set/tasks.parquet", OTHER)
    with pytest.raises(CommandError) as caught:
        run(snapshot, "*/tasks.parquet")
    assert str(caught.value) == f"b__set/tasks.parquet: expected revision {REV}, found {OTHER}"


def test_every_file_is_checked_before_any_count(snapshot, monkeypatch, capsys):
    # The only bad file sorts last: no footer may have been read and nothing printed.
    write_metadata(snapshot, "c__set/tasks.parquet", OTHER)
    opened = []

    def recording_open(path):
        opened.append(path)
        return CountingReader(path)

    monkeypatch.setattr(input_counts, "_open_input", recording_open)
    out = StringIO()
    with pytest.raises(CommandError, match=r"^c__set/tasks\.parquet: expected revision"):
        call_command(
            "count_inputs", "--snapshot", str(snapshot), "--revision", REV,
            "--files", "*/tasks.parquet", stdout=out,
        )  # fmt: skip
    assert opened == [] and out.getvalue() == ""


def test_empty_metadata_file_is_a_mismatch(snapshot):
    (snapshot / ".cache/huggingface/download/a__set/tasks.parquet.metadata").write_text("")
    with pytest.raises(
        CommandError, match=f"^a__set/tasks.parquet: expected revision {REV}, found $"
    ):
        run(snapshot, "*/tasks.parquet")


def test_corrupt_parquet_is_reported(snapshot):
    (snapshot / "b__set" / "tasks.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(CommandError, match=r"^b__set/tasks\.parquet: not a readable parquet file"):
        run(snapshot, "*/tasks.parquet")


class CountingReader(io.RawIOBase):
    """A read-only file that records how many bytes were read and from where."""

    def __init__(self, path: Path) -> None:
        self._file = open(path, "rb")  # noqa: SIM115 - closed in close()
        self.bytes_read = 0
        self.reads: list[tuple[int, int]] = []

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def readinto(self, buffer) -> int:
        start = self._file.tell()
        count = self._file.readinto(buffer)
        self.bytes_read += count
        self.reads.append((start, count))
        return count

    def read(self, size: int = -1) -> bytes:
        start = self._file.tell()
        data = self._file.read(size)
        self.bytes_read += len(data)
        self.reads.append((start, len(data)))
        return data

    def close(self) -> None:
        self._file.close()
        super().close()


def test_large_file_is_counted_from_the_footer_only(tmp_path, monkeypatch):
    root = tmp_path / "big"
    path = root / "data" / "train-00000-of-00001.parquet"
    path.parent.mkdir(parents=True)
    rows_per_group, groups = 500_000, 8
    schema = pa.schema([("x", pa.int32())])
    with pq.ParquetWriter(path, schema, compression="none", use_dictionary=False) as writer:
        for group in range(groups):
            start = group * rows_per_group
            writer.write_table(
                pa.table({"x": pa.array(range(start, start + rows_per_group), pa.int32())})
            )
    write_metadata(root, "data/train-00000-of-00001.parquet", REV)
    size = path.stat().st_size
    footer_start = size - 8 - int.from_bytes(path.read_bytes()[-8:-4], "little")
    assert size > 10_000_000  # ~16 MB of uncompressed data pages

    # Any attempt to decode data fails the test.
    def forbidden(*args, **kwargs):
        raise AssertionError("data pages must not be read")

    for name in ("read", "read_row_group", "read_row_groups", "iter_batches", "scan_contents"):
        monkeypatch.setattr(pq.ParquetFile, name, forbidden)
    monkeypatch.setattr(pq, "read_table", forbidden)

    readers: list[CountingReader] = []

    def counting_open(target: Path):
        reader = CountingReader(target)
        readers.append(reader)
        return reader

    monkeypatch.setattr(input_counts, "_open_input", counting_open)
    counts = json.loads(run(root, "data/*.parquet"))
    assert counts == {"data/train-00000-of-00001.parquet": rows_per_group * groups}

    (reader,) = readers
    assert reader.closed
    # Only the trailing bytes (footer + length + magic) were read: a tiny fraction of the file,
    # and nothing before the footer begins.
    assert 0 < reader.bytes_read < 128 * 1024
    assert all(start >= min(footer_start, size - 64 * 1024) for start, _ in reader.reads), (
        reader.reads
    )
