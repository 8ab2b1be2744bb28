"""A PostgreSQL index for the catalog's facet counts (``atlas.web.facets``) at 100,000 sources. The
counts group the view by every faceted column at once; without an index holding those columns
that was a scan of the whole wide table (payloads included), most of the page's time.
``catalog_src_facet_options`` holds, for the active sources, what the counts group by (type,
interaction, family, benchmark, quality, difficulty status and the Large model's counts) and
what their WHERE reads besides (origin, status), so the counts are an index-only scan. A search
still reads its rows' search text. SQLite needs none."""

from django.db import migrations

from atlas.db.vendor_sql import vendor_step

FORWARD = (
    "CREATE INDEX IF NOT EXISTS catalog_src_facet_options ON catalog_sources (origin, status) "
    "INCLUDE (type, turns, family, is_benchmark, effective_quality, difficulty_status, "
    "large_solved, large_verified) WHERE active",
)
BACKWARD = ("DROP INDEX IF EXISTS catalog_src_facet_options",)
INDEXES = ("catalog_src_facet_options",)


class Migration(migrations.Migration):
    dependencies = [("atlas", "0012_measurement_status_label")]

    operations = [
        vendor_step(
            install={"postgresql": FORWARD, "sqlite": ()},
            remove={"postgresql": BACKWARD, "sqlite": ()},
            what="catalog facet options index",
        )
    ]
