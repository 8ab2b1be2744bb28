"""The pure display rule's reading of a row: the curated overlay, the search text, and that it
reads the payload and curated columns it is given without changing them (the services hand it
their own mappings, uncopied)."""

from __future__ import annotations

from types import MappingProxyType

from atlas.rules.display_state import (
    CURATED_FIELDS,
    compute_display_state,
    overlay,
    search_text,
    shown,
)
from tests.conftest import make_row


def test_a_curated_review_hides_the_payloads_review_fields():
    payload = {"quality": "good", "traces": 3, "review_date": "2025-01-02"}
    curated = {"review_id": "r1", "quality": "bad"}
    assert overlay(payload=payload, curated=curated) == {
        name: curated.get(name) for name in CURATED_FIELDS
    }


def test_without_a_curated_review_each_curated_column_wins_alone():
    payload = {"quality": "good", "traces": 3, "difficulty": "easy"}
    curated = {"quality": None, "traces": 0, "review_id": None}
    shown_fields = overlay(payload=payload, curated=curated)
    assert shown_fields["quality"] == "good" and shown_fields["traces"] == 0
    assert shown_fields["difficulty"] == "easy" and shown_fields["review_date"] is None
    assert shown_fields == {
        name: shown(name, payload=payload, curated=curated) for name in CURATED_FIELDS
    }


def test_search_text_joins_the_set_fields_and_tags_lowercased():
    payload = {"id": "A:x/Y", "display_name": "Big Set", "notes": "", "family": None,
               "name": 0, "origin": "A", "tags": ["Math", "", "RLVR"]}  # fmt: skip
    assert search_text(payload) == "a:x/y big set a math rlvr"
    assert search_text({"id": "A:b", "tags": None}) == "a:b"


def test_the_display_rule_reads_its_inputs_without_changing_them():
    row = make_row("MarinSkyRL:a", review_date="2025-02-03", quality="good")
    curated = {"review_id": None, "quality": "bad"}
    state = compute_display_state(
        payload=MappingProxyType(row), curated=MappingProxyType(curated), active=True
    )
    assert state == compute_display_state(payload=dict(row), curated=dict(curated), active=True)
    assert state["effective_quality"] == "bad" and state["display_review_date_text"] == "2025-02-03"
    assert compute_display_state(payload=row, curated={}, active=True)["display_review_date"]
    no_date = compute_display_state(payload={**row, "review_date": None}, curated={}, active=True)
    assert no_date["display_review_date"] is None and no_date["display_review_date_text"] is None
