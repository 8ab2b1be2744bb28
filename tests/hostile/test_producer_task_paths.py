"""What a dataset hands the producers — every path a row or manifest names, and every
file of a task folder, stays inside the dataset's folder after links are resolved, and special
files are refused (a link to /dev/zero used to hang make_review).

Each attack is tried on the reader that meets it first; the end-to-end cases check that
make_review refuses before it creates its output folder, within seconds."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.sampling import sample_tasks
from reviews.production.runtime.tasks import read_tasks
from tests.production.conftest import (  # noqa: F401 - the production fixtures
    api_key,
    checkout,
    gsm8k_rows,
    model_server,
    session_checkout,
    write_config,
)
from tests.production.helpers import review_fails

SOURCE = {"source_id": "S:x", "repository": "org/x", "revision": None}
SECONDS = 20


def within_seconds(work) -> BaseException | None:
    """Run ``work`` in a thread; the refusal it raised (a hang fails the test)."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # handed to the test
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(SECONDS)
    assert not thread.is_alive(), "the reader hung"
    return raised[0] if raised else None


def refusal(source: dict, *, n: int = 1) -> str:
    def work() -> None:
        sample_tasks(candidates=read_tasks(source={**SOURCE, **source}), n=n, seed=1)

    raised = within_seconds(work)
    assert isinstance(raised, ReviewProductionError), raised
    return str(raised)


def terminal_row(task_dir) -> dict:
    row = {**gsm8k_rows(1)[0], "env_class": "harbor", "task_dir": task_dir}
    row["extra_info"]["nemotron_ultra"] = {"route": "terminal_bench", "uuid": "tb-1"}
    return row


def prepared(folder: Path, *rows: dict) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return {"tasks_path": str(path), "format": "skyrl_prepared"}


def task_folder(folder: Path) -> Path:
    (folder / "tests").mkdir(parents=True, exist_ok=True)
    (folder / "instruction.md").write_text("Do it.", encoding="utf-8")
    (folder / "task.toml").write_text("", encoding="utf-8")
    (folder / "tests" / "test.sh").write_text("exit 0\n", encoding="utf-8")
    return folder


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder of the reviewer's that no dataset may name (their keys, say)."""
    secret = tmp_path / "home" / ".ssh"
    secret.mkdir(parents=True)
    (secret / "id_ed25519").write_text("PRIVATE KEY\n", encoding="utf-8")
    return secret


# --- a row's task_dir ---


@pytest.mark.parametrize("named", ["absolute", "dotdot", "link"])
def test_a_task_dir_outside_the_dataset_is_refused(tmp_path, outside, named):
    data = tmp_path / "data"
    data.mkdir()
    value = {"absolute": str(outside), "dotdot": "../home/.ssh", "link": "tasks/innocent"}[named]
    if named == "link":
        (data / "tasks").mkdir()
        (data / "tasks" / "innocent").symlink_to(outside)
    message = refusal(prepared(data, terminal_row(value)))
    assert message == (
        f"Prepared row 0: task_dir {json.dumps(value)} resolves outside the dataset's folder {data}"
    )


@pytest.mark.parametrize("value", [7, ["tasks"], {"path": "tasks"}, "tasks/\x00x"])
def test_a_task_dir_that_is_not_a_path_is_refused(tmp_path, value):
    message = refusal(prepared(tmp_path / "data", terminal_row(value)))
    assert message == "Prepared row 0: task_dir must be a path inside the dataset's folder"


def test_a_task_dir_that_is_a_file_or_missing_is_refused(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "plain").write_text("x")
    assert refusal(prepared(data, terminal_row("plain"))) == (
        'Prepared row 0: task_dir "plain" is not a folder'
    )
    assert refusal(prepared(data, terminal_row("gone"))) == (
        f'task "tb-1": task_dir {data / "gone"} does not exist (or is a broken link)'
    )
    # A row the sample does not draw may name a folder this machine lacks.
    assert list(read_tasks(source={**SOURCE, **prepared(data, terminal_row("gone"))}))


