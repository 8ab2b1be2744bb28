"""PostgreSQL indexes for the unfiltered catalog at 100,000 sources: the default name sort is read
from an index in order (no sort of every row for a page of 100), and the view's counts per origin
come from a narrow covering index (an index-only scan instead of two scans of a wide table).
SQLite needs neither."""

from django.db import migrations

from atlas.db.vendor_sql import vendor_step

FORWARD = (
    "CREATE INDEX IF NOT EXISTS catalog_src_name_sort ON catalog_sources "
    "((NULLIF(display_name, '') COLLATE atlas_natural) ASC NULLS LAST, id) WHERE active",
    "CREATE INDEX IF NOT EXISTS catalog_src_view_counts ON catalog_sources "
    "(origin, status, effective_quality) INCLUDE (kind, task_count) WHERE active",
)
BACKWARD = (
    "DROP INDEX IF EXISTS catalog_src_view_counts",
    "DROP INDEX IF EXISTS catalog_src_name_sort",
)


class Migration(migrations.Migration):
    dependencies = [("atlas", "0004_source_changes_and_example_mark")]

    # SQLite needs none of it (nothing to run there).
    operations = [
        vendor_step(
            install={"postgresql": FORWARD, "sqlite": ()},
            remove={"postgresql": BACKWARD, "sqlite": ()},
            what="catalog list indexes",
        )
    ]
