"""Schemathesis against the live test server: every operation of the OpenAPI schema, bounded
examples, zero failures — the schema describes every status code each endpoint returns, and
JSON routes answer JSON."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.generation import GenerationMode

from atlas.services.sync import sync_catalog
from tests.conftest import make_row

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
EXAMPLES = 25


def failures_of(operation, *, mode: GenerationMode = GenerationMode.POSITIVE) -> list[str]:
    found: list[str] = []

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES, deadline=None, database=None,
        suppress_health_check=list(HealthCheck),
    )  # fmt: skip
    def check(case) -> None:
        case.call_and_validate()

    try:
        check()
    except BaseException as exc:
        found.append(f"{operation.label}: {exc}")
    return found


def test_every_operation_conforms_to_the_schema(live_server, write_catalog):
    rows = [make_row("MarinSkyRL:gsm8k_example"), make_row("Task Trove:with space/x")]
    sync_catalog(catalog_path=write_catalog(rows), force=False, trigger="command")
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    failures = [failure for operation in operations for failure in failures_of(operation)]
    assert failures == [], "\n\n".join(failures)


def test_invalid_queries_of_the_lists_and_the_export_are_refused(live_server, write_catalog):
    """Schemathesis's negative data on the lists whose parameters it found read leniently: every
    value the schema does not allow is refused, never answered as if it were absent. The sources
    list and its export take an empty choice as the filter unset (the page's form sends every
    field), and their schema says so."""
    sync_catalog(catalog_path=write_catalog([make_row("MarinSkyRL:x")]), force=False,
                 trigger="command")  # fmt: skip
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json")
    listed = (
        "GET /api/changes/", "GET /api/reviews/", "GET /api/verifier-issues/",
        "GET /api/sources/", "GET /export.csv",
    )  # fmt: skip
    operations = [
        operation
        for result in schema.get_all_operations()
        if (operation := result.ok()).label in listed
    ]
    assert len(operations) == len(listed)
    failures = [
        failure
        for operation in operations
        for failure in failures_of(operation, mode=GenerationMode.NEGATIVE)
    ]
    assert failures == [], "\n\n".join(failures)
