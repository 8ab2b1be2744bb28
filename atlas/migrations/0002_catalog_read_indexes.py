"""PostgreSQL-only support for the catalog read path: an ICU collation with numeric ordering for
case-insensitive natural sorting ("item2" before "item10") and a trigram index for the search
substring match. SQLite needs neither (it sorts by lowercased text and scans for search)."""

from django.db import migrations

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


def _run(statements):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in statements:
            schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [("atlas", "0001_initial")]

    operations = [migrations.RunPython(_run(FORWARD), _run(BACKWARD))]
