"""Fixtures of make_difficulty's tests: a Good gsm8k source whose current review is a saved
collection, the MarinSkyRL test checkout with the real skyrl_gym gsm8k verifier, and the test
model server with one scripted model per protocol role."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from atlas.api.row_values import source_row
from atlas.models import Source
from atlas.services.display import refresh_display_state
from difficulty.registry import current_protocol
from reviews.models import Review
from tests.conftest import make_row
from tests.model_server import ModelServer, RecordedRequest, completion
from tests.production import conftest as production
from tests.production.conftest import (
    DATASET_REVISION,
    SOURCE_ID,
    gsm8k_rows,
    write_parquet,
)

# make_review's MarinSkyRL test checkout fixtures, shared.
session_checkout = production.session_checkout
checkout = production.checkout
# Native interpreters compile into the session's bytecode cache, never the user's.
bytecode_cache = production.bytecode_cache
_native_bytecode_cache = production._native_bytecode_cache

SUM = re.compile(r"Compute (\d+) \+ (\d+)")
HOSTED_KEY_ENV = "ATLAS_TEST_HOSTED_KEY"
HOSTED_KEY = "sk-hosted-test-5d1e"


def row_index(request: RecordedRequest) -> tuple[int, int]:
    """The gsm8k row a solver prompt came from (``gsm8k_rows`` makes a = 3·index + 1) and its
    correct answer."""
    text = " ".join(str(m.get("content")) for m in request.messages if m.get("role") == "user")
    match = SUM.search(text)
    assert match, text
    a, b = int(match.group(1)), int(match.group(2))
    return (a - 1) // 3, a + b


class RoleModel:
    """A scripted solver: right on the rows in ``solves``, wrong elsewhere; on the rows in
    ``cut`` the right answer arrives with ``finish_reason: length`` (the output budget ran out)."""

    def __init__(self, *, solves: set[int], cut: set[int] | None = None) -> None:
        self.solves = solves
        self.cut = cut or set()

    def __call__(self, request: RecordedRequest) -> dict[str, Any]:
        index, total = row_index(request)
        right = index in self.solves or index in self.cut
        answer = total if right else total + 1
        return completion(
            f"Adding the numbers gives {answer}.\n#### {answer}",
            model=request.model or "",
            finish_reason="length" if index in self.cut else "stop",
        )


def role_models() -> dict[str, RoleModel]:
    """Small solves 1 of 4, Large 2 (a third right answer is cut by the budget), Hosted 4."""
    return {
        "small": RoleModel(solves={0}),
        "large": RoleModel(solves={0, 1}, cut={3}),
        "hosted": RoleModel(solves={0, 1, 2, 3}),
    }


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    protocol = current_protocol()
    with ModelServer() as server:
        for size, responder in role_models().items():
            server.models[protocol.required_role(size).model] = responder
        yield server


@pytest.fixture
def hosted_key(monkeypatch) -> str:
    monkeypatch.setenv(HOSTED_KEY_ENV, HOSTED_KEY)
    return HOSTED_KEY


def review_collection(*, solved: int, attempted: int) -> dict[str, Any]:
    """A current review's collection: ``attempted`` native attempts, ``solved`` passed."""
    reviews = []
    for index in range(attempted):
        passed = index < solved
        reviews.append(
            {
                "id": f"source:x/task/{index}/runtime",
                "method": "runtime_execution",
                "reviewer": {"id": "native-verifier", "label": "Native task verifier"},
                "attributes": {
                    "verification": {"status": "verified", "score": float(passed), "passed": passed}
                },
            }
        )
        reviews.append(
            {
                "id": f"source:x/task/{index}/judge/1",
                "method": "model_judgment",
                "reviewer": {"id": "model:test/judge", "label": "test/judge"},
            }
        )
    subjects = [{"id": f"source:x/task/{i}", "level": "task"} for i in range(attempted)]
    return {"schema_version": "0.3.0", "subjects": subjects, "reviews": reviews}


@pytest.fixture
def good_source(db, tmp_path) -> dict[str, Any]:
    """The Good gsm8k source, its current review's saved collection and its Atlas row."""
    collection_path = tmp_path / "review" / "quality-reviews.json"
    collection_path.parent.mkdir()
    collection_path.write_text(
        json.dumps(review_collection(solved=2, attempted=3)), encoding="utf-8"
    )
    review_id = hashlib.sha256(collection_path.read_bytes()).hexdigest()
    row = make_row(SOURCE_ID, dataset_revision=DATASET_REVISION)
    source = Source.objects.create(id=SOURCE_ID, origin=row["origin"], payload=row)
    Review.objects.create(
        id=review_id,
        source=source,
        collection=json.loads(collection_path.read_text()),
        kind="rating",
        published_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    )
    Source.objects.filter(id=SOURCE_ID).update(
        quality="good",
        review_id=review_id,
        review_source_revision=row["dataset_revision"],
        review_verifier_revision=row["verifier_revision"],
    )
    refresh_display_state(source_ids=[SOURCE_ID])
    source = Source.objects.get(id=SOURCE_ID)
    row_path = tmp_path / "atlas-row.json"
    row_path.write_text(json.dumps(source_row(source)), encoding="utf-8")
    return {"review_id": review_id, "collection": collection_path, "row": row_path}


ConfigWriter = Callable[..., Path]


def config_document(
    *, server: ModelServer, checkout: Path, tasks: Path, row: Path, collection: Path
) -> dict[str, Any]:
    protocol = current_protocol()
    blocks = production.gsm8k_blocks(
        checkout=checkout, tasks=tasks, agent_timeout=60, worker_timeout=120
    )
    blocks["source"].update(grading_snapshot=str(row), current_review=str(collection))

    def role(size: str, **extra: Any) -> dict[str, Any]:
        return {
            "base_url": server.base_url,
            "model": protocol.required_role(size).model,
            "timeout": 10,
            "retry_backoff_seconds": 0.01,
            **extra,
        }

    return {
        "roles": {
            "small": role("small", revision="1" * 40, serving_configuration={"engine": "test"}),
            "large": role("large", revision="2" * 40),
            "hosted": role("hosted", provider="Together", api_key_env=HOSTED_KEY_ENV),
        },
        **blocks,
    }


@pytest.fixture
def write_config(tmp_path, checkout, model_server, hosted_key, good_source) -> ConfigWriter:
    """Writes a config over 4 gsm8k rows; ``change`` edits the document before it is saved."""

    def write(
        *, change: Callable[[dict[str, Any]], None] | None = None, name: str = "config.json"
    ) -> Path:
        tasks = write_parquet(tmp_path / "data" / "train.parquet", gsm8k_rows(4))
        document = config_document(
            server=model_server,
            checkout=checkout,
            tasks=tasks,
            row=good_source["row"],
            collection=good_source["collection"],
        )
        if change is not None:
            change(document)
        path = tmp_path / name
        path.write_text(json.dumps(document, indent=2), encoding="utf-8")
        return path

    return write
