"""Migrations that run SQL per database: each runs the statements written for the database in
use, and refuses one with none written for it (``atlas.db.vendor_sql.vendor_step``)."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from django.db import migrations

# (module, the statements forwards and backwards on PostgreSQL and on SQLite)
STEPS = {
    "atlas.migrations.0002_catalog_read_indexes": ("FORWARD", "BACKWARD", None, None),
    "atlas.migrations.0005_catalog_list_indexes": ("FORWARD", "BACKWARD", None, None),
    "atlas.migrations.0006_catalog_filter_indexes": ("FORWARD", "BACKWARD", None, None),
    "atlas.migrations.0011_catalog_family_rows_index": ("FORWARD", "BACKWARD", None, None),
    "reviews.migrations.0002_defect_invariant_triggers": (
        "POSTGRES_INSTALL", "POSTGRES_REMOVE", "SQLITE_INSTALL", "SQLITE_REMOVE"),
    "reviews.migrations.0004_defect_invariant_display_and_resolution": (
        "POSTGRES_INSTALL", "POSTGRES_REMOVE", "SQLITE_INSTALL", "SQLITE_REMOVE"),
    "reviews.migrations.0006_defect_guard_exists_first": (
        "POSTGRES_INSTALL", "POSTGRES_REMOVE", None, None),
}  # fmt: skip


class Recorder:
    def __init__(self, vendor: str) -> None:
        self.connection = SimpleNamespace(vendor=vendor)
        self.executed: list[str] = []

    def execute(self, statement: str) -> None:
        self.executed.append(statement)


def step_of(module_name: str) -> migrations.RunPython:
    operations = importlib.import_module(module_name).Migration.operations
    (step,) = [item for item in operations if isinstance(item, migrations.RunPython)]
    return step


@pytest.mark.parametrize("module_name", sorted(STEPS))
def test_each_database_runs_its_own_statements(module_name):
    module = importlib.import_module(module_name)
    step = step_of(module_name)
    pg_forward, pg_backward, lite_forward, lite_backward = STEPS[module_name]
    for vendor, forward, backward in (("postgresql", pg_forward, pg_backward),
                                      ("sqlite", lite_forward, lite_backward)):  # fmt: skip
        for code, names in ((step.code, forward), (step.reverse_code, backward)):
            editor = Recorder(vendor)
            code(None, editor)
            assert editor.executed == list(getattr(module, names) if names else ())


@pytest.mark.parametrize("module_name", sorted(STEPS))
def test_a_database_without_statements_is_refused(module_name):
    step = step_of(module_name)
    for code in (step.code, step.reverse_code):
        with pytest.raises(RuntimeError, match=r"^No .+ for mysql$"):
            code(None, Recorder("mysql"))


def test_the_exists_first_guard_goes_back_to_the_counting_one():
    previous = importlib.import_module(
        "reviews.migrations.0004_defect_invariant_display_and_resolution"
    )
    module = importlib.import_module("reviews.migrations.0006_defect_guard_exists_first")
    (forward,), (backward,) = module.POSTGRES_INSTALL, module.POSTGRES_REMOVE
    assert "IF NOT EXISTS (SELECT 1 FROM catalog_verifier_issues" in forward
    assert backward == previous.POSTGRES_INSTALL[0]
    assert "CREATE OR REPLACE FUNCTION catalog_sources_defect_guard()" in backward
    assert "EXISTS" not in backward
