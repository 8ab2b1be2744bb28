"""The one filter set and ordering."""

import pytest
from django.db import connection

from atlas.filters import (
    FILTER_NAMES,
    CatalogQuery,
    KeptFilterSets,
    SourceFilterSet,
    lenient_filterset,
)
from atlas.models import Source
from tests.atlas.test_catalog_helpers import make_row, seed, set_state

pytestmark = pytest.mark.django_db


def ids(data: dict) -> list[str]:
    filterset = SourceFilterSet(data)
    assert filterset.is_valid(), filterset.errors
    return list(filterset.qs.values_list("id", flat=True))


@pytest.fixture
def catalog(write_catalog):
    rows = [
        make_row("MarinSkyRL:alpha", display_name="Alpha set", family="math-answer",
                 tags=["rlvr", "single-turn", "benchmark", "gym/aime"], notes="Olympiad problems"),
        make_row("MarinSkyRL:beta", display_name="beta set", family="", tags=["alignment"],
                 task_count=None),
        make_row("MarinSkyRL:gen", display_name="Generator", family="reasoning-gym",
                 tags=["rlvr", "single-turn", "generator"], task_count=None),
        make_row("Task Trove:delta", display_name="Delta", family="terminal-agent",
                 tags=["agentic", "multi-turn"], task_count=5000),
        make_row("Task Trove:gone", display_name="Gone", family="terminal-agent",
                 tags=["agentic", "multi-turn", "excluded"], task_count=7),
    ]  # fmt: skip
    seed(write_catalog, rows)
    set_state("MarinSkyRL:alpha", effective_quality="good")
    set_state("MarinSkyRL:beta", effective_quality="bad")
    set_state("Task Trove:delta", effective_quality="some_issues")


def test_defaults_hide_bad_and_excluded_and_sort_by_name(catalog):
    assert ids({}) == ["MarinSkyRL:alpha", "Task Trove:delta", "MarinSkyRL:gen"]


def test_toggles_show_bad_and_excluded(catalog):
    assert "MarinSkyRL:beta" in ids({"show_bad": "1"})
    assert "Task Trove:gone" in ids({"show_excluded": "1"})
    assert len(ids({"show_bad": "1", "show_excluded": "1"})) == 5


def test_quality_bad_implies_bad_rows_shown(catalog):
    assert ids({"quality": "bad"}) == ["MarinSkyRL:beta"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"q": "  OLYMPIAD "}, ["MarinSkyRL:alpha"]),
        ({"q": "gym/aime"}, ["MarinSkyRL:alpha"]),
        ({"q": "task trove"}, ["Task Trove:delta"]),
        ({"origin": "Task Trove"}, ["Task Trove:delta"]),
        ({"type": "rlvr"}, ["MarinSkyRL:alpha", "MarinSkyRL:gen"]),
        ({"type": "agentic"}, ["Task Trove:delta"]),
        ({"type": "alignment", "show_bad": "1"}, ["MarinSkyRL:beta"]),
        ({"type": "unknown"}, []),
        ({"turns": "multi-turn"}, ["Task Trove:delta"]),
        ({"turns": "unknown", "show_bad": "1"}, ["MarinSkyRL:beta"]),
        ({"family": "reasoning-gym"}, ["MarinSkyRL:gen"]),
        ({"family": "unknown", "show_bad": "1"}, ["MarinSkyRL:beta"]),
        ({"benchmark": "true"}, ["MarinSkyRL:alpha"]),
        ({"benchmark": "false"}, ["Task Trove:delta", "MarinSkyRL:gen"]),
        ({"quality": "good"}, ["MarinSkyRL:alpha"]),
        ({"quality": "some_issues"}, ["Task Trove:delta"]),
        ({"quality": "unknown"}, ["MarinSkyRL:gen"]),
        ({"origin": "MarinSkyRL", "type": "rlvr", "q": "gen"}, ["MarinSkyRL:gen"]),
    ],
)
def test_each_filter(catalog, data, expected):
    assert ids(data) == expected


