"""What make_difficulty refuses before it writes anything: generation settings or other checkpoints
in the config, sources that do not qualify (in the Atlas's words), and bad arguments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atlas.models import Source
from atlas.services.display import refresh_display_state
from difficulty.eligibility import NOT_GOOD, OPEN_DEFECT
from difficulty.production.config import load_difficulty_config
from difficulty.registry import current_protocol
from tests.difficulty.production.conftest import SOURCE_ID
from tests.difficulty.production.helpers import difficulty_fails

pytestmark = pytest.mark.django_db


def run_args(config, output) -> list[str]:
    return ["--config", str(config), "--atlas-id", SOURCE_ID, "--n", "2", "--output", str(output)]


@pytest.mark.parametrize(
    ("where", "key", "value"),
    [
        ("large", "temperature", 0.6),
        ("small", "max_tokens", 32768),
        ("hosted", "reasoning_effort", "high"),
        ("large", "chat_template_kwargs", {"enable_thinking": False}),
        ("small", "parameters", {"top_p": 0.8}),
    ],
)
def test_generation_settings_in_a_role_are_refused(
    tmp_path, write_config, model_server, where, key, value
):
    config = write_config(change=lambda d: d["roles"][where].update({key: value}))
    message = difficulty_fails(*run_args(config, tmp_path / "run"))
    assert message == (
        f"Generation settings come from protocol {current_protocol().id}; remove "
        f"roles.{where}.{key} from the config (a --follow-up run records a changed setting)"
    )
    assert not (tmp_path / "run").exists()
    assert model_server.chat_requests() == []


def test_top_level_and_serving_generation_settings_are_refused(tmp_path, write_config):
    config = write_config(change=lambda d: d.update({"generation_parameters": {"top_k": 40}}))
    assert "remove generation_parameters from the config" in difficulty_fails(
        *run_args(config, tmp_path / "run")
    )
    config = write_config(
        change=lambda d: d["roles"]["small"]["serving_configuration"].update({"max_tokens": 8})
    )
    assert "remove roles.small.serving_configuration.max_tokens" in difficulty_fails(
        *run_args(config, tmp_path / "run")
    )


def test_another_checkpoint_for_a_role_is_refused(tmp_path, write_config):
    config = write_config(change=lambda d: d["roles"]["large"].update({"model": "Qwen/Qwen3.5-9B"}))
    assert difficulty_fails(*run_args(config, tmp_path / "run")) == (
        "roles.large.model is Qwen/Qwen3.5-9B, but protocol atlas-difficulty-v2-65k16k measures "
        "Qwen/Qwen3.5-122B-A10B as the Large model (a --follow-up alternate_checkpoint run "
        "records another checkpoint)"
    )
    assert not (tmp_path / "run").exists()


def test_the_hosted_role_must_name_its_provider(tmp_path, write_config):
    config = write_config(change=lambda d: d["roles"]["hosted"].update({"provider": "Other"}))
    assert difficulty_fails(*run_args(config, tmp_path / "run")) == (
        "The Hosted model was not served through Together."
    )


def edit_row(path, **changes) -> None:
    row = json.loads(path.read_text())
    row.update(changes)
    path.write_text(json.dumps(row))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"quality": "some_issues"}, NOT_GOOD),
        ({"review_stale": True}, NOT_GOOD),
        ({"review_id": None}, NOT_GOOD),
        ({"verifier_issues": [{"issue_url": "https://github.com/x/y/issues/1"}]}, OPEN_DEFECT),
        ({"active": False}, "Atlas source is absent or inactive"),
    ],
)
def test_a_source_that_does_not_qualify_is_refused_in_the_atlas_words(
    tmp_path, write_config, good_source, model_server, changes, message
):
    edit_row(good_source["row"], **changes)
    config = write_config()
    assert difficulty_fails(*run_args(config, tmp_path / "run")) == message
    assert not (tmp_path / "run").exists()
    assert model_server.chat_requests() == []


def test_the_row_of_another_source_or_revision_is_refused(tmp_path, write_config, good_source):
    config = write_config(change=lambda d: d["source"].update({"revision": "f" * 40}))
    assert difficulty_fails(*run_args(config, tmp_path / "run")) == (
        "source.revision differs from the Atlas source's current data revision"
    )
    edit_row(good_source["row"], id="MarinSkyRL:other")
    assert difficulty_fails(*run_args(write_config(), tmp_path / "run")) == (
        "The Atlas row identifies a different source"
    )


def test_the_current_review_must_be_the_rows(tmp_path, write_config, good_source):
    good_source["collection"].write_text('{"reviews": []}')
    message = difficulty_fails(*run_args(write_config(), tmp_path / "run"))
    assert message == (
        f"{good_source['collection']} is not the source's current review {good_source['review_id']}"
    )


def test_credentials_in_the_config_are_refused(tmp_path, write_config):
    config = write_config(change=lambda d: d["roles"]["hosted"].update({"api_key": "sk-x"}))
    assert difficulty_fails(*run_args(config, tmp_path / "run")) == (
        "Put credentials in environment variables, not the review config: "
        "roles.hosted.api_key is named like a credential"
    )


def test_bad_arguments(tmp_path, write_config):
    config = write_config()
    args = run_args(config, tmp_path / "run")
    assert difficulty_fails(*args[:-4], "--n", "0", *args[-2:]) == "n must be positive"
    assert difficulty_fails(*args, "--protocol", "atlas-difficulty-qwen35-9b").startswith(
        "Protocol atlas-difficulty-qwen35-9b records no limits or roles to measure with"
    )
    assert difficulty_fails(*args, "--changed", "large.top_p=0.8") == (
        "--changed and --reason need --follow-up"
    )


def test_the_example_config_names_the_protocol_models_and_no_generation_setting(monkeypatch):
    monkeypatch.setenv("TOGETHER_API_KEY", "unused")
    path = (
        Path(__file__).resolve().parents[3] / "fixtures/difficulty/difficulty-config.example.json"
    )
    config = load_difficulty_config(path=path, protocol=current_protocol())
    assert {size: endpoint.model for size, endpoint in config.roles.items()} == {
        role.size: role.model for role in current_protocol().roles
    }


def test_a_learned_verifier_judge_must_be_the_protocols(tmp_path, write_config, model_server):
    judge = {"base_url": model_server.base_url, "model": "zai-org/GLM-4.6", "timeout": 10,
             "provider": "Together"}  # fmt: skip
    config = write_config(change=lambda d: d.update({"learned_verifier": judge}))
    assert difficulty_fails(*run_args(config, tmp_path / "run")) == (
        current_protocol().verifier_requirements[0].message
    )
    with_effort = {**judge, "model": "zai-org/GLM-5.3", "reasoning_effort": "high"}
    config = write_config(change=lambda d: d.update({"learned_verifier": with_effort}))
    assert "remove learned_verifier.reasoning_effort" in difficulty_fails(
        *run_args(config, tmp_path / "run")
    )


def test_the_row_is_read_from_the_atlas_api(tmp_path, live_server, write_config, good_source):
    """Without a saved row, the Atlas answers: here it says the source is no longer Good."""
    Source.objects.filter(id=SOURCE_ID).update(quality="some_issues")
    refresh_display_state(source_ids=[SOURCE_ID])

    def from_api(document):
        document["source"]["grading_snapshot"] = None
        document["source"]["atlas_url"] = live_server.url

    config = write_config(change=from_api)
    assert difficulty_fails(*run_args(config, tmp_path / "run")) == NOT_GOOD
    config = write_config(change=lambda d: d["source"].update({"grading_snapshot": None}))
    assert difficulty_fails(*run_args(config, tmp_path / "run")).startswith(
        "Save the source's Atlas row as source.grading_snapshot or set source.atlas_url"
    )
