"""Drop ``Source.payload_digest`` and the triggers that cleared it (migration ``0008``).

The digest stood for "validated before" keyed on a hand-kept list of source files, which missed
files the rules depend on (and the settings and library versions). The sync now validates every
row of every artifact and compares the stored payloads themselves; the per-origin revision skip
stays. Backwards, the column comes back empty together with its triggers (the SQL below is
``0008``'s)."""

from django.db import migrations

from atlas.db.vendor_sql import vendor_step

POSTGRES_RESTORE = [
    """
    CREATE OR REPLACE FUNCTION catalog_sources_digest_clear() RETURNS trigger AS $$
    BEGIN
        NEW.payload_digest := NULL;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """,
    # Only writes that set the payload and leave the digest as it was: the sync always writes
    # both, so its upserts never call the function.
    """
    CREATE TRIGGER catalog_sources_digest_clear
    BEFORE UPDATE OF payload ON catalog_sources
    FOR EACH ROW
    WHEN (NEW.payload_digest IS NOT DISTINCT FROM OLD.payload_digest
          AND NEW.payload IS DISTINCT FROM OLD.payload)
    EXECUTE FUNCTION catalog_sources_digest_clear()
    """,
]
POSTGRES_DROP = [
    "DROP TRIGGER IF EXISTS catalog_sources_digest_clear ON catalog_sources",
    "DROP FUNCTION IF EXISTS catalog_sources_digest_clear()",
]
# SQLite cannot assign NEW in a BEFORE trigger: clear the digest right after the write (recursive
# triggers are off, and the clearing UPDATE does not set the payload).
SQLITE_RESTORE = [
    """
    CREATE TRIGGER catalog_sources_digest_clear
    AFTER UPDATE OF payload ON catalog_sources
    WHEN NEW.payload_digest IS OLD.payload_digest AND NEW.payload IS NOT OLD.payload
    BEGIN
        UPDATE catalog_sources SET payload_digest = NULL WHERE id = NEW.id;
    END
    """,
]
SQLITE_DROP = ["DROP TRIGGER IF EXISTS catalog_sources_digest_clear"]


class Migration(migrations.Migration):
    dependencies = [("atlas", "0013_catalog_facet_options_index")]

    operations = [
        vendor_step(
            install={"postgresql": POSTGRES_DROP, "sqlite": SQLITE_DROP},
            remove={"postgresql": POSTGRES_RESTORE, "sqlite": SQLITE_RESTORE},
            what="payload digest triggers",
        ),
        migrations.RemoveField(model_name="source", name="payload_digest"),
    ]
