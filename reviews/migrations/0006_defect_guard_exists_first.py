"""The catalog_sources defect guard probes for an open issue with EXISTS before counting: the
trigger runs for every row a sync upserts, and almost none has an open issue.

PostgreSQL only has something to change: SQLite's guard triggers (0004) fire on a ``WHEN`` clause
that already tests for an open issue first. Backwards, PostgreSQL gets 0004's counting function
again."""

import importlib

from django.db import migrations

from atlas.db.vendor_sql import vendor_step

PREVIOUS = importlib.import_module(
    "reviews.migrations.0004_defect_invariant_display_and_resolution"
)

DISPLAY_CLEARED = (
    "difficulty_status", "difficulty_text", "difficulty_summary", "large_solve_rate",
    "large_solved", "large_verified",
)  # fmt: skip
_PG_CLEAR = "\n".join(f"            NEW.{column} := NULL;" for column in DISPLAY_CLEARED)
POSTGRES_INSTALL = [
    f"""
    CREATE OR REPLACE FUNCTION catalog_sources_defect_guard() RETURNS trigger AS $$
    DECLARE
        open_count integer;
    BEGIN
        IF NOT EXISTS (SELECT 1 FROM catalog_verifier_issues
                        WHERE source_id = NEW.id AND status = 'open') THEN
            RETURN NEW;
        END IF;
        SELECT count(*) INTO open_count FROM catalog_verifier_issues
         WHERE source_id = NEW.id AND status = 'open';
        IF NEW.quality IS NULL OR NEW.quality NOT IN ('some_issues', 'bad') THEN
            IF TG_OP = 'UPDATE' AND OLD.quality = 'bad' THEN
                NEW.quality := 'bad';
            ELSE
                NEW.quality := 'some_issues';
            END IF;
        END IF;
        NEW.difficulty := NULL;
        NEW.effective_quality := CASE WHEN NEW.quality = 'bad' THEN 'bad' ELSE 'some_issues' END;
        NEW.open_issue_count := open_count;
{_PG_CLEAR}
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """
]
# 0004's function statement, without its trigger statements (the trigger itself is unchanged).
POSTGRES_REMOVE = PREVIOUS.POSTGRES_INSTALL[:1]


class Migration(migrations.Migration):
    dependencies = [("reviews", "0005_vocabulary_labels")]

    operations = [
        vendor_step(
            install={"postgresql": POSTGRES_INSTALL, "sqlite": []},
            remove={"postgresql": POSTGRES_REMOVE, "sqlite": []},
            what="defect guard function",
        )
    ]
