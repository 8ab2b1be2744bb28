"""Shared fixtures: catalog rows and artifacts built with the product's own export code."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from atlas.artifact.catalog_artifact import catalog_revision, write_document
from atlas.artifact.definitions import derived_fields, load_rows

# One Chromium session for the browser tests of every folder.
from tests.browser.session import browser, page  # noqa: F401
from tests.live_requests import IN_FLIGHT

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
DEFINITIONS = ROOT / "fixtures" / "sources"


def pytest_collection_modifyitems(config, items):
    from django.db import connection

    for item in items:
        if "browser" in item.keywords:
            item.add_marker(pytest.mark.slow)  # a browser is another process too
    _slow_first_in_each_share(items)
    if connection.vendor == "postgresql":
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (set DATABASE_URL)")
    for item in items:
        if "postgres_only" in item.keywords:
            item.add_marker(skip)


def _slow_first_in_each_share(items: list[pytest.Item]) -> None:
    """Under ``make test`` (xdist's worksteal) each worker is handed a contiguous share of the
    collected tests, in the same proportions as here, and idle workers steal from the end of a
    busy one's share. Each share runs its slow tests first, so the run ends on short tests, not
    on a 20-second walk begun by a worker that was otherwise done (the run's last 21 s, once).
    Tests stay with their module's share, so module fixtures are built as often as before."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers < 2:
        return
    ordered: list[pytest.Item] = []
    start = 0
    for index in range(workers):
        size = (len(items) - start) // (workers - index)  # xdist's own split of the pending tests
        share = items[start : start + size]
        ordered += [item for item in share if "slow" in item.keywords]
        ordered += [item for item in share if "slow" not in item.keywords]
        start += size
    items[:] = ordered


@pytest.fixture(autouse=True)
def _transactional_teardown(request):
    """A live-server test's requests finish before its database is touched again. A
    transactional test's database is flushed afterwards with plain DELETEs on SQLite, in an
    order that varies with the hash seed; the defect triggers refuse deleting an open issue while
    its source exists. Remove the issues first, as the defect service would (PostgreSQL flushes
    with TRUNCATE, which fires no row trigger)."""
    transactional = {"transactional_db", "live_server"} & set(request.fixturenames)
    if not transactional:
        yield
        return
    request.getfixturevalue("transactional_db")
    yield
    from django.db import connection, transaction

    if "live_server" in request.fixturenames:
        # The pages are closed by now (set up after this fixture); a request they left in
        # flight must finish before the shared connection is cleared and flushed.
        IN_FLIGHT.wait_until_quiet()

    from reviews.defect_invariant import defect_writer
    from reviews.models import VerifierIssue

    if connection.vendor == "sqlite":
        with transaction.atomic(), defect_writer():
            VerifierIssue.objects.all().delete()


@pytest.fixture(autouse=True)
def _isolated_settings(settings, tmp_path_factory):
    settings.ATLAS_SYNC_LOCK_DIR = tmp_path_factory.mktemp("locks")
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.ATLAS_PUBLIC_URL = "http://atlas.test"


def make_row(source_id: str = "MarinSkyRL:example", **overrides: Any) -> dict[str, Any]:
    """A valid exported row with derived fields consistent with its tags."""
    origin, _, key = source_id.partition(":")
    tags = overrides.pop("tags", ["rlvr", "single-turn"])
    row: dict[str, Any] = {
        "id": source_id,
        "name": key,
        "display_name": overrides.pop("display_name", f"example/{key}"),
        "origin": origin,
        "family": "math-answer",
        "tags": tags,
        "task_count": 100,
        "notes": "",
        "dataset_id": f"example/{key}",
        "dataset_revision": "a" * 40,
        "url": f"https://huggingface.co/datasets/example/{key}",
        "canonical_source": f"example/{key}",
        "canonical_url": f"https://huggingface.co/datasets/example/{key}",
        "verifier_name": "gsm8k",
        "verifier_revision": "b" * 64,
        "verifier_url": "",
        **derived_fields(tags),
        "pipeline": None,
        "quality": None,
        "review_url": None,
        "review_date": None,
        "review_source_revision": None,
        "review_verifier_revision": None,
        "difficulty": None,
        "traces": None,
    }
    row.update(overrides)
    return row


@pytest.fixture
def write_catalog(tmp_path) -> Callable[..., Path]:
    counter = {"n": 0}

    def write(rows: list[dict[str, Any]], **document: Any) -> Path:
        counter["n"] += 1
        path = tmp_path / f"catalog-{counter['n']}.json"
        if document:
            body = {"schema_version": 1, "revision": catalog_revision(rows), "sources": rows}
            body.update(document)
            path.write_text(json.dumps(body), encoding="utf-8")
        else:
            write_document(rows=sorted(rows, key=lambda r: r["id"]), output=path)
        return path

    return write


@pytest.fixture(scope="session")
def packaged_rows() -> list[dict[str, Any]]:
    return load_rows(DEFINITIONS)


@pytest.fixture
def packaged_catalog(tmp_path, packaged_rows) -> Path:
    path = tmp_path / "packaged-catalog.json"
    write_document(rows=packaged_rows, output=path)
    return path
