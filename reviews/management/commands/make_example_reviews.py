"""python manage.py make_example_reviews --output DIR: example run directories for real sources."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from atlas.definitions import load_rows
from reviews.examples import write_examples


class Command(BaseCommand):
    help = "Write example review run directories (clearly labelled examples) for packaged sources."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--output", required=True, type=Path)
        parser.add_argument("--definitions", type=Path, default=None)

    def handle(self, *args, **options) -> None:
        written = generate(output=options["output"], definitions=options["definitions"])
        self.stdout.write(
            json.dumps([{"atlas_id": i, "run_dir": str(p)} for i, p in written], indent=2)
        )


def generate(*, output: Path, definitions: Path | None) -> list[tuple[str, Path]]:
    rows = load_rows(Path(definitions or settings.ATLAS_DEFINITIONS_DIR))
    written = write_examples(output=output, rows=rows)
    if not written:
        raise CommandError("None of the example sources is in the source definitions")
    return written
