"""The open-defect invariant for what users see, and resolution only through the service
(``reviews.defect_invariant`` explains the rules).

0002 repaired ``quality`` and ``difficulty`` only; the pages read the display columns, so a raw open
issue on a Good source still showed Good. Now a source with an open issue is repaired on every
write to the value the display state computes (capped quality and effective quality, difficulty and
its display columns cleared, the open-issue count), and the issue table refuses raw resolution,
raw deletion of an open issue and moving an issue between sources.
"""

from django.db import migrations

from atlas.db.vendor_sql import vendor_step

DISPLAY_CLEARED = (
    "difficulty_status", "difficulty_text", "difficulty_summary", "large_solve_rate",
    "large_solved", "large_verified",
)  # fmt: skip
REFUSED_RESOLUTION = "Verifier issues are resolved only by resolve_verifier_issue (a validated fix)"
REFUSED_DELETE = "An open verifier issue cannot be deleted; resolve it with a validated fix"
REFUSED_MOVE = "A verifier issue cannot move to another source"

_PG_CLEAR = "\n".join(f"            NEW.{column} := NULL;" for column in DISPLAY_CLEARED)
POSTGRES_INSTALL = [
    f"""
    CREATE OR REPLACE FUNCTION catalog_sources_defect_guard() RETURNS trigger AS $$
    DECLARE
        open_count integer;
    BEGIN
        SELECT count(*) INTO open_count FROM catalog_verifier_issues
         WHERE source_id = NEW.id AND status = 'open';
        IF open_count > 0 THEN
            IF NEW.quality IS NULL OR NEW.quality NOT IN ('some_issues', 'bad') THEN
                IF TG_OP = 'UPDATE' AND OLD.quality = 'bad' THEN
                    NEW.quality := 'bad';
                ELSE
                    NEW.quality := 'some_issues';
                END IF;
            END IF;
            NEW.difficulty := NULL;
            NEW.effective_quality := CASE WHEN NEW.quality = 'bad' THEN 'bad'
                                          ELSE 'some_issues' END;
            NEW.open_issue_count := open_count;
{_PG_CLEAR}
        END IF;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """,
    "DROP TRIGGER IF EXISTS catalog_sources_defect_guard ON catalog_sources",
    """
    CREATE TRIGGER catalog_sources_defect_guard
    BEFORE INSERT OR UPDATE ON catalog_sources
    FOR EACH ROW EXECUTE FUNCTION catalog_sources_defect_guard()
    """,
    f"""
    CREATE OR REPLACE FUNCTION catalog_verifier_issues_guard() RETURNS trigger AS $$
    DECLARE
        writer boolean := coalesce(current_setting('atlas.defect_writer', true), '') = 'on';
    BEGIN
        IF TG_OP = 'DELETE' THEN
            IF OLD.status = 'open' AND NOT writer
               AND EXISTS (SELECT 1 FROM catalog_sources WHERE id = OLD.source_id) THEN
                RAISE EXCEPTION '{REFUSED_DELETE}' USING ERRCODE = '23001';
            END IF;
            RETURN OLD;
        END IF;
        IF TG_OP = 'UPDATE' AND NEW.source_id IS DISTINCT FROM OLD.source_id THEN
            RAISE EXCEPTION '{REFUSED_MOVE}' USING ERRCODE = '23001';
        END IF;
        IF NOT writer AND (
            (TG_OP = 'INSERT' AND NEW.status <> 'open')
            OR (TG_OP = 'UPDATE' AND (NEW.status IS DISTINCT FROM OLD.status
                OR NEW.resolution_review_id IS DISTINCT FROM OLD.resolution_review_id))
        ) THEN
            RAISE EXCEPTION '{REFUSED_RESOLUTION}' USING ERRCODE = '23001';
        END IF;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """,
    """
    CREATE TRIGGER catalog_verifier_issues_guard
    BEFORE INSERT OR UPDATE OR DELETE ON catalog_verifier_issues
    FOR EACH ROW EXECUTE FUNCTION catalog_verifier_issues_guard()
    """,
]
POSTGRES_REMOVE = [
    "DROP TRIGGER IF EXISTS catalog_verifier_issues_guard ON catalog_verifier_issues",
    "DROP FUNCTION IF EXISTS catalog_verifier_issues_guard()",
]