@pytest.mark.parametrize("target", ["outside", "/dev/zero", "fifo", "broken"])
def test_a_task_folder_file_that_leaves_the_dataset_or_is_special_is_refused(
    tmp_path, outside, target
):
    data = tmp_path / "data"
    task = task_folder(data / "tasks" / "tb-1")
    planted = task / "tests" / "fixture.txt"
    if target == "outside":
        planted.symlink_to(outside / "id_ed25519")
    elif target == "fifo":
        os.mkfifo(planted)
    elif target == "broken":
        planted.symlink_to(data / "nowhere")
    else:
        planted.symlink_to(target)
    message = refusal(prepared(data, terminal_row("tasks/tb-1")))
    expected = {
        "outside": f"resolves outside the dataset's folder {data}",
        "/dev/zero": "is a special file (a device, pipe or socket), not a regular file",
        "fifo": "is a special file (a device, pipe or socket), not a regular file",
        "broken": "does not exist (or is a broken link)",
    }[target]
    assert message == f'task "tb-1": tests/fixture.txt {expected}'


def test_a_task_folder_linking_a_folder_out_is_refused(tmp_path, outside):
    data = tmp_path / "data"
    task = task_folder(data / "tasks" / "tb-1")
    (task / "environment").symlink_to(outside)
    assert refusal(prepared(data, terminal_row("tasks/tb-1"))) == (
        f'task "tb-1": environment resolves outside the dataset\'s folder {data}'
    )


def test_links_inside_the_dataset_and_loops_are_fine(tmp_path):
    data = tmp_path / "data"
    task = task_folder(data / "tasks" / "tb-1")
    (data / "shared.txt").write_text("shared fixture")
    (task / "tests" / "fixture.txt").symlink_to(data / "shared.txt")
    (task / "tests" / "again").symlink_to(task)  # a loop back up the tree
    sample = sample_tasks(
        candidates=read_tasks(source={**SOURCE, **prepared(data, terminal_row("tasks/tb-1"))}),
        n=1,
        seed=1,
    )
    assert sample.tasks[0].task_dir == str(data / "tasks" / "tb-1")


def test_a_hugging_face_cache_snapshot_may_link_into_its_blobs(tmp_path, outside):
    """The hub cache keeps files in blobs/ and links to them from snapshots/<revision>/."""
    repo = tmp_path / "hub" / "datasets--org--x"
    snapshot = repo / "snapshots" / ("a" * 40)
    task = task_folder(snapshot / "tasks" / "tb-1")
    (repo / "blobs").mkdir(parents=True)
    (repo / "blobs" / "0123abcd").write_text("fixture")
    (task / "tests" / "fixture.txt").symlink_to(repo / "blobs" / "0123abcd")
    source = {**SOURCE, **prepared(snapshot, terminal_row("tasks/tb-1"))}
    assert sample_tasks(candidates=read_tasks(source=source), n=1, seed=1).tasks
    (task / "tests" / "key").symlink_to(outside / "id_ed25519")
    assert "resolves outside the dataset's folder" in refusal(source)


def test_only_sampled_task_folders_are_walked(tmp_path):
    """A broken folder the sample does not draw is never read (and refuses nothing)."""
    data = tmp_path / "data"
    task_folder(data / "tasks" / "good")
    bad = task_folder(data / "tasks" / "bad")
    (bad / "zero").symlink_to("/dev/zero")
    good, broken = terminal_row("tasks/good"), terminal_row("tasks/bad")
    broken["extra_info"]["nemotron_ultra"]["uuid"] = "tb-2"
    source = {**SOURCE, **prepared(data, good, broken)}
    outcomes = set()
    for seed in range(12):
        try:
            sample = sample_tasks(candidates=read_tasks(source=source), n=1, seed=seed)
        except ReviewProductionError as exc:
            assert str(exc).startswith('task "tb-2": zero is a special file')
            outcomes.add("refused")
        else:
            assert [task.id for task in sample.tasks] == ["tb-1"]
            outcomes.add("sampled")
    assert outcomes == {"refused", "sampled"}


# --- the task input itself, manifests and Harbor folders ---


def test_a_task_input_that_is_a_special_file_is_refused(tmp_path):
    (tmp_path / "rows.jsonl").symlink_to("/dev/zero")
    assert refusal({"tasks_path": str(tmp_path / "rows.jsonl"), "format": "skyrl_prepared"}) == (
        f"Task input {tmp_path / 'rows.jsonl'} is a special file (a device, pipe or socket), "
        "not a regular file"
    )


