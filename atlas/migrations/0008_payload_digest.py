"""``Source.payload_digest``: the validation digest of the artifact row a payload was written from
(``atlas.validated_rows``), and the triggers that clear it when anything but the sync rewrites the
payload. Existing rows start without one: the next changed sync validates and compares them as
before and stores their digests."""

from django.db import migrations, models

from atlas.db.vendor_sql import vendor_step

POSTGRES_INSTALL = [
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
POSTGRES_REMOVE = [
    "DROP TRIGGER IF EXISTS catalog_sources_digest_clear ON catalog_sources",
    "DROP FUNCTION IF EXISTS catalog_sources_digest_clear()",
]
# SQLite cannot assign NEW in a BEFORE trigger: clear the digest right after the write (recursive
# triggers are off, and the clearing UPDATE does not set the payload).
SQLITE_INSTALL = [
    """
    CREATE TRIGGER catalog_sources_digest_clear
    AFTER UPDATE OF payload ON catalog_sources
    WHEN NEW.payload_digest IS OLD.payload_digest AND NEW.payload IS NOT OLD.payload
    BEGIN
        UPDATE catalog_sources SET payload_digest = NULL WHERE id = NEW.id;
    END
    """,
]
SQLITE_REMOVE = ["DROP TRIGGER IF EXISTS catalog_sources_digest_clear"]


class Migration(migrations.Migration):
    dependencies = [("atlas", "0007_export_tags")]

    operations = [
        migrations.AddField(
            model_name="source",
            name="payload_digest",
            field=models.CharField(blank=True, editable=False, max_length=64, null=True),
        ),
        vendor_step(
            install={"postgresql": POSTGRES_INSTALL, "sqlite": SQLITE_INSTALL},
            remove={"postgresql": POSTGRES_REMOVE, "sqlite": SQLITE_REMOVE},
            what="payload digest triggers",
        ),
    ]
