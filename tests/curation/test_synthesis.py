"""synthesise_source: an imported audit without an Atlas rating gets a source
synthesis from its review pool — read from the Atlas API, one model call, no solver, no judges —
that publish_review accepts, and the work queue entry disappears."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from atlas.services.sync import sync_catalog
from reviews.pages.work_queue import need_queryset
from reviews.production.runtime.rundir import json_text
from tests.hostile.conftest import fingerprint
from tests.model_server import completion
from tests.production.conftest import SOURCE_ID, git
from tests.production.helpers import load
from tests.production.review_model import request_kind
from tests.reviews.factories import imported_collection

pytestmark = pytest.mark.django_db(transaction=True)


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def write_imported(root: Path) -> Path:
    """A historical audit from outside the Atlas (the one kind of collection the Atlas imports
    rather than produces), mapped to the source."""
    collection, files = imported_collection(source_id=SOURCE_ID)
    collection["subjects"][0]["source_id"] = "upstream:gsm8k-audits"  # its own, upstream name
    root.mkdir()
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    (root / "quality-reviews.json").write_text(json_text(collection), encoding="utf-8")
    return root


@pytest.fixture
def imported_only(packaged_catalog, tmp_path):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    audit = write_imported(tmp_path / "audit")
    published = json.loads(run("publish_review", "--run-dir", str(audit), "--atlas-id", SOURCE_ID))
    assert published["kind"] == "imported"
    return published


def test_an_imported_audit_is_synthesised_from_the_pool(
    imported_only, live_server, write_config, model_server, checkout, tmp_path
):
    assert need_queryset("synthesise_imported").filter(id=SOURCE_ID).exists()
    output = tmp_path / "synthesis"
    printed = run(
        "synthesise_source", "--atlas", live_server.url, "--atlas-id", SOURCE_ID,
        "--config", str(write_config()), "--output", str(output),
    )  # fmt: skip
    assert printed.startswith(f"Synthesised {SOURCE_ID} from 1 pool collection(s)")
    # One model call, the coalescer's: no solver turn, no judge.
    calls = model_server.chat_requests()
    assert [request_kind(call) for call in calls] == ["coalescer"]
    payload = calls[0].user_payload
    assert (
        payload["current_release"]["dataset_revision"]
        == load(tmp_path / "review-config.json")["source"]["revision"]
    )
    assert "Malformed answers pass." in json.dumps(payload["collection"]["reviews"])

    collection = load(output / "quality-reviews.json")
    assert collection["execution_provenance"] is None and collection["source_mappings"] == []
    synthesis = collection["reviews"][-1]
    audit_id = imported_only["review_id"]
    copied = collection["reviews"][0]
    assert copied["id"] == f"pool/{audit_id}/audit:1"
    assert copied["attributes"]["copied_from"]["review_id"] == "audit:1"
    assert copied["reviewed_at"] is None  # an unknown date stays unknown
    assert synthesis["method"] == "synthesis" and synthesis["derived_from_review_ids"] == [
        copied["id"]
    ]
    head = git(checkout, "rev-parse", "HEAD").strip()
    assert synthesis["attributes"]["inspected_marinskyrl_commit"] == head
    (entry,) = synthesis["attributes"]["applicability"]["collections"]
    assert (entry["review_id"], entry["applicability"], entry["used"]) == (
        audit_id, "historical", True,
    )  # fmt: skip
    cited = {item["snapshot_path"]: item["url"] for item in synthesis["evidence"]}
    assert cited[f"pool/{audit_id}/quality-reviews.json"] == (
        f"{live_server.url}/reviews/{audit_id}/"
    )

    published = json.loads(run("publish_review", "--run-dir", str(output), "--atlas-id", SOURCE_ID))
    # A synthesis without runtime reviews cannot derive Good.
    assert (published["kind"], published["quality"]) == ("rating", "some_issues")
    assert not need_queryset("synthesise_imported").filter(id=SOURCE_ID).exists()


def test_a_pool_with_nothing_to_synthesise_is_refused(
    packaged_catalog, live_server, write_config, model_server, tmp_path
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    before = fingerprint()
    output = tmp_path / "synthesis"
    with pytest.raises(CommandError) as refused:
        run(
            "synthesise_source", "--atlas", live_server.url, "--atlas-id", SOURCE_ID,
            "--config", str(write_config()), "--output", str(output),
        )  # fmt: skip
    assert str(refused.value) == f"The review pool of {SOURCE_ID} holds no review to synthesise"
    assert not output.exists() and model_server.chat_requests() == []
    assert fingerprint() == before


def test_a_refused_synthesis_says_to_run_it_again_and_leaves_nothing(
    imported_only, live_server, write_config, model_server, tmp_path
):
    """synthesise_source has no --resume: a refusal keeps nothing, says what was wrong and that
    running it again asks again — and the same command then runs into the same output."""
    model_server.enqueue(*[completion("Not an opinion at all.") for _ in range(3)])
    output = tmp_path / "synthesis"
    args = (
        "synthesise_source", "--atlas", live_server.url, "--atlas-id", SOURCE_ID,
        "--config", str(write_config()), "--output", str(output),
    )  # fmt: skip
    with pytest.raises(CommandError) as refused:
        run(*args)
    message = str(refused.value)
    assert message.startswith("The model's synthesis was refused (")
    assert message.endswith(
        "; 3 of 3 answers refused); nothing was kept — run synthesise_source again to ask again"
    )
    assert "--resume" not in message
    assert (
        not output.exists()
        and [p.name for p in tmp_path.iterdir() if ".synthesis." in p.name] == []
    )
    assert run(*args).startswith(f"Synthesised {SOURCE_ID} from 1 pool collection(s)")


def test_an_unreachable_model_says_what_works_for_a_tool_without_resume(
    imported_only, live_server, write_config, model_server, tmp_path
):
    """A synthesis whose every call failed names the setting and the step that work here:
    running the tool again, never a --resume it does not have."""
    model_server.fail_first(10, status=503)
    output = tmp_path / "synthesis"
    with pytest.raises(CommandError) as refused:
        run(
            "synthesise_source", "--atlas", live_server.url, "--atlas-id", SOURCE_ID,
            "--config", str(write_config(model={"max_retries": 1})), "--output", str(output),
        )  # fmt: skip
    message = str(refused.value)
    assert "failed after 2 attempts (HTTP 503" in message
    assert message.endswith(
        "then run synthesise_source again (it keeps nothing, so it has no --resume)"
    )
    assert "with --resume" not in message and not output.exists()
