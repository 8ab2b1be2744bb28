"""make_review on a native Harbor task directory, its attempts real trials with a Harbor from
the package registry, three judges from the tests' model server, then publish_review → rating."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from atlas.models import Source
from atlas.services.sync import sync_catalog
from tests.atlas.test_count_inputs import write_metadata
from tests.harbor.conftest import REVISION, SOURCE_ID
from tests.harbor.tasks import task_files
from tests.production.harbor_standin import task_archive, tasktrove_dataset
from tests.production.helpers import load, make_review, review_fails

pytestmark = [pytest.mark.harbor, pytest.mark.slow]

PARQUET = "tasks/part-00000.parquet"


@pytest.mark.django_db
def test_the_oracle_run_is_verified_and_published_as_a_rating(
    tmp_path, review_config, packaged_catalog
):
    output = tmp_path / "run-oracle"
    stdout, _ = make_review("--config", str(review_config("oracle")), "--n", "1",
                            "--output", str(output))  # fmt: skip
    assert stdout.strip() == f"Saved 6 reviews to {output}/quality-reviews.json"
    attempt = load(output / "tasks/0000/attempt.json")
    assert attempt["verification"]["status"] == "verified"
    assert attempt["verification"]["passed"] is True and attempt["verifier_executed"] is True
    execution = output / attempt["execution_path"]
    assert (execution / "task" / "tests" / "test.sh").is_file()  # the task as it ran
    (trial,) = execution.glob("review-*")
    assert (trial / "verifier" / "reward.txt").read_text().strip() == "1"
    # The Harbor from the registry, named by package and files, never by a made-up commit.
    run = load(output / "run.json")
    assert run["harbor"]["source"] == "package" and run["harbor"]["version"] == "0.25.0"
    assert "commit" not in run["harbor"]
    collection = load(output / "quality-reviews.json")
    assert collection["execution_provenance"]["harbor_commit"] is None
    runtime = next(r for r in collection["reviews"] if r["id"].endswith("/runtime"))
    assert runtime["summary"].startswith("Native harbor verification: verified.")
    assert {e["snapshot_path"] for e in runtime["evidence"]} >= {
        "tasks/0000/attempt.json",
        f"{attempt['execution_path']}/harbor-result.json",
    }
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    out = json.loads(_publish(output))
    assert out["kind"] == "rating" and out["quality"] == "good"
    source = Source.objects.get(id=SOURCE_ID)
    assert (source.effective_quality, source.review_id) == ("good", out["review_id"])


def _publish(output) -> str:
    stdout = StringIO()
    call_command("publish_review", "--run-dir", str(output), "--atlas-id", SOURCE_ID,
                 stdout=stdout)  # fmt: skip
    return stdout.getvalue()


def test_the_nop_run_fails_its_attempt(tmp_path, review_config):
    output = tmp_path / "run-nop"
    make_review("--config", str(review_config("nop")), "--n", "1", "--output", str(output))
    attempt = load(output / "tasks/0000/attempt.json")
    assert attempt["verification"]["status"] == "verified"
    assert attempt["verification"]["score"] == 0.0 and attempt["verification"]["passed"] is False


@pytest.mark.django_db
def test_prepare_tasks_make_review_publish_review_are_three_commands(
    tmp_path, machinery, review_config, packaged_catalog, packaged_rows
):
    # The release as Task Trove packs it; the task's Dockerfile bakes the answer in, so the
    # model-free nop agent passes only if the packed task was built and its tests ran.
    files = task_files(image=machinery.images["tiny"], solution=None,
                       dockerfile_lines=("RUN echo 7 > /app/answer.txt",))  # fmt: skip
    name = SOURCE_ID.removeprefix("Task Trove:")
    snapshot = tmp_path / "task-trove"
    tasktrove_dataset(snapshot / PARQUET, [
        {"source": "another-release", "path": "tasks/x", "task_binary": task_archive(files)},
        {"source": name, "path": "tasks/add", "task_binary": task_archive(files)},
    ])  # fmt: skip
    write_metadata(snapshot, PARQUET, REVISION)
    row = tmp_path / "row.json"
    row.write_text(json.dumps(next(r for r in packaged_rows if r["id"] == SOURCE_ID)))
    call_command("prepare_tasks", "--atlas-id", SOURCE_ID, "--atlas-row", str(row),
                 "--snapshot", str(snapshot), "--files", PARQUET,
                 "--output", str(tmp_path / "prepared"), stdout=StringIO())  # fmt: skip
    source = load(tmp_path / "prepared" / "prepared-tasks.json")["source"]
    output = tmp_path / "run"
    make_review("--config", str(review_config("nop", source)), "--n", "1",
                "--output", str(output))  # fmt: skip
    attempt = load(output / "tasks/0000/attempt.json")
    assert attempt["verification"]["passed"] is True, attempt
    assert load(output / "run.json")["tasks"][0]["packed_task"]["path"] == "tasks/add"
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    assert json.loads(_publish(output))["kind"] == "rating"
    assert Source.objects.get(id=SOURCE_ID).review_source_revision == REVISION


def test_an_engine_that_is_down_leaves_the_run_resumable(
    tmp_path, review_config, machinery, monkeypatch
):
    config, output = review_config("oracle"), tmp_path / "run"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    message = review_fails("--config", str(config), "--n", "1", "--output", str(output))
    assert message.startswith(f"Container engine unavailable (unix://{tmp_path}/no-engine.sock: ")
    assert message.endswith("is not a finished attempt. Resume retries this unfinished task.")
    assert not (output / "tasks/0000/attempt.json").exists()
    monkeypatch.setenv("DOCKER_HOST", machinery.docker_host)
    make_review("--config", str(config), "--n", "1", "--output", str(output), "--resume")
    attempt = load(output / "tasks/0000/attempt.json")
    assert attempt["execution_path"] == "tasks/0000/execution-001"
    assert attempt["verification"]["passed"] is True
