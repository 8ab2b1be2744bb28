"""The catalog_sources defect guard probes for an open issue with EXISTS before counting: the
trigger runs for every row a sync upserts, and almost none has an open issue."""

from django.db import migrations

DISPLAY_CLEARED = (
    "difficulty_status", "difficulty_text", "difficulty_summary", "large_solve_rate",
    "large_solved", "large_verified",
)  # fmt: skip
_PG_CLEAR = "\n".join(f"            NEW.{column} := NULL;" for column in DISPLAY_CLEARED)
FUNCTION = f"""
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


def apply(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FUNCTION)


class Migration(migrations.Migration):
    dependencies = [("reviews", "0005_vocabulary_labels")]

    operations = [migrations.RunPython(apply, migrations.RunPython.noop)]
