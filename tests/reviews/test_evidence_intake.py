"""Evidence intake (reviews.services.intake): containment of every way a path can leave the run
directory (difficulty's side is in tests/difficulty/test_publication.py), and size limits enforced
before reading."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reviews.models import ReviewArtifact
from reviews.services.intake import RunDirectory, read_limited
from reviews.services.validation import PublicationRejected
from tests.reviews.builders import (
    SOURCE_ID,
    build_run,
    database_state,
    make_row,
    publish,
    sync_rows,
)

pytestmark = pytest.mark.django_db
ATTEMPT_FILE = "tasks/0000/execution-000/verifier.stdout"


@pytest.fixture
def source(write_catalog):
    sync_rows(write_catalog, make_row(SOURCE_ID))


def hard_link_out(run_dir: Path, relative: str, outside: Path) -> None:
    """Replace ``relative`` with a hard link to a file outside the run directory."""
    outside.write_bytes((run_dir / relative).read_bytes())
    (run_dir / relative).unlink()
    os.link(outside, run_dir / relative)


def cited_paths(run_dir: Path) -> list[str]:
    import json

    collection = json.loads((run_dir / "quality-reviews.json").read_text())
    return [
        item["snapshot_path"] for review in collection["reviews"] for item in review["evidence"]
    ]


def test_a_cited_hard_link_to_a_file_outside_is_refused(source, tmp_path):
    run_dir = build_run(tmp_path)
    cited = cited_paths(run_dir)[0]
    hard_link_out(run_dir, cited, tmp_path / "secret.json")
    before = database_state()
    with pytest.raises(PublicationRejected, match=f"^Review evidence path/hash mismatch: {cited}$"):
        publish(run_dir)
    assert database_state() == before


def test_an_uncited_hard_link_is_not_archived(source, tmp_path):
    run_dir = build_run(tmp_path)
    assert ATTEMPT_FILE not in cited_paths(run_dir)
    hard_link_out(run_dir, ATTEMPT_FILE, tmp_path / "outside.txt")
    review_id = publish(run_dir)["review_id"]
    paths = set(ReviewArtifact.objects.filter(review_id=review_id).values_list("path", flat=True))
    assert ATTEMPT_FILE not in paths
    assert "tasks/0000/execution-000/verifier.stderr" in paths


def test_a_fifo_in_the_run_directory_neither_hangs_nor_is_archived(source, tmp_path):
    run_dir = build_run(tmp_path)
    (run_dir / ATTEMPT_FILE).unlink()
    os.mkfifo(run_dir / ATTEMPT_FILE)
    review_id = publish(run_dir)["review_id"]
    assert not ReviewArtifact.objects.filter(review_id=review_id, path=ATTEMPT_FILE).exists()


def test_run_directory_containment_rules(tmp_path):
    root = tmp_path / "run"
    (root / "a").mkdir(parents=True)
    (root / "a" / "plain.txt").write_text("x")
    (tmp_path / "outside.txt").write_text("y")
    os.symlink(tmp_path / "outside.txt", root / "a" / "link-out.txt")
    os.symlink(root / "a" / "plain.txt", root / "a" / "link-in.txt")
    os.link(tmp_path / "outside.txt", root / "a" / "hard.txt")
    os.mkfifo(root / "a" / "pipe")
    run = RunDirectory(root)
    assert run.resolve("a/plain.txt") == root / "a" / "plain.txt"
    assert run.resolve("a/link-in.txt") == root / "a" / "plain.txt"
    for name in ("a/link-out.txt", "a/hard.txt", "a/pipe", "a/missing.txt"):
        assert run.resolve(name) is None, name
        assert run.read(name, limit=1024, error=PublicationRejected) is None, name
    assert run.read("a/link-in.txt", limit=1024, error=PublicationRejected) == b"x"
    with pytest.raises(
        PublicationRejected, match=r"^Review evidence exceeds 0 bytes: a/plain.txt$"
    ):
        run.read("a/plain.txt", limit=0, error=PublicationRejected)
    assert run.contains("../outside.txt") is None and run.contains("/etc/passwd") is None
    os.symlink(root / "a", root / "folder-in")
    os.symlink(tmp_path, root / "folder-out")
    (root / "a" / "deeper").mkdir()
    os.symlink(tmp_path, root / "a" / "deeper" / "up")
    assert run.read("folder-in/plain.txt", limit=1024, error=PublicationRejected) == b"x"
    for name in ("folder-out/outside.txt", "a/deeper/up/outside.txt"):
        assert run.read(name, limit=1024, error=PublicationRejected) is None, name
    # Out through a folder link and back in: the file found is inside.
    assert run.read("a/deeper/up/run/a/plain.txt", limit=1024, error=PublicationRejected) == b"x"
    files, refused = run.files_under(root / "a")
    assert [path.name for path in files] == ["link-in.txt", "plain.txt"]
    assert refused == ["a/hard.txt", "a/link-out.txt", "a/pipe"]


def test_size_is_refused_before_reading(tmp_path):
    big = tmp_path / "big.bin"
    with big.open("wb") as handle:
        handle.truncate(10 * 2**30)  # a sparse 10 GiB file: reading it would take minutes
    with pytest.raises(PublicationRejected, match=r"^Review evidence exceeds 1024 bytes: big$"):
        read_limited(big, relative="big", limit=1024, error=PublicationRejected)