def test_difficulty_filters_use_the_current_large_measurement(write_catalog):
    rows = [make_row(f"MarinSkyRL:d{n}", display_name=f"d{n}") for n in range(8)]
    seed(write_catalog, rows)
    measured = {0: (0, 10), 1: (25, 100), 2: (26, 100), 3: (50, 100), 4: (75, 100), 5: (100, 100)}
    for n, (solved, verified) in measured.items():
        set_state(f"MarinSkyRL:d{n}", difficulty_status="current", large_solved=solved,
                  large_verified=verified, large_solve_rate=solved / verified)  # fmt: skip
    set_state("MarinSkyRL:d6", difficulty_status="historical")
    assert ids({"difficulty": "0-25"}) == ["MarinSkyRL:d0", "MarinSkyRL:d1"]
    assert ids({"difficulty": "25-50"}) == ["MarinSkyRL:d2", "MarinSkyRL:d3"]
    assert ids({"difficulty": "50-75"}) == ["MarinSkyRL:d4"]
    assert ids({"difficulty": "75-100"}) == ["MarinSkyRL:d5"]
    assert ids({"difficulty": "measured"}) == [f"MarinSkyRL:d{n}" for n in range(6)]
    assert ids({"difficulty": "historical"}) == ["MarinSkyRL:d6"]
    unmeasured = ids({"difficulty": "unmeasured"})
    assert unmeasured == ["MarinSkyRL:d6", "MarinSkyRL:d7"]


def test_zero_verified_never_matches_a_range(write_catalog):
    seed(write_catalog, [make_row("MarinSkyRL:z", display_name="z")])
    set_state("MarinSkyRL:z", difficulty_status="current", large_solved=0, large_verified=0)
    assert "MarinSkyRL:z" not in ids({"difficulty": "0-25"})


def test_unknown_values_are_errors_naming_the_parameter(catalog):
    for key, value in [("type", "x"), ("origin", "Nowhere"), ("family", "nope"), ("sort", "id"),
                       ("quality", "great"), ("difficulty", "10-20"), ("show_bad", "yes"),
                       ("benchmark", "yes"), ("difficulty_status", "measured")]:  # fmt: skip
        filterset = SourceFilterSet({key: value})
        assert not filterset.is_valid()
        assert list(filterset.errors) == [key]


def test_a_refused_value_is_named_with_the_values_the_filter_takes(catalog):
    """Values are matched as given after normalisation (case, older spellings): an origin with
    a stray space, or a null character, is refused with the list of valid values."""
    sort = SourceFilterSet({"sort": "-id"})
    assert not sort.is_valid()
    assert sort.errors["sort"] == [
        "“-id” is not a valid value. Valid: name, origin, dataset, rows, turns, type, "
        "benchmark, family, difficulty, quality, review_date, status. A - prefix sorts "
        "descending (-rows)."
    ]
    for value in (" Task Trove", "Task\x00Trove"):
        origin = SourceFilterSet({"origin": value})
        assert not origin.is_valid()
        assert origin.errors["origin"] == [
            f"“{value}” is not a valid value. Valid: MarinSkyRL, Task Trove."
        ]
    assert SourceFilterSet({"type": " rlvr ", "sort": "-ROWS"}).is_valid()


def test_lenient_reading_ignores_unknown_values_only(catalog):
    filterset = lenient_filterset(data={"type": "bogus", "origin": "Task Trove"})
    assert list(filterset.qs.values_list("id", flat=True)) == ["Task Trove:delta"]
    assert filterset.form.cleaned_data["type"] == ""


def test_filter_sets_alive_together_keep_their_own_values(catalog):
    agentic, rlvr = SourceFilterSet({"type": "agentic"}), SourceFilterSet({"type": "rlvr"})
    assert agentic.is_valid() and rlvr.is_valid()
    assert list(agentic.qs.values_list("id", flat=True)) == ["Task Trove:delta"]
    assert list(rlvr.qs.values_list("id", flat=True)) == ["MarinSkyRL:alpha", "MarinSkyRL:gen"]
    assert all(item.parent is agentic for item in agentic.filters.values())


