"""Bad review run directories, difficulty runs and upload archives: each refused with a one-line
reason (command and service), every table unchanged."""

from __future__ import annotations

import io
import json
import os
import tarfile
import zipfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from difficulty.publication import DifficultyPublicationError, publish_difficulty_run
from reviews.services.archives import ArchiveRejected, extract_archive
from reviews.services.validation import PublicationRejected
from tests.difficulty.conftest import ATLAS_ID as DIFFICULTY_ID
from tests.difficulty.conftest import make_source as make_difficulty_source
from tests.reviews.builders import (
    SOURCE_ID,
    build_run,
    make_row,
    publish,
    rewrite_collection,
    sync_rows,
    write_file,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def source(write_catalog):
    sync_rows(write_catalog, make_row(SOURCE_ID))


def refuse_review(run_dir, message: str, tables) -> None:
    tables.before()
    with pytest.raises(PublicationRejected) as refused:
        publish(run_dir)
    assert str(refused.value) == message
    with pytest.raises(CommandError) as command:
        call_command("publish_review", "--run-dir", str(run_dir), "--atlas-id", SOURCE_ID)
    assert str(command.value) == message and "\n" not in message
    tables.assert_unchanged()


def raw_summary(run_dir, value: str) -> None:
    """Replace the first review's summary with raw JSON text (what json.dumps would not write)."""
    path = run_dir / "quality-reviews.json"
    text = path.read_text(encoding="utf-8")
    start = text.index('"summary":', text.index('"reviews":')) + len('"summary":')
    end = (
        start
        + json.JSONDecoder().raw_decode(text[start:].lstrip())[1]
        + (len(text[start:]) - len(text[start:].lstrip()))
    )
    path.write_text(text[:start] + " " + value + text[end:], encoding="utf-8")


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ('"NaN"', "Review collection is not valid JSON: NaN is not a JSON value"),
        (
            '"\\u0000"',
            "Review collection holds a value the Atlas cannot store at reviews[0].summary"
            ": text holding a NUL character or a lone surrogate",
        ),
        (
            '"\\ud800"',
            "Review collection holds a value the Atlas cannot store at reviews[0].summary"
            ": text holding a NUL character or a lone surrogate",
        ),
    ],
    ids=["nan", "nul", "lone-surrogate"],
)
def test_collection_values_the_database_refuses(source, tmp_path, tables, token, message):
    run_dir = build_run(tmp_path)
    raw_summary(run_dir, "NaN" if token == '"NaN"' else token)
    refuse_review(run_dir, message, tables)


def test_a_collection_nested_too_deeply(source, tmp_path, tables):
    run_dir = build_run(tmp_path)
    raw_summary(run_dir, "[" * 100_000 + "]" * 100_000)
    refuse_review(
        run_dir, "Review collection is not valid JSON: the document is nested too deeply", tables
    )


def test_a_collection_deeper_than_the_bound(source, tmp_path, tables):
    run_dir = build_run(tmp_path)
    deep = "x"
    for _ in range(40):
        deep = [deep]

    def nest(collection):
        collection["reviews"][0]["attributes"]["deep"] = deep

    rewrite_collection(run_dir, nest)
    message = "Review collection holds a value the Atlas cannot store at reviews[0].attributes.deep"
    refuse_review(run_dir, message + "[0]" * 29 + ": nested deeper than 32 levels", tables)


def test_a_judgment_from_the_future(source, tmp_path, tables):
    run_dir = build_run(tmp_path)

    def future(collection):
        collection["reviews"][0]["reviewed_at"] = "9999-12-31T00:00:00Z"

    rewrite_collection(run_dir, future)
    refuse_review(run_dir, "Review judgment time is in the future: 9999-12-31T00:00:00Z", tables)


def test_re_uploading_a_published_collection_cannot_append_files(source, tmp_path, tables):
    run_dir = build_run(tmp_path)
    publish(run_dir)
    publish(run_dir)  # the same bytes and evidence again: a no-op
    for index in range(3):
        write_file(run_dir, f"tasks/0001/execution-001/solver/turn-9{index}/response.json", b"{}")
    refuse_review(
        run_dir,
        "Review collection is already published; its evidence cannot change: "
        "tasks/0001/execution-001/solver/turn-90/response.json",
        tables,
    )


def test_late_publisher_proofs_are_bounded(source, tmp_path, tables):
    run_dir = build_run(tmp_path)
    publish(run_dir)
    for index in range(25):
        write_file(run_dir, f"publication/proof-{index:02d}.json", b"{}")
    refuse_review(
        run_dir,
        "Review collection is already published; its evidence cannot change: "
        "publication/proof-20.json",
        tables,
    )


