"""A publish-only publisher's run against the curators' tools. What a published run names —
its checkout, interpreters, worker scripts, the execution its ``attempt.json`` points at — is the
publisher's choice: the tools take this machine's runtime from the curator's config (required
for a run fetched from an Atlas), never run a path the saved inputs name, and confine every
path a run names to the run. Each hostile part would touch a marker file; it is never made."""

# The fixtures are imported by name, so each test's parameters redefine them.
# ruff: noqa: F811

from __future__ import annotations

import json
import shutil
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from reviews.production.curation.execution import case_runtime, replay_task, runtime_paths
from reviews.production.curation.saved_runs import SavedAttempt
from reviews.production.runtime.errors import CurationRefused
from tests.curation.conftest import (  # noqa: F401 - fixtures used by name
    ISSUE_URL,
    buggy_run,
    defect_checkout,
    model_server,
    separator_config,
    task_folder_of,
)
from tests.production.conftest import (  # noqa: F401 - fixtures used by name
    _native_bytecode_cache,
    api_key,
    bytecode_cache,
    checkout,
    session_checkout,
    write_config,
)
from tests.production.helpers import load, make_review

pytestmark = pytest.mark.slow


def write(path: Path, value) -> None:
    path.write_text(json.dumps(value), encoding="utf-8")


def hostile_copy(run: Path, root: Path, marker: Path, *, fetched: bool = True) -> Path:
    """``run`` as a publisher would ship it: a checkout inside its artifacts whose text-only
    ``.git`` sets ``core.fsmonitor`` to a command, a worker script of its own named as the Gym
    route's worker in ``run.json`` and in every saved input, and (``fetched``) the record
    ``fetch_review`` leaves."""
    copy = root / "published"
    shutil.copytree(run, copy)
    planted = copy / "publication" / "checkout"
    shutil.copytree(Path(load(run / "run.json")["marinskyrl"]["checkout"]), planted)
    with open(planted / ".git" / "config", "a", encoding="utf-8") as config:
        config.write(f"[core]\n\tfsmonitor = touch {marker}; false\n")
    script = copy / "publication" / "worker.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    worker = {"python": sys.executable, "script": str(script), "pythonpath": []}
    record = load(copy / "run.json")
    record["config"]["runtime"]["marinskyrl_checkout"] = str(planted)
    record["config"]["runtime"]["workers"] = {"skyrl_gym": worker}
    write(copy / "run.json", record)
    for saved in copy.glob("tasks/*/execution-*/input.json"):
        value = load(saved)
        value["config"]["workers"] = {"skyrl_gym": worker}
        write(saved, value)
    if fetched:
        write(copy / "atlas-review.json", {"atlas": "https://atlas.example", "review_id": "0" * 64})
    return copy


def reproduce(run: Path, output: Path, *extra: str) -> list[str]:
    return [
        "reproduce_defect", "--run-dir", str(run), "--attempt", task_folder_of(run, 2006),
        "--kind", "verifier", "--issue-url", ISSUE_URL, "--expect", "accepted",
        "--output", str(output), *extra,
    ]  # fmt: skip


def refused(*args: str) -> str:
    with pytest.raises(CommandError) as failure:
        call_command(*args, stdout=StringIO(), stderr=StringIO())
    return str(failure.value)


NEEDS_CONFIG = (
    "pass --config with a review config whose runtime names this machine's MarinSkyRL "
    "checkout and interpreters"
)


def test_a_fetched_run_runs_only_this_machines_runtime(
    buggy_run, defect_checkout, separator_config, tmp_path
):
    marker = tmp_path / "publisher-ran"
    run = hostile_copy(buggy_run, tmp_path, marker)
    output = tmp_path / "reproduction"
    assert refused(*reproduce(run, output)) == (
        "The run was fetched from https://atlas.example: its runtime names another machine's "
        f"interpreters and checkouts; {NEEDS_CONFIG}"
    )
    assert refused(
        "validate_fix", "--review", str(run), "--confirming", str(run), "--atlas-row",
        str(tmp_path / "row.json"), "--output", str(output),
    ) == (
        "The run was fetched from https://atlas.example: its runtime names another machine's "
        f"interpreters and checkouts; {NEEDS_CONFIG}"
    )  # fmt: skip
    # With the curator's config the cases run this machine's checkout and worker, not the
    # saved inputs' script.
    call_command(*reproduce(run, output, "--config", str(separator_config)), stdout=StringIO(),
                 stderr=StringIO())  # fmt: skip
    assert load(output / "reproduction.json")["reproduced"] is True
    assert not marker.exists()


def test_a_run_whose_runtime_leads_into_itself_is_refused(buggy_run, defect_checkout, tmp_path):
    marker = tmp_path / "publisher-ran"
    run = hostile_copy(buggy_run, tmp_path, marker, fetched=False)
    planted = run / "publication" / "checkout"
    assert refused(*reproduce(run, tmp_path / "reproduction")) == (
        f"The run's runtime.marinskyrl_checkout lies inside the run ({planted}): a run made here "
        f"never carries its own interpreter, script or checkout; {NEEDS_CONFIG}"
    )
    record = load(run / "run.json")
    record["config"]["runtime"]["marinskyrl_checkout"] = str(defect_checkout.path)
    write(run / "run.json", record)
    assert refused(*reproduce(run, tmp_path / "reproduction")) == (
        f"The run's runtime.workers.skyrl_gym.script lies inside the run "
        f"({run / 'publication' / 'worker.py'}): a run made here never carries its own "
        f"interpreter, script or checkout; {NEEDS_CONFIG}"
    )
    assert not marker.exists()
    assert not (tmp_path / "reproduction").exists()


