"""Harbor as the reference runs it: packed tasks in MarinSkyRL's reference format
unpacked for real, offline Terminus tooling verified and installed for real (a real ``.deb``,
real ``dpkg``, into a private root), and the route run through the real Harbor worker with a
stand-in trial (no container provider here)."""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import shutil
import subprocess
import sys
import tarfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.production.conftest import REPOSITORY, SOURCE_ID
from tests.production.harbor_standin import (
    add_native_materializer,
    build_harbor,
    harbor_task_files,
    reference,
    task_archive,
    tasktrove_dataset,
)
from tests.production.helpers import load, make_review

WORKERS = Path(__file__).resolve().parents[2] / "reviews" / "production" / "workers"


@pytest.fixture(scope="module")
def modules():
    sys.path.insert(0, str(WORKERS))
    try:
        yield (
            importlib.import_module("packed_task_cache"),
            importlib.import_module("offline_tooling"),
        )
    finally:
        sys.path.remove(str(WORKERS))


def dataset_with(tmp_path: Path, *archives: bytes) -> Path:
    rows = [
        {"source": "terminal-bench", "path": f"tasks/t{index}", "task_binary": blob}
        for index, blob in enumerate(archives)
    ]
    return tasktrove_dataset(tmp_path / "data" / "tasktrove.parquet", rows)


def test_a_packed_task_reference_is_unpacked_into_the_cache(modules, tmp_path):
    packed, _ = modules
    files = harbor_task_files(expected="7")
    other = {**files, "instruction.md": "Another task.\n"}
    dataset = dataset_with(tmp_path, task_archive(other), task_archive(other, gzip=False),
                           task_archive(files))  # fmt: skip
    ref = reference(dataset, row_group=1, row=0, source="terminal-bench", path="tasks/t2")
    execution = tmp_path / "execution-000"
    target, materializer = packed.materialize(packed=ref, execution_dir=execution)
    identity = hashlib.sha256(b"example/tasktrove@0123abcd").hexdigest()[:16]
    task = hashlib.sha256(b"terminal-bench\0tasks/t2").hexdigest()[:20]
    assert materializer == "project"
    assert target == execution / "packed-task-cache" / "tasks" / identity / task
    assert (target / "instruction.md").read_text() == files["instruction.md"]
    assert (target / "tests/test.sh").stat().st_mode & 0o777 == 0o755
    assert (target / ".marinskyrl-complete").is_file()
    # An uncompressed tar in row group 0 is read too.
    plain = reference(dataset, row_group=0, row=1, source="terminal-bench", path="tasks/t1")
    second, _ = packed.materialize(packed=plain, execution_dir=execution)
    assert (second / "instruction.md").read_text() == "Another task.\n"
    # A complete task in the cache is not unpacked again.
    (target / "instruction.md").write_text("kept")
    assert packed.materialize(packed=ref, execution_dir=execution)[0] == target
    assert (target / "instruction.md").read_text() == "kept"


def link(name: str) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type, member.linkname = tarfile.SYMTYPE, "/etc/passwd"
    return member


@pytest.mark.parametrize(
    ("archive", "message"),
    [
        (task_archive({**harbor_task_files(expected="1"), "../escape": "x"}), "Unsafe"),
        (task_archive({**harbor_task_files(expected="1"), "solution/solve.sh": "x"}),
         "contains a solution"),
        (task_archive(harbor_task_files(expected="1"), extra=link("data")), "link"),
        (task_archive({"instruction.md": "x", "task.toml": ""}), "lacks environment/Dockerfile"),
    ],
    ids=["escaping path", "solution", "link", "incomplete"],
)  # fmt: skip
def test_an_unsafe_or_incomplete_archive_is_refused(modules, tmp_path, archive, message):
    packed, _ = modules
    dataset = dataset_with(tmp_path, archive)
    ref = reference(dataset, row_group=0, row=0, source="terminal-bench", path="tasks/t0")
    with pytest.raises(packed.PackedTaskError, match=message):
        packed.materialize(packed=ref, execution_dir=tmp_path / "execution-000")
    assert not list((tmp_path / "execution-000").rglob("instruction.md"))


