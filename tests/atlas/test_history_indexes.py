"""Every index of the catalog history earns its upkeep (each sync writes a history row per source
it adds, retires or changes): none repeats the leading columns of another, and the lookups the
history's readers make — by run, by source — each still have an index leading with them."""

from __future__ import annotations

import pytest
from django.db import connection

from atlas.models import SourceChange

pytestmark = pytest.mark.django_db


def history_indexes() -> dict[str, list[str]]:
    table = SourceChange._meta.db_table
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, table)
    return {
        name: list(details["columns"])
        for name, details in found.items()
        if details["index"] or details["unique"] or details["primary_key"]
    }


def test_no_history_index_is_a_prefix_of_another():
    indexes = history_indexes()
    redundant = [
        (name, other)
        for name, columns in indexes.items()
        for other, wider in indexes.items()
        if name != other and len(columns) <= len(wider) and wider[: len(columns)] == columns
    ]
    assert redundant == []


def test_lookups_by_run_and_by_source_have_an_index():
    leading = {columns[0] for columns in history_indexes().values() if columns}
    assert {"run_id", "source_id"} <= leading
