"""The PostgreSQL-only indexes of the catalog list (migrations 0002, 0005, 0006, 0011, 0013) exist
after migrating; their use is checked with EXPLAIN at 100,000 rows by ``benchmarks/catalog.py``."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection

pytestmark = [pytest.mark.django_db, pytest.mark.postgres_only]

LIST_INDEXES = (
    *importlib.import_module("atlas.migrations.0006_catalog_filter_indexes").INDEXES,
    *importlib.import_module("atlas.migrations.0011_catalog_family_rows_index").INDEXES,
    *importlib.import_module("atlas.migrations.0013_catalog_facet_options_index").INDEXES,
)


def test_catalog_list_indexes_exist():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'catalog_sources'"
        )
        found = dict(cursor.fetchall())
    expected = {"catalog_src_search_trgm", "catalog_src_name_sort", "catalog_src_view_counts",
                *LIST_INDEXES}  # fmt: skip
    assert expected <= set(found)
    # The sort keys match ordering_for(): nulls last, ties by id; partial on active rows.
    assert "task_count DESC NULLS LAST, id" in found["catalog_src_type_rows"]
    assert "INCLUDE (origin, kind, status, effective_quality)" in found["catalog_src_type_rows"]
    assert (
        "(family, task_count DESC NULLS LAST, id) INCLUDE (origin, kind, status, "
        "effective_quality)" in found["catalog_src_family_rows"]
    )
    # Every column a count reads, so the other facet filters count from the index alone.
    assert (
        "(turns, family, is_benchmark) INCLUDE (origin, kind, task_count, status, "
        "effective_quality, type)" in found["catalog_src_facet_counts"]
    )
    assert all(found[name].endswith("WHERE active") for name in LIST_INDEXES)


def test_a_family_sorted_by_rows_reads_its_own_index(client, write_catalog):
    """The family filter's page of rows by rows descending, as the API asks it, is read in order
    from the family's index (forced past the small table's sequential and bitmap scans; its count
    becomes an index-only scan of it once the visibility map is set, which the benchmark's
    100,000 vacuumed rows show and a test transaction cannot)."""
    from django.test.utils import CaptureQueriesContext

    from tests.atlas.test_catalog_helpers import make_row, seed

    seed(write_catalog, [make_row(f"MarinSkyRL:s{n}", family=("text-to-sql", "math")[n % 2],
                                  task_count=n) for n in range(600)])  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_sources")  # this test's rows, not an earlier test's
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/sources/?family=text-to-sql&sort=-rows&page_size=25")
    assert response.status_code == 200 and response.json()["count"] == 300
    # The page of rows (ordered and limited), wherever the count and the vocabulary check stand.
    (page,) = [
        q["sql"] for q in queries.captured_queries
        if "catalog_sources" in q["sql"] and "ORDER BY" in q["sql"] and "LIMIT" in q["sql"]
    ]  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute(f"EXPLAIN {page}")
        plan = "\n".join(line for (line,) in cursor.fetchall())
    assert "Index Scan using catalog_src_family_rows" in plan and "Sort" not in plan, plan


def test_the_facet_counts_read_only_their_index(write_catalog):
    """The filter options' counts (one grouped statement) read only columns that
    ``catalog_src_facet_options`` holds, so they can be an index-only scan of it. Which plan a
    test transaction gets depends on a visibility map it cannot set; the benchmark's 100,000
    vacuumed rows show the index-only scan (and ``benchmarks/list_endpoints.py`` counts full
    scans of /facets.json)."""
    import re

    from django.test.utils import CaptureQueriesContext

    from atlas.filters import SourceFilterSet
    from atlas.web.facets import facet_counts
    from tests.atlas.test_catalog_helpers import make_row, seed

    seed(write_catalog, [make_row(f"MarinSkyRL:s{n}", task_count=n) for n in range(40)])
    filterset = SourceFilterSet({"type": "RLVR", "quality": "good", "origin": "MarinSkyRL"})
    assert filterset.is_valid()
    with CaptureQueriesContext(connection) as queries:
        facet_counts(filterset=filterset)
    (statement,) = [q["sql"] for q in queries.captured_queries]
    read = set(re.findall(r'"catalog_sources"\."(\w+)"', statement))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'catalog_src_facet_options'"
        )
        (definition,) = cursor.fetchone()
    held = set(re.findall(r"\w+", definition.split(" USING btree ")[1]))
    assert read and read <= held, read - held