def test_a_cited_hard_link_out_of_the_run(source, tmp_path, tables):
    run_dir = build_run(tmp_path)
    secret = tmp_path / "secret.json"
    target = run_dir / "coalescer/parsed.json"
    secret.write_bytes(target.read_bytes())
    target.unlink()
    os.link(secret, target)
    refuse_review(run_dir, "Review evidence path/hash mismatch: coalescer/parsed.json", tables)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda text: text.replace('"split"', '"x": NaN, "split"', 1),
         "Artifact is not a model comparison report"),
        (lambda text: text.replace('"split"', '"x": "\\u0000", "split"', 1),
         "Difficulty report holds a value the Atlas cannot store at x: text holding a NUL "
         "character or a lone surrogate"),
        (lambda text: text.replace('"split"', '"x": "\\udfff", "split"', 1),
         "Difficulty report holds a value the Atlas cannot store at x: text holding a NUL "
         "character or a lone surrogate"),
        (lambda text: json.dumps({**json.loads(text), "estimated_at": "9999-12-31T00:00:00Z"}),
         "Difficulty measurement time is in the future: 9999-12-31T00:00:00Z"),
    ],
    ids=["nan", "nul", "lone-surrogate", "future"],
)  # fmt: skip
def test_bad_difficulty_reports(tmp_path, tables, edit, message):
    from tests.difficulty.example_reports import write_example_difficulty

    make_difficulty_source()
    run_dir = tmp_path / "difficulty-run"
    run_dir.mkdir()
    write_example_difficulty(run_dir=run_dir, atlas_id=DIFFICULTY_ID, source_revision=None)
    report = run_dir / "difficulty.json"
    report.write_text(edit(report.read_text()))
    tables.before()
    with pytest.raises(DifficultyPublicationError) as refused:
        publish_difficulty_run(run_dir=run_dir, atlas_id=DIFFICULTY_ID)
    assert str(refused.value) == message
    with pytest.raises(CommandError) as command:
        call_command("publish_difficulty", "--run-dir", str(run_dir), "--atlas-id", DIFFICULTY_ID)
    assert str(command.value) == message
    tables.assert_unchanged()


def tar_with(members) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        for info, data in members:
            bundle.addfile(info, io.BytesIO(data) if data is not None else None)
    buffer.seek(0)
    return buffer


def member(name: str, data: bytes | None = b"x", kind: bytes = tarfile.REGTYPE, link: str = ""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = len(data) if data is not None and kind == tarfile.REGTYPE else 0
    return info, (data if kind == tarfile.REGTYPE else None)


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([member("../escape.json")], "Publication archive contains an unsafe path: ../escape.json"),
        ([member("/etc/passwd")], "Publication archive contains an unsafe path: /etc/passwd"),
        ([member("link", kind=tarfile.SYMTYPE, link="/etc/passwd")],
         "Publication archive contains an unsafe path: link"),
        ([member("hard", kind=tarfile.LNKTYPE, link="quality-reviews.json")],
         "Publication archive contains an unsafe path: hard"),
        ([member("dev", kind=tarfile.CHRTYPE)], "Publication archive contains an unsafe path: dev"),
        ([member("fifo", kind=tarfile.FIFOTYPE)],
         "Publication archive contains an unsafe path: fifo"),
    ],
    ids=["dotdot", "absolute", "symlink", "hardlink", "device", "fifo"],
)  # fmt: skip
def test_unsafe_archive_members(tmp_path, members, message):
    archive = tmp_path / "run.tar.gz"
    archive.write_bytes(tar_with(members).getvalue())
    with pytest.raises(ArchiveRejected, match=f"^{message}$"):
        extract_archive(archive=archive, name="run.tar.gz", destination=tmp_path / "out")
    assert not (tmp_path / "escape.json").exists()


@pytest.mark.parametrize("kind", ["tar", "zip"])
def test_an_archive_of_too_many_entries_is_refused_before_extraction(tmp_path, settings, kind):
    """300,000 empty files kept a worker busy for minutes: the count is bounded first, and
    nothing is extracted."""
    settings.ATLAS_MAX_ARCHIVE_ENTRIES = 1000
    names = [f"tasks/{n:05d}.json" for n in range(1001)]
    archive = tmp_path / f"run.{'tar.gz' if kind == 'tar' else 'zip'}"
    if kind == "tar":
        archive.write_bytes(tar_with([member(name, b"") for name in names]).getvalue())
    else:
        with zipfile.ZipFile(archive, "w") as bundle:
            for name in names:
                bundle.writestr(name, b"")
    with pytest.raises(
        ArchiveRejected, match=r"^Publication archive holds more than 1000 entries$"
    ):
        extract_archive(archive=archive, name=archive.name, destination=tmp_path / "out")
    assert not (tmp_path / "out").exists()
    # At the limit it is extracted.
    settings.ATLAS_MAX_ARCHIVE_ENTRIES = 1001
    extract_archive(archive=archive, name=archive.name, destination=tmp_path / "out")
    assert len(list((tmp_path / "out" / "tasks").iterdir())) == 1001
