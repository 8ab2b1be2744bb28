"""Database triggers guaranteeing the open-defect invariant for every writer,
including bulk updates and raw SQL. Services check first so users get clear messages; these
triggers are the guarantee. Some issues and Bad are accepted as written (neither shows Good, and a
capped publication may move Bad to Some issues); Good or null becomes Bad again when the previous
value was Bad, else Some issues; difficulty is always cleared."""

from django.db import migrations

from atlas.db.vendor_sql import vendor_step

POSTGRES_INSTALL = [
    """
    CREATE OR REPLACE FUNCTION catalog_sources_defect_guard() RETURNS trigger AS $$
    BEGIN
        IF EXISTS (SELECT 1 FROM catalog_verifier_issues
                   WHERE source_id = NEW.id AND status = 'open') THEN
            IF NEW.quality IS NULL OR NEW.quality NOT IN ('some_issues', 'bad') THEN
                IF TG_OP = 'UPDATE' AND OLD.quality = 'bad' THEN
                    NEW.quality := 'bad';
                ELSE
                    NEW.quality := 'some_issues';
                END IF;
            END IF;
            NEW.difficulty := NULL;
        END IF;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER catalog_sources_defect_guard
    BEFORE INSERT OR UPDATE OF quality, difficulty ON catalog_sources
    FOR EACH ROW EXECUTE FUNCTION catalog_sources_defect_guard()
    """,
    """
    CREATE OR REPLACE FUNCTION catalog_verifier_issues_demote() RETURNS trigger AS $$
    BEGIN
        IF NEW.status = 'open' THEN
            UPDATE catalog_sources
               SET quality = CASE WHEN quality = 'bad' THEN 'bad' ELSE 'some_issues' END,
                   difficulty = NULL
             WHERE id = NEW.source_id;
        END IF;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER catalog_verifier_issues_demote
    AFTER INSERT OR UPDATE ON catalog_verifier_issues
    FOR EACH ROW EXECUTE FUNCTION catalog_verifier_issues_demote()
    """,
]
POSTGRES_REMOVE = [
    "DROP TRIGGER IF EXISTS catalog_verifier_issues_demote ON catalog_verifier_issues",
    "DROP FUNCTION IF EXISTS catalog_verifier_issues_demote()",
    "DROP TRIGGER IF EXISTS catalog_sources_defect_guard ON catalog_sources",
    "DROP FUNCTION IF EXISTS catalog_sources_defect_guard()",
]

# SQLite cannot assign NEW in a BEFORE trigger: repair the row right after the write instead
# (recursive triggers are off, so the repairing UPDATE does not fire these triggers again).
_SQLITE_OPEN = (
    "EXISTS (SELECT 1 FROM catalog_verifier_issues WHERE source_id = NEW.id AND status = 'open')"
)
_SQLITE_REPAIR = """
    UPDATE catalog_sources
       SET quality = CASE WHEN NEW.quality IN ('some_issues', 'bad') THEN NEW.quality
                          WHEN {old_bad} THEN 'bad' ELSE 'some_issues' END,
           difficulty = NULL
     WHERE id = NEW.id;
"""
SQLITE_INSTALL = [
    f"""
    CREATE TRIGGER catalog_sources_defect_guard_insert AFTER INSERT ON catalog_sources
    WHEN {_SQLITE_OPEN}
    BEGIN {_SQLITE_REPAIR.format(old_bad="0")} END
    """,
    f"""
    CREATE TRIGGER catalog_sources_defect_guard_update
    AFTER UPDATE OF quality, difficulty ON catalog_sources
    WHEN {_SQLITE_OPEN}
    BEGIN {_SQLITE_REPAIR.format(old_bad="OLD.quality = 'bad'")} END
    """,
    *(
        f"""
    CREATE TRIGGER catalog_verifier_issues_demote_{event.lower()}
    AFTER {event} ON catalog_verifier_issues
    WHEN NEW.status = 'open'
    BEGIN
        UPDATE catalog_sources
           SET quality = CASE WHEN quality = 'bad' THEN 'bad' ELSE 'some_issues' END,
               difficulty = NULL
         WHERE id = NEW.source_id;
    END
    """
        for event in ("INSERT", "UPDATE")
    ),
]
SQLITE_REMOVE = [
    "DROP TRIGGER IF EXISTS catalog_verifier_issues_demote_update",
    "DROP TRIGGER IF EXISTS catalog_verifier_issues_demote_insert",
    "DROP TRIGGER IF EXISTS catalog_sources_defect_guard_update",
    "DROP TRIGGER IF EXISTS catalog_sources_defect_guard_insert",
]


class Migration(migrations.Migration):
    dependencies = [("reviews", "0001_initial")]

    operations = [
        vendor_step(
            install={"postgresql": POSTGRES_INSTALL, "sqlite": SQLITE_INSTALL},
            remove={"postgresql": POSTGRES_REMOVE, "sqlite": SQLITE_REMOVE},
            what="defect-invariant triggers",
        )
    ]
