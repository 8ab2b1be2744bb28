"""A PostgreSQL index for a family filter sorted by rows (``?family=…&sort=-rows``) at 100,000
sources. 0006's ``catalog_src_facet_counts`` leads with the interaction, so a family alone read
all of it and sorted the family's rows for every page. ``catalog_src_family_rows`` holds one
family's active entries in the list's order (``task_count DESC NULLS LAST, id``, as
``atlas.filters.ordering_for`` sorts), with what the hidden-row filters and the per-origin counts
read included: the count is an index-only scan of the family's entries, the page of rows by rows
descending is read from it in order. SQLite needs none."""

from django.db import migrations

from atlas.db.vendor_sql import vendor_step

FORWARD = (
    "CREATE INDEX IF NOT EXISTS catalog_src_family_rows ON catalog_sources "
    "(family, task_count DESC NULLS LAST, id) INCLUDE (origin, kind, status, effective_quality) "
    "WHERE active",
)
BACKWARD = ("DROP INDEX IF EXISTS catalog_src_family_rows",)
INDEXES = ("catalog_src_family_rows",)


class Migration(migrations.Migration):
    dependencies = [("atlas", "0010_curation_history")]

    operations = [
        vendor_step(
            install={"postgresql": FORWARD, "sqlite": ()},
            remove={"postgresql": BACKWARD, "sqlite": ()},
            what="catalog family index",
        )
    ]