def test_an_attempt_pointing_at_another_runs_execution_is_refused(
    buggy_run, defect_checkout, tmp_path
):
    other = tmp_path / "other-run"
    shutil.copytree(buggy_run, other)
    run = tmp_path / "run"
    shutil.copytree(buggy_run, run)
    suspect = task_folder_of(run, 2006)
    attempt = load(run / suspect / "attempt.json")
    escaped = f"../other-run/{attempt['execution_path']}"
    attempt["execution_path"] = escaped
    write(run / suspect / "attempt.json", attempt)
    assert refused(*reproduce(run, tmp_path / "reproduction")) == (
        f"{suspect} names an execution outside the run: {escaped!r}"
    )
    # A link inside the run that leads out of it is outside too.
    (run / "tasks" / "linked").symlink_to(other / "tasks")
    attempt["execution_path"] = f"tasks/linked/{attempt['execution_path'].split('/', 1)[1]}"
    write(run / suspect / "attempt.json", attempt)
    assert "names an execution outside the run" in refused(
        *reproduce(run, tmp_path / "reproduction")
    )
    assert not (tmp_path / "reproduction").exists()


def test_reused_evidence_that_leads_out_of_the_run_is_refused(tmp_path, write_config):
    """``make_review --reuse`` of a run whose evidence names ``../../../PLANT.txt``: refused
    before any reused file is copied, nothing planted above the output."""
    config = write_config(rows=3)
    earlier = tmp_path / "a" / "b" / "earlier"
    make_review("--config", str(config), "--n", "2", "--seed", "7", "--output", str(earlier))
    collection = load(earlier / "quality-reviews.json")
    # The last task's panel: the others are cited first, and none of their files may be
    # copied before this one is refused.
    runtime = [r for r in collection["reviews"] if r["method"] == "runtime_execution"][-1]
    runtime["evidence"][0]["snapshot_path"] = "../../../PLANT.txt"
    write(earlier / "quality-reviews.json", collection)
    (tmp_path / "PLANT.txt").write_text("planted", encoding="utf-8")  # what the path reads
    output = tmp_path / "runs" / "later"
    output.parent.mkdir()
    with pytest.raises(CommandError) as refused:
        make_review(
            "--config", str(config), "--n", "3", "--output", str(output), "--reuse", str(earlier)
        )  # fmt: skip
    assert str(refused.value) == (
        "A reused review names a path outside its run: '../../../PLANT.txt'"
    )
    # Where the copy would have landed: output/reused/<id>/../../../ is the output's parent.
    assert not (output.parent / "PLANT.txt").exists()
    assert not list(tmp_path.rglob("reused"))


def test_saved_task_files_that_lead_out_of_the_run_are_refused(tmp_path):
    """A Harbor attempt's saved ``task/`` is copied into the case's evidence: a link in it to a
    file of this machine would publish that file."""
    run = tmp_path / "run"
    execution = run / "tasks" / "0000" / "execution-000"
    (execution / "task").mkdir(parents=True)
    (execution / "task" / "instruction.md").write_text("Do it.", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("private", encoding="utf-8")
    (execution / "task" / "notes.txt").symlink_to(secret)
    attempt = SavedAttempt(
        run_dir=run, task_folder="tasks/0000", execution_path="tasks/0000/execution-000",
        task={"id": "t", "task_dir": "/elsewhere"}, model={}, config={}, attempt={},
        responses=(),
    )  # fmt: skip
    with pytest.raises(CurationRefused) as refused:
        replay_task(attempt)
    assert str(refused.value) == (
        "tasks/0000/execution-000: a saved task file leads out of the run: "
        "tasks/0000/execution-000/task/notes.txt"
    )


def test_a_saved_harbor_environment_is_never_taken_from_the_run():
    """A saved input's Harbor environment config names a class to import, host folders to mount
    and Compose overlays: a re-run takes this machine's, and a recorded runtime whose overlay
    lies inside the run is refused like an interpreter there."""
    hostile = {
        "import_path": "planted.module:Environment",
        "mounts": [{"type": "bind", "source": "/", "target": "/host"}],
        "extra_docker_compose": ["tasks/0000/privileged.yaml"],
    }
    local = {"harbor_environment": {"extra_docker_compose": ["/etc/atlas/no-network.yaml"]}}
    runtime = case_runtime(saved={"harbor_environment": hostile}, local=local)
    assert runtime["harbor_environment"] == local["harbor_environment"]
    assert case_runtime(saved={"harbor_environment": hostile}, local={})["harbor_environment"] == {}
    named = runtime_paths({"harbor_environment": {"extra_docker_compose": ["/run/x.yaml"]}})
    assert named == [("harbor_environment.extra_docker_compose", "/run/x.yaml")]
