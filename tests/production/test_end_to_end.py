"""make_review → publish_review → catalog and review page, with the real gsm8k verifier."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.core.management import call_command

from atlas.models import Source
from atlas.services.sync import sync_catalog
from reviews.models import Review
from tests.production.conftest import API_KEY, SOURCE_ID
from tests.production.helpers import load, make_review
from tests.production.review_model import request_kind

pytestmark = pytest.mark.slow


def page_text(response) -> str:
    html = response.content.decode()
    html = re.sub(r"<(script|template)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


@pytest.fixture
def produced(tmp_path, write_config, model_server):
    config = write_config(rows=6)
    output = tmp_path / "run"
    stdout, stderr = make_review(
        "--config", str(config), "-n", "2", "--seed", "7", "--output", str(output), "--jobs", "2"
    )
    return output, stdout, stderr


def test_run_directory_has_every_part_of_the_contract(produced, model_server):
    output, stdout, stderr = produced
    assert stdout.strip() == f"Saved 11 reviews to {output}/quality-reviews.json"
    assert "tasks 2/2" in stderr and "calls" in stderr and "retries 0" in stderr
    assert oct(output.stat().st_mode & 0o777) == "0o700"
    collection = load(output / "quality-reviews.json")
    methods = [review["method"] for review in collection["reviews"]]
    assert methods == ["runtime_execution", *["model_judgment"] * 3, "synthesis"] * 2 + [
        "synthesis"
    ]
    # Finding and tag ids count from 0 within their review, as the reference writes them.
    judge = next(r for r in collection["reviews"] if r["id"].endswith("/task/0/judge/1"))
    assert [f["id"] for f in judge["findings"]] == [f"{judge['id']}/finding/0"]
    tags = [t["id"] for t in collection["tag_assignments"] if t["target"]["id"] == judge["id"]]
    assert tags == [f"{judge['id']}/tag/0"]
    run = load(output / "run.json")
    assert run["n"] == 2 and run["seed"] == 7 and run["population"] == 6
    assert set(run["implementation"]) >= {
        "make_review.py",
        "review_runtime/make_review/pipeline.py",
        "review_runtime/workers/gym_worker.py",
    }
    assert collection["execution_provenance"]["marinskyrl_commit"] == run["marinskyrl"]["commit"]
    assert collection["execution_provenance"]["marinskyrl_dirty"] is False
    # The real gsm8k verifier graded the solver's answers.
    for number in ("0000", "0001"):
        attempt = load(output / "tasks" / number / "attempt.json")
        assert attempt["verification"]["status"] == "verified"
        assert attempt["verification"]["score"] == 1.0
        assert attempt["execution_path"] == f"tasks/{number}/execution-000"
        execution = output / attempt["execution_path"]
        index = load(execution / "native-code-index.json")
        called = {entry["module"] for entry in index if entry["called_in_attempt"]}
        assert {"skyrl_gym.envs.gsm8k.env", "skyrl_gym.envs.gsm8k.utils"} <= called
        # Imported but never called: kept in artifacts, not shown to judges.
        assert any(not entry["called_in_attempt"] for entry in index)
        for entry in index:
            assert entry["origin"].startswith(str(run["marinskyrl"]["checkout"]))
            assert (execution / entry["path"]).is_file()
        events = [json.loads(line) for line in (execution / "verifier-trace.jsonl").open()]
        assert [e["event"] for e in events] == ["verify_start", "verify_end"]
        assert all("at" in event for event in events)
        request = load(execution / "solver" / "turn-000" / "request.json")
        assert request["model"] == "test/solver-judge" and request["n"] == 1
        assert "Authorization" not in json.dumps(request)
    manifest = {item["path"] for item in load(output / "artifact-manifest.json")["files"]}
    assert "quality-reviews.json" in manifest and ".run.lock" not in manifest
    assert "artifact-manifest.json" not in manifest
    # Judges: three fresh calls per task, none carrying another judge's opinion.
    judge_calls = [r for r in model_server.chat_requests() if request_kind(r) == "judge"]
    assert len(judge_calls) == 6
    for call in judge_calls:
        assert len(call.messages) == 2
        assert "Scripted judge opinion" not in json.dumps(call.body)


def test_api_key_is_sent_as_bearer_and_never_written(produced, model_server):
    output, _, _ = produced
    assert all(
        r.headers.get("Authorization") == f"Bearer {API_KEY}" for r in model_server.chat_requests()
    )
    for path in output.rglob("*"):
        if path.is_file():
            assert API_KEY.encode() not in path.read_bytes(), path


@pytest.mark.django_db
def test_publish_shows_rating_judges_syntheses_outcomes_and_evidence(
    produced, packaged_catalog, client, capsys
):
    output, _, _ = produced
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    call_command("publish_review", "--run-dir", str(output), "--atlas-id", SOURCE_ID)
    result = json.loads(capsys.readouterr().out)
    assert result["kind"] == "rating" and result["quality"] == "good"
    source = Source.objects.get(id=SOURCE_ID)
    assert (source.effective_quality, source.review_id) == ("good", result["review_id"])
    assert Review.objects.get(id=result["review_id"]).source_id == SOURCE_ID
    catalog = client.get("/", {"q": "gsm8k"})
    assert f'href="/reviews/{result["review_id"]}/"' in catalog.content.decode()
    api = client.get(f"/api/sources/{SOURCE_ID}/").json()
    assert api["quality"] == "good"
    review_page = client.get(f"/reviews/{result['review_id']}/")
    # Each task's cards load when it opens: a reader follows the page's own task links (and its
    # evidence index) as a browser without scripts would.
    links = sorted(
        set(
            re.findall(
                rf'href="(/reviews/{result["review_id"]}/tasks/[^"/]+/)"',
                review_page.content.decode(),
            )
        )
    )
    assert len(links) == 2
    page = " ".join(
        page_text(response)
        for response in [
            review_page,
            *(client.get(link) for link in links),
            client.get(f"/reviews/{result['review_id']}/evidence/"),
        ]
    )
    assert page.count("Independent judge · Task") == 6
    assert page.count("Combined review · Task") == 2
    assert "Combined review · Source · Keep" in page
    assert page.count("Task attempt & verifier · Task · Unrated") == 2
    assert "Native skyrl_gym verification: verified." in page
    assert "tasks/0000/execution-000/verifier-trace.jsonl" in page
    assert "tasks/0000/judges/1/parsed.json" in page
    artifact = client.get(
        f"/api/reviews/{result['review_id']}/artifacts/tasks/0000/execution-000/solver-trace.json"
    )
    assert artifact.status_code == 200 and "####" in artifact.content.decode()