def test_a_reference_must_name_its_row(modules, tmp_path):
    packed, _ = modules
    dataset = dataset_with(tmp_path, task_archive(harbor_task_files(expected="1")))
    moved = reference(dataset, row_group=0, row=0, source="terminal-bench", path="tasks/other")
    with pytest.raises(packed.PackedTaskError, match="identity changed at row group 0, row 0"):
        packed.materialize(packed=moved, execution_dir=tmp_path / "e")
    beyond = reference(dataset, row_group=3, row=0, source="terminal-bench", path="tasks/t0")
    with pytest.raises(packed.PackedTaskError, match="row group 3 is not in the dataset"):
        packed.materialize(packed=beyond, execution_dir=tmp_path / "e")
    partial = {k: v for k, v in moved.items() if k not in ("row", "mode")}
    with pytest.raises(packed.PackedTaskError, match="lacks row, mode"):
        packed.materialize(packed=partial, execution_dir=tmp_path / "e")


# --- offline Terminus tooling ---


@dataclass
class ExecResult:
    return_code: int
    stdout: str
    stderr: str


class LocalEnvironment:
    """Harbor's environment interface (``exec``, ``upload_file``) on this machine, for the
    tooling's real install: dpkg runs against a private root, never the machine's own."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.commands: list[str] = []

    async def exec(self, command: str, user: str, timeout_sec: int) -> ExecResult:
        self.commands.append(command)
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                              timeout=timeout_sec)  # fmt: skip
        return ExecResult(done.returncode, done.stdout, done.stderr)

    async def upload_file(self, source: Path, target: str) -> None:
        shutil.copyfile(source, target)


def build_deb(folder: Path, *, version: str = "3.4") -> Path:
    package = folder / "build"
    (package / "DEBIAN").mkdir(parents=True)
    (package / "usr/bin").mkdir(parents=True)
    (package / "DEBIAN/control").write_text(
        f"Package: atlas-tmux\nVersion: {version}\nArchitecture: all\n"
        "Maintainer: Atlas Tests <tests@example.invalid>\nDescription: tmux for tests\n"
    )
    tmux = package / "usr/bin/tmux"
    tmux.write_text(f'#!/bin/sh\necho "tmux {version}"\n')
    tmux.chmod(0o755)
    deb = folder / "atlas-tmux_3.4_all.deb"
    subprocess.run(["dpkg-deb", "--build", "-Zgzip", str(package), str(deb)], check=True,
                   capture_output=True)  # fmt: skip
    shutil.rmtree(package)
    return deb


def write_manifest(folder: Path, packages: list[dict]) -> tuple[Path, str]:
    manifest = folder / "packages.json"
    manifest.write_text(json.dumps(packages))
    return manifest, hashlib.sha256(manifest.read_bytes()).hexdigest()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def private_dpkg(root: Path) -> str:
    for folder in ("var/lib/dpkg/updates", "var/lib/dpkg/info"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "var/lib/dpkg/status").touch()
    return (f"dpkg --admindir={root}/var/lib/dpkg --instdir={root} --force-not-root "
            "--force-script-chrootless -i")  # fmt: skip


def provision(tooling, tmp_path: Path, manifest: Path, digest: str, **kwargs):
    root = tmp_path / "environment"
    environment = LocalEnvironment(root)
    (tmp_path / "uploads").mkdir(exist_ok=True)
    run = tooling.provision(
        environment=environment, manifest=manifest, manifest_sha256=digest,
        logs_dir=tmp_path / "agent", package_dir=str(tmp_path / "uploads"),
        install=kwargs.pop("install", private_dpkg(root)), check=f"{root}/usr/bin/tmux -V",
    )  # fmt: skip
    # The suite's browser tests keep a Playwright session whose event loop runs on this thread;
    # the coroutine gets a loop of its own on another thread, as in Harbor's own process.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, run).result()


@pytest.mark.slow
def test_offline_tooling_verifies_installs_and_records(modules, tmp_path):
    _, tooling = modules
    packages_dir = tmp_path / "packages"
    packages_dir.mkdir()
    deb = build_deb(packages_dir)
    packages = [{"filename": deb.name, "sha256": sha256(deb), "package": "atlas-tmux"}]
    manifest, digest = write_manifest(packages_dir, packages)
    record = provision(tooling, tmp_path, manifest, digest)
    written = load(tmp_path / "agent/offline-tooling.json")
    assert written == record and set(written) == {"packages", "return_code", "stdout", "stderr"}
    assert written["packages"] == packages and written["return_code"] == 0
    assert "Setting up atlas-tmux (3.4)" in written["stdout"]
    assert written["stdout"].rstrip().endswith("tmux 3.4")
    assert (tmp_path / "environment/usr/bin/tmux").is_file()
    assert (tmp_path / "uploads" / deb.name).read_bytes() == deb.read_bytes()


@pytest.mark.slow
def test_a_failed_install_is_recorded_and_an_error(modules, tmp_path):
    _, tooling = modules
    packages_dir = tmp_path / "packages"
    packages_dir.mkdir()
    broken = packages_dir / "broken_1_all.deb"
    broken.write_bytes(b"not a debian archive")  # its hash is pinned: dpkg itself refuses it
    manifest, digest = write_manifest(packages_dir, [{"filename": broken.name,
                                                      "sha256": sha256(broken)}])  # fmt: skip
    with pytest.raises(RuntimeError, match=r"inspect agent/offline-tooling\.json"):
        provision(tooling, tmp_path, manifest, digest)
    written = load(tmp_path / "agent/offline-tooling.json")
    assert written["return_code"] != 0 and "dpkg" in written["stderr"]


def test_pinned_hashes_are_checked_before_anything_is_installed(modules, tmp_path):
    _, tooling = modules
    deb = tmp_path / "tool_1_all.deb"
    deb.write_bytes(b"package")
    good = {"filename": deb.name, "sha256": sha256(deb)}
    cases = [
        ([good], "0" * 64, "manifest checksum mismatch"),
        ([], None, "Provide the Debian packages"),
        ([{**good, "sha256": "0" * 64}], None, f"package checksum mismatch: {deb.name}"),
        ([{**good, "filename": "../tool_1_all.deb"}], None, "must be .deb filenames"),
        ([{**good, "filename": "tool.tar"}], None, "must be .deb filenames"),
    ]
    for packages, pinned, message in cases:
        manifest, digest = write_manifest(tmp_path, packages)
        with pytest.raises(tooling.OfflineToolingError, match=message):
            provision(tooling, tmp_path, manifest, pinned or digest, install="false")
        assert not (tmp_path / "agent/offline-tooling.json").exists()
        assert not (tmp_path / "uploads" / deb.name).exists()


# --- the Harbor route through the real worker and a stand-in trial ---


@pytest.mark.slow
@pytest.mark.parametrize("materializer", ["project", "marinskyrl"])
def test_a_packed_harbor_task_runs_through_the_harbor_worker(
    tmp_path, write_config, model_server, checkout, materializer
):
    if materializer == "marinskyrl":
        add_native_materializer(checkout)  # the checkout's own materialiser is preferred
    harbor = build_harbor(tmp_path / "harbor")
    folder = tmp_path / "manifest"
    dataset = tasktrove_dataset(folder / "tasktrove.parquet", [
        {"source": "terminal-bench", "path": "tasks/add", "task_binary": task_archive(
            harbor_task_files(expected="7"))},
    ])  # fmt: skip
    record = {
        "id": "add", "route": "harbor", "repository": REPOSITORY, "dataset_revision": None,
        "source_id": SOURCE_ID, "task_path": "tasks/add", "row_index": 0,
        "prompt": [], "extras": {}, "env_id": None,
        "packed_task": reference(Path("tasktrove.parquet"), row_group=0, row=0,
                                 source="terminal-bench", path="tasks/add"),
    }  # fmt: skip
    manifest = folder / "tasks.jsonl"
    manifest.write_text(json.dumps(record) + "\n")
    config = write_config(
        source={"format": "task_manifest", "tasks_path": str(manifest), "revision": None},
        runtime={"harbor_checkout": str(harbor), "harbor_python": sys.executable,
                 "harbor_agent": {"name": "terminus-2"}},
    )  # fmt: skip
    output = tmp_path / "run"
    make_review("--config", str(config), "--n", "1", "--output", str(output))
    execution = output / "tasks/0000/execution-000"
    attempt = load(output / "tasks/0000/attempt.json")
    assert attempt["verification"]["status"] == "verified"
    assert attempt["verification"]["score"] == 1.0 and attempt["verifier_executed"] is True
    layout = "tasks/*/*" if materializer == "project" else "marinskyrl/tasks/add"
    cached = list((execution / "packed-task-cache").glob(f"{layout}/instruction.md"))
    assert len(cached) == 1
    events = [json.loads(line) for line in (execution / "verifier-trace.jsonl").open()]
    assert events[0]["event"] == "packed_task" and events[0]["materializer"] == materializer
    start = next(event for event in events if event["event"] == "trial_start")
    assert start["task_path"] == str(cached[0].parent)
    assert attempt["agent_options_dropped"] == ["enable_episode_logging", "trajectory_dump_cadence"]
    index = {entry["module"] for entry in load(execution / "native-code-index.json")}
    assert "harbor.verifier.runner" in index
    assert load(output / "run.json")["packed_input_files"] == {
        str(dataset): hashlib.sha256(dataset.read_bytes()).hexdigest()
    }
