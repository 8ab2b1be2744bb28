"""``import_audit``: an audit written outside the Atlas (a Task Trove dashboard note, a task audit)
as the imported collection publish_review accepts. A thin shell over
``reviews.production.curation.audits``; needs no database."""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from reviews.management.production_commands import refusals_as_command_errors
from reviews.production.curation.audits import NOTE_KEYS, ImportOptions, import_audit


class Command(BaseCommand):
    help = (
        "Make an audit written outside the Atlas (a Task Trove dashboard note, a task audit) "
        "into an imported collection for a source's review pool: the audit note (JSON: "
        + "; ".join(f"{key} — {meaning}" for key, meaning in NOTE_KEYS.items())
        + ") and the files it cites are checked and written into a new run directory, which "
        "publish_review publishes as kind imported. An imported audit never rates a source."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--note",
            type=Path,
            required=True,
            help="The audit note (JSON); the files its evidence names sit beside it.",
        )
        parser.add_argument(
            "--output", type=Path, required=True, help="New directory for the imported collection."
        )

    def handle(self, *args, **options) -> None:
        with refusals_as_command_errors():
            result = import_audit(
                options=ImportOptions(note=options["note"], output=options["output"])
            )
        review_id = hashlib.sha256(result.collection_path.read_bytes()).hexdigest()
        self.stdout.write(
            f"Imported the audit as {review_id} in {result.output}\n"
            f"Next: python manage.py publish_review --run-dir {shlex.quote(str(result.output))} "
            f"--atlas-id {shlex.quote(result.source_id)}\n"
            f"Then: python manage.py synthesise_source --atlas-id "
            f"{shlex.quote(result.source_id)} --config CONFIG --atlas URL --output DIR "
            "(a source synthesis that cites it)"
        )
