"""Safe extraction of uploaded archives: path attacks, links, devices and size limits."""

import io
import stat
import tarfile
import zipfile

import pytest

from reviews.services.archives import ArchiveRejected, ArchiveTooLarge, extract_archive


def tar_gz(path, members):
    """members: (TarInfo, bytes | None) pairs."""
    with tarfile.open(path, mode="w:gz") as bundle:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            bundle.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def file_member(name, data=b"{}\n"):
    return tarfile.TarInfo(name), data


def special_member(name, kind, **fields):
    info = tarfile.TarInfo(name)
    info.type = kind
    for key, value in fields.items():
        setattr(info, key, value)
    return info, None


def extract(tmp_path, archive, name=None):
    return extract_archive(archive=archive, name=name or archive.name, destination=tmp_path / "out")


def test_extracts_a_run_directory(tmp_path):
    archive = tar_gz(
        tmp_path / "run.tar.gz",
        [file_member("quality-reviews.json"), file_member("tasks/0000/execution-000/attempt.json")],
    )
    root = extract(tmp_path, archive)
    assert (root / "quality-reviews.json").read_bytes() == b"{}\n"
    assert (root / "tasks/0000/execution-000/attempt.json").is_file()


def test_single_top_level_folder_is_the_run_directory(tmp_path):
    archive = tar_gz(tmp_path / "run.tar.gz", [file_member("my-run/quality-reviews.json")])
    assert extract(tmp_path, archive) == tmp_path / "out" / "my-run"


@pytest.mark.parametrize(
    "member",
    [
        file_member("/etc/cron.d/evil"),
        file_member("../evil.json"),
        file_member("tasks/../../evil.json"),
        special_member("link.json", tarfile.SYMTYPE, linkname="/etc/passwd"),
        special_member("hard.json", tarfile.LNKTYPE, linkname="quality-reviews.json"),
        special_member("dev/null", tarfile.CHRTYPE, devmajor=1, devminor=3),
        special_member("dev/sda", tarfile.BLKTYPE, devmajor=8, devminor=0),
        special_member("fifo", tarfile.FIFOTYPE),
    ],
    ids=[
        "absolute",
        "dotdot",
        "nested-dotdot",
        "symlink",
        "hardlink",
        "chardev",
        "blockdev",
        "fifo",
    ],
)
def test_tar_unsafe_entries_are_refused_before_anything_is_written(tmp_path, member):
    archive = tar_gz(tmp_path / "run.tar.gz", [file_member("quality-reviews.json"), member])
    with pytest.raises(ArchiveRejected) as refused:
        extract(tmp_path, archive)
    assert str(refused.value) == f"Publication archive contains an unsafe path: {member[0].name}"
    assert not (tmp_path / "out").exists()
    assert not (tmp_path.parent / "evil.json").exists()


def zip_archive(path, entries):
    with zipfile.ZipFile(path, "w") as bundle:
        for info, data in entries:
            bundle.writestr(info, data)
    return path


def zip_entry(name, mode=None):
    info = zipfile.ZipInfo(name)
    if mode is not None:
        info.external_attr = mode << 16
    return info


@pytest.mark.parametrize(
    ("entry", "data"),
    [
        (zip_entry("/abs.json"), b"{}"),
        (zip_entry("../up.json"), b"{}"),
        (zip_entry("link.json", stat.S_IFLNK | 0o777), b"/etc/passwd"),
        (zip_entry("dev", stat.S_IFCHR | 0o600), b""),
        (zip_entry("C:/windows.json"), b"{}"),
    ],
    ids=["absolute", "dotdot", "symlink", "device", "drive"],
)
def test_zip_unsafe_entries_are_refused(tmp_path, entry, data):
    archive = zip_archive(
        tmp_path / "run.zip", [(zip_entry("quality-reviews.json"), b"{}"), (entry, data)]
    )
    with pytest.raises(ArchiveRejected) as refused:
        extract(tmp_path, archive)
    assert str(refused.value) == f"Publication archive contains an unsafe path: {entry.filename}"
    assert not (tmp_path / "out").exists()


