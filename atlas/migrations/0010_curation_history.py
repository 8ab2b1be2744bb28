"""The catalog history records curators' actions too: review and difficulty publications, defect
confirmations and resolutions — entries without a sync run, with when they happened, who did them,
the review and issue they concern and a note.

Every entry now carries its own time (``at``; a sync's entries take their run's start), so the
history of a source and the API list sort on one column. On SQLite, changing the run reference and
the check constraints rebuilds the table, which drops its triggers: the history reference triggers
of migration 0009 are removed first and installed again at the end (PostgreSQL keeps them).
"""

import importlib

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Q, Subquery

from atlas.db.vendor_sql import vendor_step

_history_triggers = importlib.import_module("atlas.migrations.0009_history_source_check")
SYNC_KINDS = ["added", "retired", "returned", "changed"]
CURATION_KINDS = [
    "review_published", "defect_confirmed", "defect_resolved", "difficulty_published",
]  # fmt: skip
KIND_CHOICES = [
    ("added", "Added"),
    ("retired", "Retired"),
    ("returned", "Returned"),
    ("changed", "Changed"),
    ("review_published", "Review published"),
    ("defect_confirmed", "Defect confirmed"),
    ("defect_resolved", "Defect resolved"),
    ("difficulty_published", "Difficulty published"),
]


def _sqlite_only(statements: list[str]) -> dict[str, list[str]]:
    return {"postgresql": [], "sqlite": statements}


def stamp_sync_entries(apps, schema_editor) -> None:
    """A sync's entries happened when their run started."""
    change = apps.get_model("atlas", "SourceChange")
    run = apps.get_model("atlas", "RefreshRun")
    change.objects.filter(at__isnull=True).update(
        at=Subquery(run.objects.filter(id=OuterRef("run_id")).values("started_at")[:1])
    )


class Migration(migrations.Migration):
    dependencies = [("atlas", "0009_history_source_check")]

    operations = [
        vendor_step(
            install=_sqlite_only(_history_triggers.SQLITE_REMOVE),
            remove=_sqlite_only(_history_triggers.SQLITE_INSTALL),
            what="history reference triggers (lifted while the table is rebuilt)",
        ),
        migrations.AddField(
            model_name="sourcechange", name="at", field=models.DateTimeField(null=True)
        ),
        migrations.RunPython(stamp_sync_entries, migrations.RunPython.noop),
        migrations.AlterField(model_name="sourcechange", name="at", field=models.DateTimeField()),
        migrations.AddField(
            model_name="sourcechange",
            name="actor",
            field=models.TextField(blank=True, db_default=""),
        ),
        migrations.AddField(
            model_name="sourcechange",
            name="review_id",
            field=models.TextField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="sourcechange",
            name="issue_url",
            field=models.TextField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="sourcechange",
            name="note",
            field=models.TextField(blank=True, db_default=""),
        ),
        migrations.AlterField(
            model_name="sourcechange",
            name="run",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="changes",
                to="atlas.refreshrun",
            ),
        ),
        migrations.AlterField(
            model_name="sourcechange",
            name="kind",
            field=models.TextField(choices=KIND_CHOICES),
        ),
        migrations.AlterModelOptions(name="sourcechange", options={"ordering": ["-at", "-id"]}),
        migrations.RemoveConstraint(
            model_name="sourcechange", name="catalog_source_changes_kind_valid"
        ),
        migrations.AddConstraint(
            model_name="sourcechange",
            constraint=models.CheckConstraint(
                condition=Q(kind__in=SYNC_KINDS + CURATION_KINDS),
                name="catalog_source_changes_kind_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="sourcechange",
            constraint=models.CheckConstraint(
                condition=Q(run__isnull=False, kind__in=SYNC_KINDS)
                | Q(run__isnull=True, kind__in=CURATION_KINDS),
                name="catalog_source_changes_run_iff_sync",
            ),
        ),
        migrations.RemoveIndex(model_name="sourcechange", name="catalog_changes_source"),
        migrations.AddIndex(
            model_name="sourcechange",
            index=models.Index(fields=["source", "at"], name="catalog_changes_source_at"),
        ),
        migrations.AddIndex(
            model_name="sourcechange",
            index=models.Index(
                condition=Q(run__isnull=True), fields=["at"], name="catalog_changes_curation_at"
            ),
        ),
        vendor_step(
            install=_sqlite_only(_history_triggers.SQLITE_INSTALL),
            remove=_sqlite_only(_history_triggers.SQLITE_REMOVE),
            what="history reference triggers",
        ),
    ]
