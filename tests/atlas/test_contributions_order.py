"""The seam's display context providers run in ``INSTALLED_APPS`` order, and each sees what the
providers before it contributed (``atlas.contributions.gather_display_contexts``)."""

from __future__ import annotations

import pytest

from atlas import contributions
from atlas.rules.display_state import SourceSnapshot


def snapshot(source_id: str, *, stored: bool = True) -> SourceSnapshot:
    return SourceSnapshot(id=source_id, payload={}, active=True, curated={}, stored=stored)


def test_the_apps_register_their_providers_lowest_layer_first():
    assert contributions.registered_names()["display_context"] == [
        "reviews.defects_and_grading",
        "difficulty.summaries",
    ]


@pytest.fixture
def recording_providers():
    """Two providers registered after the apps' own, recording what they were shown."""
    kept = list(contributions._context_providers)
    contributions._context_providers.clear()
    seen: list[tuple[str, dict]] = []

    def first(*, sources, contexts):
        seen.append(("first", {key: contexts[key].open_issue_count for key in contexts}))
        return {"a": {"open_issue_count": 2}}

    def second(*, sources, contexts):
        seen.append(("second", {key: contexts[key].open_issue_count for key in contexts}))
        return {"a": {"review_is_example": True}, "b": {}}

    contributions.register_display_context(name="test.first", provider=first)
    contributions.register_display_context(name="test.second", provider=second)
    try:
        yield seen
    finally:
        contributions._context_providers[:] = kept


def test_each_provider_sees_the_contexts_of_the_ones_before(recording_providers):
    contexts = contributions.gather_display_contexts(sources=[snapshot("a"), snapshot("b")])
    assert recording_providers == [("first", {"a": 0, "b": 0}), ("second", {"a": 2, "b": 0})]
    assert (contexts["a"].open_issue_count, contexts["a"].review_is_example) == (2, True)
    assert contexts["b"] == contributions.EMPTY_CONTEXT


def test_rows_not_stored_yet_ask_no_provider(recording_providers):
    contexts = contributions.gather_display_contexts(sources=[snapshot("a", stored=False)])
    assert recording_providers == [] and contexts == {"a": contributions.EMPTY_CONTEXT}
