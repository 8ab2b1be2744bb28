"""The catalog history's reference to its source, checked per statement instead of per row.

A row-level foreign key checked, and locked, every one of a 100,000-source first sync's history
rows at commit: a tenth of the sync. On PostgreSQL, statement-level triggers with transition
tables check the whole statement's rows in one anti-join instead, and refuse deleting a source
that has a history (sources are never deleted; they are retired). SQLite, the development
database, has no transition tables: a row-level check of inserted and updated history rows.
"""

import django.db.models.deletion
from django.db import migrations, models

from atlas.db.vendor_sql import vendor_step

_MISSING = "catalog history names a source that does not exist"
_KEPT = "a source with a catalog history is never deleted; retire it instead"

POSTGRES_INSTALL = [
    f"""
    CREATE OR REPLACE FUNCTION catalog_source_changes_sources_exist() RETURNS trigger AS $$
    BEGIN
        IF EXISTS (SELECT 1 FROM written
                   WHERE NOT EXISTS (SELECT 1 FROM catalog_sources s
                                     WHERE s.id = written.source_id)) THEN
            RAISE EXCEPTION '{_MISSING}' USING ERRCODE = 'foreign_key_violation';
        END IF;
        RETURN NULL;
    END;
    $$ LANGUAGE plpgsql
    """,
    *(
        f"""
    CREATE TRIGGER catalog_source_changes_sources_exist_{event.lower()}
    AFTER {event} ON catalog_source_changes REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_source_changes_sources_exist()
    """
        for event in ("INSERT", "UPDATE")
    ),
    f"""
    CREATE OR REPLACE FUNCTION catalog_sources_keep_history() RETURNS trigger AS $$
    BEGIN
        IF EXISTS (SELECT 1 FROM removed
                   JOIN catalog_source_changes c ON c.source_id = removed.id) THEN
            RAISE EXCEPTION '{_KEPT}' USING ERRCODE = 'foreign_key_violation';
        END IF;
        RETURN NULL;
    END;
    $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER catalog_sources_keep_history
    AFTER DELETE ON catalog_sources REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_sources_keep_history()
    """,
]
POSTGRES_REMOVE = [
    "DROP TRIGGER IF EXISTS catalog_sources_keep_history ON catalog_sources",
    "DROP FUNCTION IF EXISTS catalog_sources_keep_history()",
    "DROP TRIGGER IF EXISTS catalog_source_changes_sources_exist_update ON catalog_source_changes",
    "DROP TRIGGER IF EXISTS catalog_source_changes_sources_exist_insert ON catalog_source_changes",
    "DROP FUNCTION IF EXISTS catalog_source_changes_sources_exist()",
]
SQLITE_INSTALL = [
    f"""
    CREATE TRIGGER catalog_source_changes_sources_exist_{event.lower().replace(" ", "_")}
    BEFORE {event} ON catalog_source_changes
    WHEN NOT EXISTS (SELECT 1 FROM catalog_sources WHERE id = NEW.source_id)
    BEGIN SELECT RAISE(ABORT, '{_MISSING}'); END
    """
    for event in ("INSERT", "UPDATE OF source_id")
]
SQLITE_REMOVE = [
    "DROP TRIGGER IF EXISTS catalog_source_changes_sources_exist_update_of_source_id",
    "DROP TRIGGER IF EXISTS catalog_source_changes_sources_exist_insert",
]


class Migration(migrations.Migration):
    dependencies = [("atlas", "0008_payload_digest")]

    operations = [
        migrations.AlterField(
            model_name="sourcechange",
            name="source",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="changes",
                to="atlas.source",
            ),
        ),
        vendor_step(
            install={"postgresql": POSTGRES_INSTALL, "sqlite": SQLITE_INSTALL},
            remove={"postgresql": POSTGRES_REMOVE, "sqlite": SQLITE_REMOVE},
            what="history reference triggers",
        ),
    ]