def test_filter_sets_of_different_vocabularies_keep_their_own_choices(catalog):
    """An origin or family is valid against the vocabulary the filter set was given."""
    from atlas.selectors import CatalogVocabulary, OriginCount

    def vocabulary(origin: str, family: str) -> CatalogVocabulary:
        return CatalogVocabulary(origins=(OriginCount(origin=origin, total=1, excluded=0),),
                                 families=(family,), has_unknown_family=False)  # fmt: skip

    old = SourceFilterSet(
        {"origin": "Old", "family": "f-old"}, vocabulary=vocabulary("Old", "f-old")
    )
    new = SourceFilterSet(
        {"origin": "Old", "family": "f-old"}, vocabulary=vocabulary("New", "f-new")
    )
    assert old.is_valid()
    assert not new.is_valid() and sorted(new.errors) == ["family", "origin"]
    assert SourceFilterSet({"family": "unknown"}, vocabulary=vocabulary("New", "f-new")).errors
    # One form class for every filter set; each form has its own fields: a set that takes any
    # origin (checked by its rows) leaves the next one checking.
    anything = SourceFilterSet({"origin": "Nowhere"}, checked_by_rows=True)
    assert anything.is_valid() and type(anything.form) is type(old.form)
    assert anything.form.fields["origin"] is not old.form.fields["origin"]
    again = SourceFilterSet({"origin": "Nowhere"}, vocabulary=vocabulary("Old", "f-old"))
    assert again.errors == {"origin": ["“Nowhere” is not a valid value. Valid: Old."]}
    assert anything.refused_values() == SourceFilterSet({"origin": "Nowhere"}).errors


def test_a_new_origin_or_family_is_accepted_after_the_sync_that_brings_it(catalog, write_catalog):
    assert not SourceFilterSet({"origin": "Gym Hub"}).is_valid()  # builds this vocabulary's form
    assert not SourceFilterSet({"family": "new-family"}).is_valid()
    seed(write_catalog, [make_row("Gym Hub:one", display_name="One", family="new-family")])
    assert ids({"origin": "Gym Hub"}) == ["Gym Hub:one"]
    assert ids({"family": "new-family"}) == ["Gym Hub:one"]


def test_retired_sources_never_listed(catalog, write_catalog):
    seed(write_catalog, [make_row("MarinSkyRL:alpha", display_name="Alpha set")])
    assert "MarinSkyRL:gen" not in ids({"show_bad": "1", "show_excluded": "1"})
    assert Source.objects.filter(pk="MarinSkyRL:gen", active=False).exists()
    assert list(Source.objects.active().values_list("pk", flat=True)) == ["MarinSkyRL:alpha"]


# -- ordering --------------------------------------------------------------------------------
@pytest.fixture
def sortable(write_catalog):
    rows = [
        make_row("MarinSkyRL:e", display_name="item10", family="", task_count=None,
                 canonical_source="Zeta", tags=[]),
        make_row("MarinSkyRL:d", display_name="Item2", family="b-fam", task_count=5,
                 canonical_source="alpha", tags=["rlvr", "single-turn", "benchmark"]),
        make_row("MarinSkyRL:c", display_name="apple", family="A-fam", task_count=50,
                 canonical_source=None, tags=["agentic", "multi-turn"]),
        make_row("MarinSkyRL:b", display_name="apple", family="a-fam", task_count=5,
                 canonical_source="", tags=["alignment", "excluded"]),
        make_row("MarinSkyRL:a", display_name="", family="c-fam", task_count=None,
                 canonical_source="Beta", tags=["rlvr", "single-turn"]),
    ]  # fmt: skip
    seed(write_catalog, rows)
    set_state("MarinSkyRL:e", effective_quality="bad", large_solve_rate=0.9)
    set_state("MarinSkyRL:d", effective_quality="good", large_solve_rate=0.1)
    set_state("MarinSkyRL:c", effective_quality="some_issues", large_solve_rate=0.1)


