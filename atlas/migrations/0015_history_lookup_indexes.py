"""Drop the history table's own indexes of ``run_id`` and ``source_id`` (and the ``LIKE`` twin of
the latter): the ``(run_id, source_id)`` unique constraint and the ``(source_id, at)`` index lead
with those columns and serve every lookup by either, and the history's only pattern match is none.
Every sync writes a history row per source it adds, retires or changes, so the three indexes were a
third of a first sync's history write. Django's ``AlterField`` leaves a foreign key's index in place
on PostgreSQL, so the indexes are dropped by name (the model's ``db_index=False`` is the state)."""

import django.db.models.deletion
from django.db import migrations, models

from atlas.db.vendor_sql import vendor_step

INDEXES = {
    "catalog_source_changes_run_id_2e1771a3": ("run_id", ""),
    "catalog_source_changes_source_id_c3f6a80a": ("source_id", ""),
    "catalog_source_changes_source_id_c3f6a80a_like": ("source_id", " text_pattern_ops"),
}
DROP = tuple(f"DROP INDEX IF EXISTS {name}" for name in INDEXES)
CREATE = tuple(
    f"CREATE INDEX IF NOT EXISTS {name} ON catalog_source_changes ({column}{opclass})"
    for name, (column, opclass) in INDEXES.items()
)
SQLITE = [name for name in INDEXES if not name.endswith("_like")]


class Migration(migrations.Migration):
    dependencies = [("atlas", "0014_drop_payload_digest")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="sourcechange",
                    name="run",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="changes",
                        to="atlas.refreshrun",
                    ),
                ),
                migrations.AlterField(
                    model_name="sourcechange",
                    name="source",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="changes",
                        to="atlas.source",
                    ),
                ),
            ],
            database_operations=[
                vendor_step(
                    install={
                        "postgresql": DROP,
                        "sqlite": tuple(f"DROP INDEX IF EXISTS {name}" for name in SQLITE),
                    },
                    remove={
                        "postgresql": CREATE,
                        "sqlite": tuple(
                            f"CREATE INDEX IF NOT EXISTS {name} ON catalog_source_changes "
                            f"({INDEXES[name][0]})"
                            for name in SQLITE
                        ),
                    },
                    what="history lookup indexes",
                )
            ],
        )
    ]
