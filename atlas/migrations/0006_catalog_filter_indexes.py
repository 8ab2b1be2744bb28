"""PostgreSQL indexes for the filtered catalog at 100,000 sources. The list's WHERE
is ``active`` plus the filters, and by default hides Bad and Excluded rows; its ORDER BY puts
nulls last and ties by ``id`` ascending (``atlas.filters.ordering_for``), so a key that serves a
sort must be ``… NULLS LAST, id``.

* ``catalog_src_type_rows``: a type filter (the catalog's main facet), sorted by rows in either
  order of the counts: its count, the page's per-origin counts and the page of rows by rows
  descending are index-only scans of that type's entries (status, quality, origin and kind are
  included for the hidden-row filters and the counts).
* ``catalog_src_rows``: rows descending without a type filter; the other filters are checked on
  the rows read in order until the page is full. (Rows ascending is served by the plain
  ``catalog_src_task_count`` and an incremental sort on ``id``; the default name sort by 0005's
  ``catalog_src_name_sort``.)
* ``catalog_src_facet_counts``: the other facets (interaction, family, benchmark) with every column
  the counts read, so the counts of those filters — the API's count and the page's per-origin
  counts — are index-only scans too (a range of it for an interaction). The unfiltered counts keep
  0005's narrower ``catalog_src_view_counts``, the cheapest to read for the landing page.

SQLite needs neither."""

from django.db import migrations

from atlas.db.vendor_sql import vendor_step

FORWARD = (
    "CREATE INDEX IF NOT EXISTS catalog_src_type_rows ON catalog_sources "
    "(type, task_count DESC NULLS LAST, id) INCLUDE (origin, kind, status, effective_quality) "
    "WHERE active",
    "CREATE INDEX IF NOT EXISTS catalog_src_rows ON catalog_sources "
    "(task_count DESC NULLS LAST, id) WHERE active",
    "CREATE INDEX IF NOT EXISTS catalog_src_facet_counts ON catalog_sources "
    "(turns, family, is_benchmark) "
    "INCLUDE (origin, kind, task_count, status, effective_quality, type) WHERE active",
)
BACKWARD = (
    "DROP INDEX IF EXISTS catalog_src_facet_counts",
    "DROP INDEX IF EXISTS catalog_src_rows",
    "DROP INDEX IF EXISTS catalog_src_type_rows",
)
INDEXES = ("catalog_src_type_rows", "catalog_src_rows", "catalog_src_facet_counts")


class Migration(migrations.Migration):
    dependencies = [("atlas", "0005_catalog_list_indexes")]

    # SQLite needs none of it (nothing to run there).
    operations = [
        vendor_step(
            install={"postgresql": FORWARD, "sqlite": ()},
            remove={"postgresql": BACKWARD, "sqlite": ()},
            what="catalog filter indexes",
        )
    ]
