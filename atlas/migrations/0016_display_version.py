"""The display version's one row (``atlas.models.DisplayVersion``): bumped by every write of
display columns, so the counts of a view can be kept until the next one."""

from django.db import migrations, models


def create_the_row(apps, schema_editor):
    apps.get_model("atlas", "DisplayVersion").objects.get_or_create(pk=1)


class Migration(migrations.Migration):
    dependencies = [
        ("atlas", "0015_history_lookup_indexes"),
    ]

    operations = [
        migrations.CreateModel(
            name="DisplayVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("version", models.BigIntegerField(null=True)),
            ],
            options={
                "db_table": "catalog_display_version",
            },
        ),
        migrations.RunPython(create_the_row, migrations.RunPython.noop),
    ]
