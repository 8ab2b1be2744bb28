"""``prepare_tasks``: a Task Trove source's catalog row and a local snapshot of its pinned
Parquet → the ``task_manifest`` records make_review reads. A thin shell over
``reviews.production.make_review.prepare_tasks``; needs no database (the row is a saved copy or
read over the Atlas API)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from reviews.management.production_commands import refusals_as_command_errors
from reviews.production.curation.atlas_row import read_atlas_row
from reviews.production.make_review.prepare_tasks import prepare_tasks


class Command(BaseCommand):
    help = (
        "Turn a Task Trove source's catalog row and a local snapshot of its pinned Parquet "
        "(download revision checked as count_inputs does) into task_manifest records of packed "
        "Harbor tasks for make_review."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--atlas-id", required=True, help="The Task Trove source's Atlas id.")
        parser.add_argument(
            "--atlas-row",
            type=Path,
            help="The source's row saved from /api/sources/<id>/ (instead of reading --atlas).",
        )
        parser.add_argument("--atlas", help="Base URL of the Atlas to read the row from.")
        parser.add_argument(
            "--snapshot",
            type=Path,
            required=True,
            help="Local download of the row's dataset, with .cache/huggingface/download metadata.",
        )
        parser.add_argument(
            "--files",
            help="Parquet glob relative to the snapshot (default: the row's pipeline file).",
        )
        parser.add_argument(
            "--output", type=Path, required=True, help="New directory for the task manifest."
        )

    def handle(self, *args, **options) -> None:
        with refusals_as_command_errors():
            row = read_atlas_row(
                source_id=options["atlas_id"],
                saved=options["atlas_row"],
                atlas=options["atlas"],
                missing="Provide --atlas-row or --atlas to read the source's catalog row",
            )
            prepared = prepare_tasks(
                row=row,
                snapshot=options["snapshot"],
                output=options["output"].absolute(),
                files=options["files"],
            )
        self.stdout.write(
            f"Prepared {prepared.count} task(s) of {prepared.source['source_id']} in "
            f"{prepared.manifest}\n"
            f"The review config's source: {json.dumps(prepared.source)}\n"
            f"Next: python manage.py make_review --config CONFIG --n N --output DIR, then "
            f"python manage.py publish_review --run-dir DIR --atlas-id "
            f"{shlex.quote(prepared.source['source_id'])}\n"
        )