def manifest(folder: Path, **fields) -> dict:
    record = {
        "id": "t1", "route": "custom", "repository": "org/y", "dataset_revision": None,
        "source_id": "S:y", "task_path": "t1", "row_index": 0, "prompt": [], "extras": {},
        "env_id": None, **fields,
    }  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tasks.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    return {"tasks_path": str(folder / "tasks.jsonl"), "format": "task_manifest"}


def test_a_manifests_paths_stay_inside_its_folder(tmp_path, outside):
    folder = tmp_path / "m"
    message = refusal(manifest(folder, task_dir=str(outside)))
    assert message == (
        f"Task manifest record 0: task_dir {json.dumps(str(outside))} resolves outside the "
        f"dataset's folder {folder}"
    )
    packed = {"dataset_path": "../home/.ssh/id_ed25519", "key": "t1"}
    assert refusal(manifest(folder, packed_task=packed)) == (
        'Task manifest record 0: packed_task.dataset_path "../home/.ssh/id_ed25519" resolves '
        f"outside the dataset's folder {folder}"
    )
    (folder / "packed.jsonl").symlink_to("/dev/zero")
    packed = {"dataset_path": "packed.jsonl", "key": "t1"}
    assert refusal(manifest(folder, packed_task=packed)) == (
        'Task manifest record 0: packed_task.dataset_path "packed.jsonl" is a special file '
        "(a device, pipe or socket), not a regular file"
    )


def test_a_harbor_directory_keeps_its_tasks_inside(tmp_path, outside):
    tasks = tmp_path / "set"
    task_folder(tasks / "a-task")
    task_folder(outside / "stolen")
    (tasks / "b-task").symlink_to(outside / "stolen")
    source = {"tasks_path": str(tasks), "format": "harbor_directory"}
    assert refusal(source) == (
        f"Harbor task b-task: instruction.md resolves outside the dataset's folder {tasks}"
    )
    (tasks / "b-task").unlink()
    zero = task_folder(tasks / "z-task")
    (zero / "instruction.md").unlink()
    (zero / "instruction.md").symlink_to("/dev/zero")
    assert refusal(source) == (
        "Harbor task z-task: instruction.md is a special file (a device, pipe or socket), not a "
        "regular file"
    )


# --- make_review end to end ---


def test_make_review_refuses_a_hostile_task_dir_before_any_work(request, tmp_path, outside):
    writer = request.getfixturevalue("write_config")
    data = tmp_path / "hostile"
    task = task_folder(data / "tasks" / "tb-1")
    (task / "tests" / "zero").symlink_to("/dev/zero")
    rows = data / "rows.jsonl"
    rows.write_text(json.dumps(terminal_row("tasks/tb-1")) + "\n", encoding="utf-8")
    config = writer(tasks_path=rows)
    output = tmp_path / "run"
    raised = within_seconds(
        lambda: review_fails("--config", str(config), "--n", "1", "--output", str(output))
    )
    assert raised is None  # review_fails returned: make_review refused
    message = review_fails("--config", str(config), "--n", "1", "--output", str(output))
    assert message == (
        'task "tb-1": tests/zero is a special file (a device, pipe or socket), not a regular file'
    )
    assert not output.exists()


def test_a_saved_task_record_cannot_set_its_own_confinement(tmp_path):
    """A record read back from a saved run (a downloaded one, say) names the record's fields
    only: the confinement is set by the dataset's reader, never by the record."""
    from reviews.production.curation.execution import replay_task
    from reviews.production.curation.saved_runs import SavedAttempt
    from reviews.production.runtime.tasks import Confinement, Task

    task = Task(
        id="t", route="skyrl_gym", repository="r", dataset_revision=None, source_id="s",
        task_path="t", row_index=0, prompt=[], extras={}, env_id=None,
        confinement=Confinement.of(tmp_path),
    )  # fmt: skip
    record = task.record()
    assert "confinement" not in record and Task(**record) == task
    saved = {**record, "confinement": {"folder": "/", "roots": ["/"]}}
    attempt = SavedAttempt(
        run_dir=tmp_path, task_folder="tasks/0000", execution_path="tasks/0000/execution-000",
        task=saved, model={}, config={}, attempt={}, responses=(),
    )  # fmt: skip
    replayed = replay_task(attempt)
    assert replayed == task and replayed.confinement is None