def test_zip_extracts(tmp_path):
    archive = zip_archive(
        tmp_path / "run.zip",
        [
            (zip_entry("quality-reviews.json", stat.S_IFREG | 0o644), b"{}"),
            (zip_entry("notes/"), b""),
        ],
    )
    root = extract(tmp_path, archive)
    assert (root / "quality-reviews.json").read_bytes() == b"{}"


def test_oversized_archive_is_refused(tmp_path, settings):
    settings.ATLAS_MAX_PUBLICATION_BYTES = 100
    archive = tar_gz(tmp_path / "run.tar.gz", [file_member("quality-reviews.json", b"x" * 5000)])
    with pytest.raises(ArchiveTooLarge):
        extract(tmp_path, archive)


def test_decompression_bomb_is_refused(tmp_path, settings):
    settings.ATLAS_MAX_EXTRACTED_BYTES = 10_000
    archive = tar_gz(tmp_path / "run.tar.gz", [file_member("quality-reviews.json", b"\0" * 50_000)])
    assert archive.stat().st_size < 1_000
    with pytest.raises(ArchiveTooLarge):
        extract(tmp_path, archive)


def test_lying_size_headers_are_stopped_while_writing(tmp_path, settings, monkeypatch):
    settings.ATLAS_MAX_EXTRACTED_BYTES = 10_000
    # As if the declared sizes were forged: only the bytes actually written can stop it.
    monkeypatch.setattr("reviews.services.archives._check_total", lambda entries, budget: None)
    archive = tmp_path / "run.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("quality-reviews.json", b"\0" * 50_000)
    with pytest.raises(ArchiveTooLarge):
        extract(tmp_path, archive)
    written = tmp_path / "out" / "quality-reviews.json"
    assert written.stat().st_size <= 10_000


@pytest.mark.parametrize("name", ["run.tar", "run.rar", "run"])
def test_unknown_archive_format(tmp_path, name):
    archive = tmp_path / name
    archive.write_bytes(b"data")
    with pytest.raises(ArchiveRejected, match=r"must be a \.tar\.gz or \.zip"):
        extract(tmp_path, archive)


def test_corrupt_archive(tmp_path):
    archive = tmp_path / "run.tar.gz"
    archive.write_bytes(b"not gzip at all")
    with pytest.raises(ArchiveRejected, match="not a readable"):
        extract(tmp_path, archive)


def test_expansion_is_bounded_by_a_ratio_of_the_upload(tmp_path, settings):
    """A 20 MB file of zeros compresses to kilobytes; it may not expand beyond 100× the upload."""
    settings.ATLAS_MAX_EXPANSION_RATIO = 100
    archive = tmp_path / "run.tar.gz"
    data = b"\0" * (20 * 2**20)
    with tarfile.open(archive, "w:gz") as bundle:
        info = tarfile.TarInfo("tasks/0000/execution-000/verifier.stdout")
        info.size = len(data)
        bundle.addfile(info, io.BytesIO(data))
    uploaded = archive.stat().st_size
    assert uploaded * 100 < len(data)
    with pytest.raises(ArchiveTooLarge, match=f"expands beyond {uploaded * 100} bytes"):
        extract(tmp_path, archive)
    assert not (tmp_path / "out" / "tasks").exists()  # refused before anything was written


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-30],  # truncated central directory
        lambda data: data.replace(b"PK\x03\x04", b"PK\x03\x05", 1),  # broken local header
        lambda data: data[:40] + b"\xff" * 40 + data[80:],  # corrupt deflate stream
    ],
    ids=["truncated", "bad-header", "bad-deflate"],
)
def test_a_corrupt_zip_says_what_is_wrong_without_server_paths(tmp_path, damage):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("quality-reviews.json", "{" + '"x": 1,' * 2000 + '"y": 2}')
    archive = tmp_path / "run.zip"
    archive.write_bytes(damage(buffer.getvalue()))
    with pytest.raises(ArchiveRejected) as refused:
        extract(tmp_path, archive)
    message = str(refused.value)
    assert message.startswith("Publication archive is not a readable .zip: ")
    assert len(message) > len("Publication archive is not a readable .zip: ") + 3
    assert str(tmp_path) not in message and "/tmp" not in message