# SQLite cannot assign NEW: repair right after the write (recursive triggers are off, so the
# repairing UPDATE does not fire this trigger again).
_SQLITE_OPEN = (
    "EXISTS (SELECT 1 FROM catalog_verifier_issues WHERE source_id = NEW.id AND status = 'open')"
)
_SQLITE_QUALITY = (
    "CASE WHEN NEW.quality IN ('some_issues', 'bad') THEN NEW.quality "
    "WHEN {old_bad} THEN 'bad' ELSE 'some_issues' END"
)
_SQLITE_CLEAR = ", ".join(f"{column} = NULL" for column in DISPLAY_CLEARED)
_SQLITE_REPAIR = """
    UPDATE catalog_sources
       SET quality = {quality},
           effective_quality = CASE WHEN ({quality}) = 'bad' THEN 'bad' ELSE 'some_issues' END,
           difficulty = NULL,
           open_issue_count = (SELECT count(*) FROM catalog_verifier_issues
                                WHERE source_id = NEW.id AND status = 'open'),
           {clear}
     WHERE id = NEW.id;
"""


def _sqlite_repair(old_bad: str) -> str:
    return _SQLITE_REPAIR.format(
        quality=_SQLITE_QUALITY.format(old_bad=old_bad), clear=_SQLITE_CLEAR
    )


SQLITE_INSTALL = [
    "DROP TRIGGER IF EXISTS catalog_sources_defect_guard_insert",
    "DROP TRIGGER IF EXISTS catalog_sources_defect_guard_update",
    f"""
    CREATE TRIGGER catalog_sources_defect_guard_insert AFTER INSERT ON catalog_sources
    WHEN {_SQLITE_OPEN}
    BEGIN {_sqlite_repair("0")} END
    """,
    f"""
    CREATE TRIGGER catalog_sources_defect_guard_update AFTER UPDATE ON catalog_sources
    WHEN {_SQLITE_OPEN}
    BEGIN {_sqlite_repair("OLD.quality = 'bad'")} END
    """,
    f"""
    CREATE TRIGGER catalog_verifier_issues_guard_delete BEFORE DELETE ON catalog_verifier_issues
    WHEN OLD.status = 'open' AND atlas_defect_writer() = 0
         AND EXISTS (SELECT 1 FROM catalog_sources WHERE id = OLD.source_id)
    BEGIN SELECT RAISE(ABORT, '{REFUSED_DELETE}'); END
    """,
    f"""
    CREATE TRIGGER catalog_verifier_issues_guard_move BEFORE UPDATE ON catalog_verifier_issues
    WHEN NEW.source_id IS NOT OLD.source_id
    BEGIN SELECT RAISE(ABORT, '{REFUSED_MOVE}'); END
    """,
    f"""
    CREATE TRIGGER catalog_verifier_issues_guard_resolve BEFORE UPDATE ON catalog_verifier_issues
    WHEN (NEW.status IS NOT OLD.status OR NEW.resolution_review_id IS NOT OLD.resolution_review_id)
         AND atlas_defect_writer() = 0
    BEGIN SELECT RAISE(ABORT, '{REFUSED_RESOLUTION}'); END
    """,
    f"""
    CREATE TRIGGER catalog_verifier_issues_guard_insert BEFORE INSERT ON catalog_verifier_issues
    WHEN NEW.status <> 'open' AND atlas_defect_writer() = 0
    BEGIN SELECT RAISE(ABORT, '{REFUSED_RESOLUTION}'); END
    """,
]
SQLITE_REMOVE = [
    "DROP TRIGGER IF EXISTS catalog_verifier_issues_guard_insert",
    "DROP TRIGGER IF EXISTS catalog_verifier_issues_guard_resolve",
    "DROP TRIGGER IF EXISTS catalog_verifier_issues_guard_move",
    "DROP TRIGGER IF EXISTS catalog_verifier_issues_guard_delete",
]


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0003_publication_lease"),
        ("atlas", "0003_source_open_issues"),
    ]

    operations = [
        vendor_step(
            install={"postgresql": POSTGRES_INSTALL, "sqlite": SQLITE_INSTALL},
            remove={"postgresql": POSTGRES_REMOVE, "sqlite": SQLITE_REMOVE},
            what="defect-invariant triggers",
        )
    ]
