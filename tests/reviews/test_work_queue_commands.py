"""The work queue's commands work as printed: a curator who writes the source's config at the path
the entry names and runs the printed lines, in order, in one folder, gets the review published and
then the difficulty measured — with the real gsm8k verifier and the test model server."""

from __future__ import annotations

import json
import shlex
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from atlas.api.row_values import source_row
from atlas.models import Source
from difficulty.registry import current_protocol
from reviews.pages.work_queue import work_queue
from tests.conftest import make_row
from tests.difficulty.production.conftest import config_document, role_models
from tests.model_server import ModelServer
from tests.production import conftest as production
from tests.production.conftest import API_KEY_ENV, DATASET_REVISION, SOURCE_ID
from tests.production.review_model import ReviewModel
from tests.reviews import factories as f

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
# make_review's fixtures: the MarinSkyRL test checkout, the API key and the config writer.
session_checkout = production.session_checkout
checkout = production.checkout
api_key = production.api_key
write_config = production.write_config


@pytest.fixture
def model_server():
    """One server for the review (any model) and the three difficulty roles (by model name);
    ``write_config`` points the review config at it."""
    protocol = current_protocol()
    with ModelServer(default=ReviewModel()) as running:
        for size, responder in role_models().items():
            running.models[protocol.required_role(size).model] = responder
        yield running


def entry(need: str, source_id: str):
    sections = work_queue(needs=[need])
    return next(e for e in sections[0].entries if e.source_id == source_id)


def run_printed(commands: tuple[str, ...]) -> list[str]:
    """Each printed line, run as the curator would (``python manage.py <name> <args>``)."""
    outputs = []
    for line in commands:
        words = shlex.split(line)
        assert words[:2] == ["python", "manage.py"], line
        out = StringIO()
        call_command(*words[2:], stdout=out, stderr=StringIO())
        outputs.append(out.getvalue())
    return outputs


def place(path: Path, document: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")


def test_a_first_review_then_a_difficulty_measurement_run_as_printed(
    tmp_path, monkeypatch, checkout, model_server, write_config
):
    f.sync_sources(
        make_row(SOURCE_ID, dataset_revision=DATASET_REVISION, task_count=4),
        make_row("MarinSkyRL:other one", dataset_revision=DATASET_REVISION),
        make_row("MarinSkyRL:excluded", status="Excluded", notes="Archived rows."),
    )
    config = write_config(rows=4)  # tmp_path/review-config.json and a 4-row task file
    tasks = Path(json.loads(config.read_text())["source"]["tasks_path"])
    work = tmp_path / "curation"
    work.mkdir()
    monkeypatch.chdir(work)

    first = entry("first_review", SOURCE_ID)
    other = entry("first_review", "MarinSkyRL:other one")
    queued = [e.source_id for e in work_queue(needs=["first_review"])[0].entries]
    assert "MarinSkyRL:excluded" not in queued  # excluded sources are not "never reviewed"
    # Each source has its own config and run folder, so two never collide.
    verifier = Source.objects.get(id=SOURCE_ID).payload["verifier_revision"]
    reviewed = f"review-{DATASET_REVISION[:8]}-{verifier[:8]}"
    assert dict(first.files) == {
        "config": "review-configs/marinskyrl-gsm8k.json",
        "output": f"runs/marinskyrl-gsm8k/{reviewed}",
    }
    assert dict(other.files)["output"].startswith("runs/marinskyrl-other-one/review-")
    assert f"source.revision {DATASET_REVISION}" in first.detail
    place(work / dict(first.files)["config"], json.loads(config.read_text()))
    made, published = run_printed(first.commands)
    assert json.loads(published)["quality"] == "good"
    assert made.startswith("Saved ")
    source = Source.objects.get(id=SOURCE_ID)
    assert source.effective_quality == "good"
    review_dir = work / dict(first.files)["output"]
    assert json.loads((review_dir / "atlas-publication.json").read_text())["review_id"] == (
        source.review_id
    )
    assert SOURCE_ID not in [e.source_id for e in work_queue(needs=["first_review"])[0].entries]

    measure = entry("measure_difficulty", SOURCE_ID)
    assert dict(measure.files)["config"] == "difficulty-configs/marinskyrl-gsm8k.json"
    row = work / "atlas-rows" / "marinskyrl-gsm8k.json"
    place(row, source_row(source))
    document = config_document(
        server=model_server,
        checkout=checkout,
        tasks=tasks,
        row=row,
        collection=review_dir / "quality-reviews.json",
    )
    document["roles"]["hosted"]["api_key_env"] = API_KEY_ENV
    place(work / dict(measure.files)["config"], document)
    assert " --n 4 --seed 42 " in measure.commands[0]  # the source has 4 input rows, not 30
    run_printed(measure.commands)
    source.refresh_from_db()
    assert source.difficulty_status == "current"
    assert SOURCE_ID not in [
        e.source_id for e in work_queue(needs=["measure_difficulty"])[0].entries
    ]