def sorted_ids(sort: str) -> list[str]:
    return ids({"sort": sort, "show_bad": "1", "show_excluded": "1"})


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        # Ties by id ascending in both directions; empty and null last in both directions.
        ("dataset", ["d", "a", "e", "b", "c"]),
        ("-dataset", ["e", "a", "d", "b", "c"]),
        ("rows", ["b", "d", "c", "a", "e"]),
        ("-rows", ["c", "b", "d", "a", "e"]),
        ("family", ["b", "c", "d", "a", "e"]),
        ("-family", ["a", "d", "b", "c", "e"]),
        ("type", ["c", "b", "a", "d", "e"]),
        ("-type", ["a", "d", "b", "c", "e"]),
        ("turns", ["c", "a", "d", "b", "e"]),
        ("benchmark", ["a", "b", "c", "e", "d"]),
        ("-benchmark", ["d", "a", "b", "c", "e"]),
        ("quality", ["d", "c", "e", "a", "b"]),
        ("-quality", ["e", "c", "d", "a", "b"]),
        ("difficulty", ["c", "d", "e", "a", "b"]),
        ("-difficulty", ["e", "c", "d", "a", "b"]),
        ("status", ["a", "c", "d", "e", "b"]),
        ("-status", ["b", "a", "c", "d", "e"]),
    ],
)
def test_ordering(sortable, sort, expected):
    assert sorted_ids(sort) == [f"MarinSkyRL:{key}" for key in expected]


def test_name_sort_is_case_insensitive_with_empty_last(sortable):
    # PostgreSQL's ICU collation compares digit runs numerically; SQLite compares code points.
    natural = connection.vendor == "postgresql"
    items = ["d", "e"] if natural else ["e", "d"]
    assert sorted_ids("name") == [f"MarinSkyRL:{key}" for key in ["b", "c", *items, "a"]]
    assert sorted_ids("-name") == [f"MarinSkyRL:{key}" for key in [*items[::-1], "b", "c", "a"]]


