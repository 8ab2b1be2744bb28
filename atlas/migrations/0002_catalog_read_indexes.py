"""PostgreSQL-only support for the catalog read path: an ICU collation with numeric ordering for
case-insensitive natural sorting ("item2" before "item10") and a trigram index for the search
substring match. SQLite needs neither (it sorts by lowercased text and scans for search)."""

from django.db import migrations

from atlas.db.vendor_sql import vendor_step

FORWARD = (
    # Secondary strength ignores case (nondeterministic: equal keys then tie by source ID);
    # kn-true compares digit runs numerically.
    "CREATE COLLATION IF NOT EXISTS atlas_natural "
    "(provider = icu, locale = 'und-u-ks-level2-kn-true', deterministic = false)",
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX IF NOT EXISTS catalog_src_search_trgm "
    "ON catalog_sources USING gin (search_text gin_trgm_ops)",
)
BACKWARD = (
    "DROP INDEX IF EXISTS catalog_src_search_trgm",
    "DROP COLLATION IF EXISTS atlas_natural",
)


class Migration(migrations.Migration):
    dependencies = [("atlas", "0001_initial")]

    # SQLite needs none of it (nothing to run there).
    operations = [
        vendor_step(
            install={"postgresql": FORWARD, "sqlite": ()},
            remove={"postgresql": BACKWARD, "sqlite": ()},
            what="catalog read-path support",
        )
    ]
