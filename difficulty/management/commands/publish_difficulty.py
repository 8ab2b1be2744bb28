"""Python manage.py publish_difficulty --run-dir DIR --atlas-id ID."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from difficulty.publication import DifficultyPublicationError, publish_difficulty_run


class Command(BaseCommand):
    help = "Publish a difficulty report and its evidence for a Good, current source."

    def add_arguments(self, parser):
        parser.add_argument("--run-dir", required=True, type=Path)
        parser.add_argument("--atlas-id", required=True)

    def handle(self, *args, run_dir: Path, atlas_id: str, **options):
        try:
            result = publish_difficulty_run(run_dir=run_dir, atlas_id=atlas_id)
        except DifficultyPublicationError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(json.dumps(result, indent=2))