def test_review_date_sorts_chronologically_with_undated_last(sortable):
    import datetime as dt

    set_state("MarinSkyRL:c", display_review_date=dt.datetime(2025, 3, 3, tzinfo=dt.UTC))
    set_state("MarinSkyRL:a", display_review_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    assert sorted_ids("review_date")[:2] == ["MarinSkyRL:a", "MarinSkyRL:c"]
    assert sorted_ids("-review_date")[:2] == ["MarinSkyRL:c", "MarinSkyRL:a"]
    assert sorted_ids("-review_date")[2:] == ["MarinSkyRL:b", "MarinSkyRL:d", "MarinSkyRL:e"]


def test_origin_sort_is_case_insensitive_with_id_ties(write_catalog):
    seed(write_catalog, [make_row("b:1"), make_row("A:2"), make_row("b:0")])
    assert ids({"sort": "origin"}) == ["A:2", "b:0", "b:1"]
    assert ids({"sort": "-origin"}) == ["b:0", "b:1", "A:2"]


def test_each_filter_set_filters_with_its_own_copies_of_the_filters(write_catalog):
    """The filters are copied per filter set (django-filter deep-copies them), each bound to its own
    filter set, so two views built one after the other keep their own filters."""
    seed(write_catalog, [make_row("MarinSkyRL:a"), make_row("MarinSkyRL:b", tags=["agentic"])])
    rlvr, agentic = SourceFilterSet({"type": "RLVR"}), SourceFilterSet({"type": "Agentic"})
    assert rlvr.filters["type"] is not agentic.filters["type"]
    assert rlvr.filters["type"].parent is rlvr and agentic.filters["type"].parent is agentic
    assert rlvr.is_valid() and agentic.is_valid()
    assert [s.id for s in rlvr.qs] == ["MarinSkyRL:a"]
    assert [s.id for s in agentic.qs] == ["MarinSkyRL:b"]


def _vocabulary(origin: str, family: str):
    from atlas.selectors import CatalogVocabulary, OriginCount

    return CatalogVocabulary(origins=(OriginCount(origin=origin, total=1, excluded=0),),
                             families=(family,), has_unknown_family=False)  # fmt: skip


def test_filter_names_are_the_filter_sets_parameters():
    assert set(FILTER_NAMES) == set(SourceFilterSet.base_filters)
    assert CatalogQuery.ORDER == FILTER_NAMES


def test_a_query_asked_again_is_served_by_its_kept_filter_set(catalog):
    """Kept per filter parameters (order and paging aside), vocabulary and checking: the same
    validated filter set, whose rows are a new queryset for every caller."""
    kept = KeptFilterSets()
    first = kept.get({"type": "RLVR", "sort": "-rows", "page": "2"}, checked_by_rows=True)
    again = kept.get({"page_size": "50", "sort": "-rows", "type": "rlvr"}, checked_by_rows=True)
    assert first.is_valid()
    assert kept.get({"sort": "-rows", "type": "RLVR"}, checked_by_rows=True) is first
    assert again is not first and again.form.cleaned_data == first.form.cleaned_data
    assert kept.get({"type": "RLVR", "sort": "-rows"}) is not first  # not checked by its rows
    rows = first.qs
    assert [source.id for source in rows] == ["MarinSkyRL:alpha", "MarinSkyRL:gen"]
    # another request's rows are read again, not the ones evaluated above
    set_state("MarinSkyRL:gen", effective_quality="bad")
    assert first.qs is not rows
    assert [source.id for source in first.qs] == ["MarinSkyRL:alpha"]
    # a refused value stays refused when asked again
    refused = kept.get({"type": "bogus"})
    assert not refused.is_valid() and kept.get({"type": "bogus"}) is refused
    assert sorted(refused.errors) == ["type"]


def test_a_kept_filter_set_filters_a_base_once(catalog, django_assert_num_queries):
    """The page's rows: its base filtered once per kept filter set, a new copy to each caller,
    so each request reads the rows again."""
    from atlas.web.catalog_rows import PAGE_ROWS

    filterset = lenient_filterset(data={"type": "RLVR", "sort": "-rows"})
    rows = filterset.filtered(PAGE_ROWS)
    assert str(rows.query) == str(filterset.filter_queryset(PAGE_ROWS.all()).query)
    assert [row["id"] for row in rows] == ["MarinSkyRL:alpha", "MarinSkyRL:gen"]
    set_state("MarinSkyRL:gen", effective_quality="bad")
    again = filterset.filtered(PAGE_ROWS)
    assert again is not rows
    with django_assert_num_queries(1):
        assert [row["id"] for row in again] == ["MarinSkyRL:alpha"]
    # another base is filtered apart
    assert [source.id for source in filterset.filtered(Source.objects.all())] == [
        "MarinSkyRL:alpha"
    ]


def test_a_kept_filter_set_follows_the_vocabulary(catalog, write_catalog):
    kept = KeptFilterSets(lenient=True)
    old, new = _vocabulary("Old", "f-old"), _vocabulary("New", "f-new")
    query = {"origin": "Old", "family": "f-old"}
    assert kept.get(query, vocabulary=old).ignored == {}
    assert kept.get(query, vocabulary=new).ignored == query
    assert kept.get(dict(query), vocabulary=_vocabulary("Old", "f-old")) is kept.get(
        query, vocabulary=old
    )
    # Without a vocabulary (nor rows to check them by), an origin or family is checked against
    # the current vocabulary every time, never against a kept one: a sync changes it.
    assert kept.get({"origin": "Gym Hub"}).ignored == {"origin": "Gym Hub"}
    seed(write_catalog, [make_row("Gym Hub:one", display_name="One", family="new-family")])
    assert kept.get({"origin": "Gym Hub"}).ignored == {}
    assert kept.get({"origin": "Gym Hub"}) is not kept.get({"origin": "Gym Hub"})


def test_refusing_values_by_the_vocabulary_leaves_the_filter_set_as_it_was(catalog):
    kept = KeptFilterSets()
    checked = kept.get({"origin": "Nowhere", "family": "f-old"}, checked_by_rows=True)
    refused = checked.refused_values(vocabulary=_vocabulary("Old", "f-old"))
    assert refused == {"origin": ["“Nowhere” is not a valid value. Valid: Old."]}
    assert checked.form.fields["origin"].values is None  # still taking any origin
    assert kept.get({"origin": "Nowhere", "family": "f-old"}, checked_by_rows=True) is checked
    assert checked.refused_values(vocabulary=_vocabulary("Nowhere", "f-new")) == {
        "family": ["“f-old” is not a valid value. Valid: f-new."]
    }
