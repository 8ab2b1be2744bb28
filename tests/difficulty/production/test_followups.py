"""--follow-up measures outside the protocol's settings and records exactly what changed and why."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from difficulty.registry import current_protocol
from tests.difficulty.production.conftest import SOURCE_ID, RoleModel
from tests.difficulty.production.helpers import difficulty_fails, make_difficulty

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def args(config, output) -> list[str]:
    return ["--config", str(config), "--atlas-id", SOURCE_ID, "--n", "2", "--output", str(output)]


def test_a_generation_setting_followup_measures_and_records_the_change(
    tmp_path, write_config, model_server
):
    reason = "Does a doubled output budget change the Large model's solve rate?"
    make_difficulty(
        *args(write_config(), tmp_path / "run"), "--follow-up", "generation_setting",
        "--changed", "large.max_tokens=32768", "--reason", reason,
    )  # fmt: skip
    protocol = current_protocol()
    large = protocol.required_role("large")
    requests = model_server.chat_requests()
    assert {request.model for request in requests} == {large.model}
    assert {request.body["max_tokens"] for request in requests} == {32768}
    assert requests[0].body["chat_template_kwargs"] == {"enable_thinking": True}
    report = json.loads((tmp_path / "run" / "difficulty.json").read_text())
    assert [model["size"] for model in report["models"]] == ["large"]
    assert report["followup"] == {
        "kind": "generation_setting",
        "changes": [{"size": "large", "key": "max_tokens", "value": 32768}],
        "reason": reason,
    }
    (entry,) = report["followups"]
    assert entry["changed_parameter"] == {"name": "max_tokens", "earlier": 16384, "new": 32768}
    assert (entry["kind"], entry["state"], entry["model"]) == (
        "generation_setting", "complete", large.model,
    )  # fmt: skip
    assert (entry["solved"], entry["verified"]) == (1, 2)
    assert reason in entry["limitations"]


def test_an_alternate_checkpoint_followup_must_match_the_config(
    tmp_path, write_config, model_server
):
    other = "zai-org/GLM-5.3-Air"
    model_server.models[other] = RoleModel(solves={0, 1, 2, 3})
    config = write_config(change=lambda d: d["roles"]["hosted"].update({"model": other}))
    followup = ["--follow-up", "alternate_checkpoint", "--reason", "A cheaper hosted checkpoint"]
    assert difficulty_fails(*args(config, tmp_path / "a"), *followup, "--changed",
                            "hosted.model=zai-org/Other") == (
        f"roles.hosted.model is {other}, but --changed hosted.model names zai-org/Other"
    )  # fmt: skip
    make_difficulty(*args(config, tmp_path / "b"), *followup, "--changed", f"hosted.model={other}")
    report = json.loads((tmp_path / "b" / "difficulty.json").read_text())
    (entry,) = report["followups"]
    assert entry["checkpoint_change"] == {"earlier": "zai-org/GLM-5.3", "new": {"model": other}}
    assert "it does not isolate the effect of reasoning effort." in entry["limitations"][-1]
    assert {request.model for request in model_server.chat_requests()} == {other}


def test_followup_arguments_are_checked(tmp_path, write_config):
    base = args(write_config(), tmp_path / "run")
    assert difficulty_fails(*base, "--follow-up", "generation_setting", "--reason", "x") == (
        "--follow-up needs at least one --changed ROLE.KEY=VALUE"
    )
    assert (
        difficulty_fails(*base, "--follow-up", "generation_setting", "--changed", "large.top_p=0.8")
        == "--follow-up needs --reason saying why the settings change"
    )
    assert difficulty_fails(
        *base, "--follow-up", "generation_setting", "--changed", "large.colour=red",
        "--reason", "x",
    ) == "--changed names no generation setting or checkpoint: colour"  # fmt: skip
    assert difficulty_fails(
        *base, "--follow-up", "generation_setting", "--changed", "hosted.model=a/b",
        "--reason", "x",
    ) == "A generation_setting follow-up keeps the protocol's checkpoints"  # fmt: skip
    assert not (tmp_path / "run").exists()


def test_a_followup_filed_in_the_original_run_is_published_beside_it(
    tmp_path, write_config, model_server, client, good_source
):
    config = write_config()
    run = tmp_path / "run"
    make_difficulty(*args(config, run))
    followup = run / "difficulty" / "followups" / "large-32k"
    make_difficulty(
        *args(config, followup), "--follow-up", "generation_setting",
        "--changed", "large.max_tokens=32768", "--reason", "A doubled output budget",
    )  # fmt: skip
    report = json.loads((run / "difficulty.json").read_text())
    (entry,) = report["protocol_followups"]
    assert entry["report_path"] == "difficulty/followups/large-32k/difficulty.json"
    assert entry["original_report_path"] == "difficulty.json"
    filed = json.loads((followup / "difficulty.json").read_text())
    path = filed["models"][0]["task_outcomes"][0]["execution_path"]
    assert path.startswith("difficulty/followups/large-32k/difficulty/large/tasks/0000/")
    assert (run / path / "attempt.json").is_file()
    call_command("publish_difficulty", "--run-dir", str(run), "--atlas-id", SOURCE_ID)
    result = json.loads((run / "atlas-difficulty-publication.json").read_text())
    assert result["status"] == "current"
    assert result["difficulty"].endswith(
        "; Historical: Qwen/Qwen3.5-122B-A10B (max_tokens 16384 → 32768) 1/2 solved"
    )
    page = client.get(f"/reviews/{good_source['review_id']}/").content.decode()
    assert "Additional settings comparison · Complete" in page
