"""prepare_tasks: a Task Trove source's catalog row and a local snapshot of its pinned Parquet
become task_manifest records of packed Harbor tasks that make_review reads and the Harbor
worker's materialiser unpacks."""

from __future__ import annotations

import hashlib
import json
import sys
from io import StringIO
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reviews.production.make_review.prepare_tasks import TaskPreparationError, prepare_tasks
from reviews.production.runtime.tasks import read_tasks
from tests.atlas.test_count_inputs import OTHER, REV, write_metadata
from tests.production.harbor_standin import harbor_task_files, task_archive, tasktrove_dataset

SOURCE = "DCAgent2__nl2bash-tasks-cleaned-oracle-v2"
FILE = f"{SOURCE}/tasks.parquet"
WORKERS = Path(__file__).resolve().parents[2] / "reviews" / "production" / "workers"


def catalog_row(**changes) -> dict:
    """The source's row as /api/sources/<id>/ and dist/catalog.json give it (what is read)."""
    return {
        "id": f"Task Trove:{SOURCE}",
        "origin": "Task Trove",
        "dataset_id": "open-thoughts/TaskTrove",
        "dataset_revision": REV,
        "pipeline": {"files": [FILE], "name": "tasktrove-nl2bash", "revision": REV},
        "verifier_name": "Harbor",
        "verifier_revision": "fb1e75441a94b8bb0ced08acd6b59e711704d70a",
        "verifier_url": "",
        **changes,
    }


def snapshot_with(root: Path, rows: list[dict], *, revision: str = REV) -> Path:
    tasktrove_dataset(root / FILE, rows)
    write_metadata(root, FILE, revision)
    return root


def task_row(source: str, path: str, expected: str = "7") -> dict:
    files = {k: v for k, v in harbor_task_files(expected=expected).items()}
    return {"source": source, "path": path, "task_binary": task_archive(files),
            "dockerfile_id": f"d-{path}", "mode": "script"}  # fmt: skip


@pytest.fixture
def snapshot(tmp_path) -> Path:
    return snapshot_with(tmp_path / "TaskTrove", [
        task_row("other-source", "tasks/o1"),
        task_row(SOURCE, "tasks/a"),
        task_row("other-source", "tasks/o2"),
        task_row(SOURCE, "tasks/b", expected="9"),
    ])  # fmt: skip


def prepare(tmp_path: Path, snapshot: Path, row: dict | None = None, *extra: str) -> str:
    saved = tmp_path / "row.json"
    saved.write_text(json.dumps(row or catalog_row()))
    out = StringIO()
    call_command("prepare_tasks", "--atlas-id", f"Task Trove:{SOURCE}", "--atlas-row",
                 str(saved), "--snapshot", str(snapshot), "--output", str(tmp_path / "prepared"),
                 *extra, stdout=out)  # fmt: skip
    return out.getvalue()


def test_the_source_rows_become_packed_task_references(tmp_path, snapshot):
    printed = prepare(tmp_path, snapshot)
    output = tmp_path / "prepared"
    assert f"Prepared 2 task(s) of Task Trove:{SOURCE} in {output / 'tasks.jsonl'}" in printed
    records = [json.loads(line) for line in (output / "tasks.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["tasks/a", "tasks/b"]
    first = records[0]
    assert first["packed_task"] == {
        "dataset_path": FILE,
        "dataset_uri": f"hf://datasets/open-thoughts/TaskTrove@{REV}/{FILE}",
        "dataset_identity": f"open-thoughts/TaskTrove@{REV}",
        "verifier_ref": "Harbor@fb1e75441a94b8bb0ced08acd6b59e711704d70a",
        "row_group": 0, "row": 1, "source": SOURCE, "path": "tasks/a",
        "dockerfile_id": "d-tasks/a", "mode": "script",
    }  # fmt: skip
    assert records[1]["packed_task"]["row_group"] == 1 and records[1]["packed_task"]["row"] == 1
    assert (first["route"], first["source_id"], first["dataset_revision"]) == (
        "harbor",
        f"Task Trove:{SOURCE}",
        REV,
    )
    # The dataset is beside the manifest, byte for byte.
    copied = output / FILE
    assert copied.read_bytes() == (snapshot / FILE).read_bytes()
    summary = json.loads((output / "prepared-tasks.json").read_text())
    assert summary["files"] == {FILE: hashlib.sha256(copied.read_bytes()).hexdigest()}
    assert summary["count"] == 2 and summary["distinct_environment_count"] == 2
    assert summary["source"]["format"] == "task_manifest"
    # make_review reads the records as they are, each packed dataset inside the manifest's folder.
    tasks = list(read_tasks(source=summary["source"]))
    assert [t.packed_task["dataset_path"] for t in tasks] == [str(copied)] * 2
    # And the Harbor worker's materialiser unpacks the row each one names.
    sys.path.insert(0, str(WORKERS))
    try:
        import packed_task_cache
    finally:
        sys.path.remove(str(WORKERS))
    folder, _ = packed_task_cache.materialize(packed=tasks[1].packed_task,
                                              execution_dir=tmp_path / "execution-000")  # fmt: skip
    assert '"#### 9"' in (folder / "tests/test.sh").read_text()


def test_a_snapshot_at_another_revision_is_refused(tmp_path):
    stale = snapshot_with(tmp_path / "TaskTrove", [task_row(SOURCE, "tasks/a")], revision=OTHER)
    with pytest.raises(CommandError, match=f"{FILE}: expected revision {REV}, found {OTHER}"):
        prepare(tmp_path, stale)
    assert not (tmp_path / "prepared").exists()


def test_a_source_the_parquet_does_not_hold_is_refused(tmp_path):
    snapshot = snapshot_with(tmp_path / "TaskTrove", [task_row("other-source", "tasks/o1")])
    with pytest.raises(CommandError, match=f"holds no task of {SOURCE} at revision {REV}"):
        prepare(tmp_path, snapshot)
    assert not (tmp_path / "prepared").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["TaskTrove", "row.json"]  # no staging


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (catalog_row(dataset_revision=None), "pins no dataset revision"),
        (catalog_row(pipeline=None), "names 0 files; pass --files"),
        (catalog_row(id="MarinSkyRL:gsm8k"), "is not the row of"),
    ],
    ids=["unpinned", "no file", "another source"],
)
def test_rows_that_cannot_be_prepared_are_refused(tmp_path, snapshot, row, message):
    with pytest.raises(CommandError, match=message):
        prepare(tmp_path, snapshot, row)
    assert not (tmp_path / "prepared").exists()


def test_a_parquet_without_tasktroves_columns_is_refused(tmp_path):
    root = tmp_path / "TaskTrove"
    (root / FILE).parent.mkdir(parents=True)
    pq.write_table(pa.table({"source": [SOURCE], "path": ["tasks/a"], "mode": ["x"],
                             "dockerfile_id": ["d"], "tags": [["t"]],
                             "task_binary": ["not bytes"]}), root / FILE)  # fmt: skip
    write_metadata(root, FILE, REV)
    with pytest.raises(CommandError, match="column 'task_binary' must have type binary"):
        prepare(tmp_path, root)


def test_only_task_trove_sources_are_prepared(tmp_path, snapshot):
    with pytest.raises(TaskPreparationError, match="Only Task Trove sources are prepared"):
        prepare_tasks(row=catalog_row(id="MarinSkyRL:gsm8k"), snapshot=snapshot,
                      output=tmp_path / "prepared")  # fmt: skip
