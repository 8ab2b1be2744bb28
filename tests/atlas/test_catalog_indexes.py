"""The PostgreSQL-only indexes of the catalog list (migrations 0002, 0005, 0006) exist after
migrating; their use is checked with EXPLAIN at 100,000 rows by ``benchmarks/catalog.py``."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection

pytestmark = [pytest.mark.django_db, pytest.mark.postgres_only]

LIST_INDEXES = importlib.import_module("atlas.migrations.0006_catalog_filter_indexes").INDEXES


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
    # Every column a count reads, so the other facet filters count from the index alone.
    assert (
        "(turns, family, is_benchmark) INCLUDE (origin, kind, task_count, status, "
        "effective_quality, type)" in found["catalog_src_facet_counts"]
    )
    assert all(found[name].endswith("WHERE active") for name in LIST_INDEXES)
