"""Fixtures of the difficulty tests: a Good source with a current review, and example run dirs."""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from atlas.models import Source
from atlas.services.display import refresh_display_state
from difficulty.publication import publish_difficulty_run
from reviews.models import Review, ReviewArtifact
from tests.conftest import make_row
from tests.difficulty.example_reports import example_report, write_example_difficulty

ATLAS_ID = "MarinSkyRL:difficulty-example"
DATA_REVISION = "a" * 40


def make_source(*, source_id: str = ATLAS_ID, quality: str | None = "good", **payload: Any):
    row = make_row(source_id, **payload)
    source = Source.objects.create(id=source_id, origin=row["origin"], payload=row)
    review = Review.objects.create(
        id=hashlib.sha256(source_id.encode()).hexdigest(),
        source=source,
        collection={"reviews": []},
        kind="rating",
        published_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    )
    Source.objects.filter(id=source_id).update(
        quality=quality,
        review_id=review.id,
        review_source_revision=row["dataset_revision"],
        review_verifier_revision=row["verifier_revision"],
    )
    refresh_display_state(source_ids=[source_id])
    return Source.objects.get(id=source_id), review


def publish_example(*, tmp_path: Path) -> Review:
    """The example difficulty run (with its follow-ups) published for a Good source."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    write_example_difficulty(run_dir=run_dir, atlas_id=ATLAS_ID, source_revision=DATA_REVISION)
    _, review = make_source()
    publish_difficulty_run(run_dir=run_dir, atlas_id=ATLAS_ID)
    return review


def add_artifact(*, review: Review, path: str, document: Any) -> ReviewArtifact:
    text = document if isinstance(document, str) else json.dumps(document)
    data = text.encode()
    return ReviewArtifact.objects.create(
        review=review,
        path=path,
        content=text,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
    )


@pytest.fixture
def good_source(db):
    return make_source()


@pytest.fixture
def report() -> dict[str, Any]:
    return copy.deepcopy(example_report(atlas_id=ATLAS_ID, source_revision=DATA_REVISION))


@pytest.fixture
def run_dir(tmp_path) -> Path:
    directory = tmp_path / "run"
    directory.mkdir()
    write_example_difficulty(run_dir=directory, atlas_id=ATLAS_ID, source_revision=DATA_REVISION)
    return directory
