"""Facet counts: every filter option says how many sources it would show under the other active
filters — the same count the API answers with that option chosen."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

import pytest

from atlas.filters import SourceFilterSet
from atlas.web.facets import FACETS, facet_counts
from tests.atlas.test_catalog_helpers import make_row, seed, set_state

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog(write_catalog):
    seed(
        write_catalog,
        [
            make_row("MarinSkyRL:a", display_name="Alpha", family="math-answer"),
            make_row("MarinSkyRL:b", display_name="Beta", tags=["rlvr", "multi-turn"]),
            make_row("MarinSkyRL:c", display_name="Gamma", tags=["alignment"], family=""),
            make_row("MarinSkyRL:d", display_name="Delta", tags=["rlvr", "benchmark"]),
            make_row("Task Trove:e", display_name="Echo", tags=["agentic", "multi-turn"]),
            make_row("Task Trove:f", display_name="Fox", tags=["agentic", "multi-turn"]),
            make_row("Task Trove:old", display_name="Old", tags=["excluded"]),
        ],
    )
    set_state("MarinSkyRL:a", effective_quality="good", difficulty_status="current",
              large_solved=1, large_verified=4)  # fmt: skip
    set_state("MarinSkyRL:b", effective_quality="good", difficulty_status="current",
              large_solved=4, large_verified=4)  # fmt: skip
    set_state("MarinSkyRL:d", effective_quality="some_issues", difficulty_status="historical")
    set_state("Task Trove:e", effective_quality="bad")
    set_state("Task Trove:f", difficulty_status="invalid")


def counts_for(query: str) -> dict[str, dict[str, int]]:
    filterset = SourceFilterSet(dict(parse_qsl(query)))
    assert filterset.is_valid(), filterset.errors
    return facet_counts(filterset=filterset).counts


def test_options_count_the_view_without_their_own_filter(catalog):
    counts = counts_for("type=RLVR")
    # The type options ignore the chosen type; Bad (Echo) and Excluded (Old) stay hidden.
    assert counts["type"] == {"": 5, "RLVR": 3, "Alignment": 1, "Agentic": 1}
    # The other facets count RLVR sources only.
    assert counts["turns"] == {"": 3, "Single-turn": 1, "Multi-turn": 1, "unknown": 1}
    assert counts["benchmark"] == {"": 3, "true": 1, "false": 2}
    assert counts["quality"] == {"": 3, "good": 2, "some_issues": 1}
    assert counts["difficulty"] == {"": 3, "current": 2, "historical": 1, "unmeasured": 1,
                                    "0-25": 1, "75-100": 1}  # fmt: skip
    assert counts_for("")["family"]["unknown"] == 1


def test_the_bad_option_counts_bad_sources_the_toggle_hides(catalog):
    counts = counts_for("turns=Multi-turn")
    # Choosing Bad shows Echo whatever the toggle; the quality's "All" hides it like the view does.
    assert counts["quality"] == {"": 2, "good": 1, "bad": 1, "unknown": 1}
    assert counts_for("turns=Multi-turn&show_bad=1")["quality"][""] == 3


QUERIES = [
    "", "type=RLVR", "turns=Multi-turn&show_bad=1", "quality=bad", "q=a", "show_excluded=1",
    "difficulty=current&benchmark=false", "family=unknown", "origin=Task Trove",
    "difficulty=0-25&type=RLVR&sort=-rows", "quality=bad&show_bad=1&turns=Multi-turn",
    "difficulty=unmeasured&quality=unknown", "difficulty_status=current&family=math-answer",
    "quality=good&show_bad=1&show_excluded=1",
]  # fmt: skip


@pytest.mark.parametrize("query", QUERIES)
def test_each_count_is_what_the_api_answers_for_that_option(client, catalog, query):
    counts = counts_for(query)
    base = dict(parse_qsl(query))
    for facet in FACETS:
        for option, count in counts[facet].items():
            chosen = {key: value for key, value in base.items() if key != facet}
            if option:
                chosen[facet] = option
            answer = client.get("/api/sources/?" + urlencode(chosen)).json()
            assert answer["count"] == count, (facet, option, chosen)


def test_all_facets_are_one_query(catalog, django_assert_num_queries):
    filterset = SourceFilterSet({"type": "RLVR", "q": "a"})
    assert filterset.is_valid()
    with django_assert_num_queries(1):
        facet_counts(filterset=filterset)


def test_the_page_asks_for_its_counts_apart(client, catalog, django_assert_num_queries):
    html = client.get("/?type=RLVR").content.decode()
    assert 'data-facets-url="/facets.json"' in html
    assert '<option value="RLVR" selected>RLVR</option>' in html  # the script adds "(3)"
    # The catalog's version and the counts (the page read the vocabulary of this inventory
    # version); asked again (paging and the open source do not change the view), the version.
    with django_assert_num_queries(2):
        first = client.get("/facets.json?type=RLVR").json()
    assert first == {"counts": counts_for("type=RLVR")}
    with django_assert_num_queries(1):
        answer = client.get("/facets.json?type=RLVR&page=2&source=MarinSkyRL:a")
    assert answer.status_code == 200
    assert answer.json() == {"counts": counts_for("type=RLVR")}
    # Read as leniently as the page: an unknown value is ignored.
    assert client.get("/facets.json?type=bogus").json() == {"counts": counts_for("")}
