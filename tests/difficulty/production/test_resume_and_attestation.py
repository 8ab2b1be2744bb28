"""--resume reuses every finished attempt (a finished run makes no call), refuses changed inputs,
and attests changed production code so publish_difficulty can judge it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from difficulty.attestation import (
    ATTESTATION_PATH,
    CHANGED_WITHOUT_VALIDATION,
    MATCHING_LINE,
)
from difficulty.production import execution
from difficulty.registry import current_protocol
from tests.difficulty.production.conftest import SOURCE_ID
from tests.difficulty.production.helpers import difficulty_fails, make_difficulty

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def finished(tmp_path, write_config, model_server):
    config = write_config()
    output = tmp_path / "run"
    args = ["--config", str(config), "--atlas-id", SOURCE_ID, "--n", "2", "--output", str(output)]
    make_difficulty(*args, "--jobs", "3")
    model_server.requests.clear()
    return output, args


def test_resume_of_a_finished_run_makes_no_call(finished, model_server):
    output, args = finished
    before = (output / "difficulty.json").read_bytes()
    stdout, _ = make_difficulty(*args, "--resume")
    assert "small 0/2 solved; large 1/2 solved; hosted 2/2 solved" in stdout
    assert model_server.chat_requests() == []
    assert (output / "difficulty.json").read_bytes() == before
    assert not (output / ATTESTATION_PATH).exists()
    assert (
        difficulty_fails(*args) == "Output already exists; use --resume or a new output directory"
    )


def test_resume_runs_only_the_missing_attempt(finished, model_server):
    output, args = finished
    (output / "difficulty.json").unlink()
    (output / "difficulty/small/tasks/0001/attempt.json").unlink()
    make_difficulty(*args, "--resume")
    requests = model_server.chat_requests()
    small = current_protocol().required_role("small").model
    assert [request.model for request in requests] == [small]
    # A retry never overwrites the earlier attempt's folder.
    assert (output / "difficulty/small/tasks/0001/execution-001/attempt.json").is_file()
    report = load(output / "difficulty.json")
    outcome = report["models"][0]["task_outcomes"][1]
    assert outcome["execution_path"] == "difficulty/small/tasks/0001/execution-001"


def test_resume_with_changed_inputs_is_refused(finished, write_config, model_server):
    _, args = finished
    write_config(change=lambda d: d["roles"]["small"].update({"timeout": 99}))
    assert difficulty_fails(*args, "--resume") == (
        "Config, protocol, task sample, Atlas row or native code changed; resume requires "
        "identical inputs"
    )
    assert model_server.chat_requests() == []


def pretend_original_code_differed(output, *, literal: str | None = None) -> None:
    """As if the original run had executed other production code: a different whole-file hash
    for quality-review code, and optionally a changed literal in its execution script copy."""
    identity_path = output / "difficulty/run.json"
    identity = load(identity_path)
    identity["code"]["implementation"]["review_runtime/runtime/progress.py"] = "0" * 64
    identity_path.write_text(json.dumps(identity, indent=2))
    if literal is not None:
        copy = output / "difficulty/implementation/execution.py"
        text = copy.read_text()
        assert 'ARMS_DIR = "difficulty"' in text
        copy.write_text(text.replace('ARMS_DIR = "difficulty"', f'ARMS_DIR = "{literal}"'))


def test_changed_quality_code_is_attested_matching_and_published(
    finished, model_server, client, good_source
):
    output, args = finished
    pretend_original_code_differed(output)
    make_difficulty(*args, "--resume")
    assert model_server.chat_requests() == []
    attestation = load(output / ATTESTATION_PATH)
    assert attestation["matching"] is True
    assert attestation["scope"] == ["load_sample", "launch_attempt", "code_identity"]
    assert attestation["original"]["path"] == "difficulty/implementation/execution.py"
    assert attestation["executed"]["path"] == "difficulty/implementation/executed/execution.py"
    executed = output / attestation["executed"]["path"]
    assert executed.read_bytes() == Path(execution.__file__).read_bytes()
    call_command("publish_difficulty", "--run-dir", str(output), "--atlas-id", SOURCE_ID)
    page = client.get(f"/reviews/{good_source['review_id']}/").content.decode()
    assert MATCHING_LINE in page


def test_changed_execution_code_needs_validation_before_publication(
    finished, model_server, tmp_path
):
    output, args = finished
    pretend_original_code_differed(output, literal="difficulty-v0")
    _, stderr = make_difficulty(*args, "--resume")
    assert "the execution code differs from the original run" in stderr
    attestation = load(output / ATTESTATION_PATH)
    assert attestation["matching"] is False
    changed = [
        d["name"]
        for d in attestation["definitions"]
        if d["original_sha256"] != d["executed_sha256"]
    ]
    assert changed == ["ARMS_DIR"]
    with pytest.raises(CommandError, match=CHANGED_WITHOUT_VALIDATION):
        call_command("publish_difficulty", "--run-dir", str(output), "--atlas-id", SOURCE_ID)
    # A curator publishes validation of the changed code beside the run, and attests again.
    evidence = output / "difficulty/validation/rerun.md"
    evidence.parent.mkdir()
    evidence.write_text("Re-ran two tasks with the changed launcher; identical verdicts.\n")
    shutil.copyfile(output / ATTESTATION_PATH, tmp_path / "first-attestation.json")
    call_command(
        "attest_execution",
        "--original", str(output / "difficulty/implementation/execution.py"),
        "--executed", str(output / "difficulty/implementation/executed/execution.py"),
        "--output", str(output / ATTESTATION_PATH),
        "--validation", "difficulty/validation/rerun.md=Re-run of two tasks with the new code",
    )  # fmt: skip
    assert (
        load(output / ATTESTATION_PATH)["definitions"]
        == (load(tmp_path / "first-attestation.json")["definitions"])
    )
    call_command("publish_difficulty", "--run-dir", str(output), "--atlas-id", SOURCE_ID)
    assert load(output / "atlas-difficulty-publication.json")["status"] == "current"
