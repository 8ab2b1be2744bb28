from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from atlas.artifact.catalog_artifact import write_document
from atlas.artifact.definitions import DefinitionErrors, load_rows


class Command(BaseCommand):
    help = (
        "Export the checked-in source definitions (TOML) into the schema-1 catalog artifact. "
        "Every definition is checked first; on any violation nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--definitions",
            type=Path,
            default=None,
            help="directory of *.toml source definitions (default: fixtures/sources)",
        )
        parser.add_argument(
            "--output",
            type=Path,
            default=None,
            help="artifact to write (default: the ATLAS_CATALOG_PATH setting, dist/catalog.json)",
        )

    def handle(self, *args, definitions=None, output=None, **options):
        definitions = definitions or settings.ATLAS_DEFINITIONS_DIR
        output = output or settings.ATLAS_CATALOG_PATH
        try:
            rows = load_rows(definitions)
        except DefinitionErrors as exc:
            for line in exc.errors:
                self.stderr.write(line)
            raise CommandError(
                f"{len(exc.errors)} definition error(s); {output} was not written"
            ) from None
        try:
            revision = write_document(rows=rows, output=output)
        except OSError as exc:
            raise CommandError(f"Cannot write {output}: {exc.strerror or exc}") from None
        self.stdout.write(f"Exported {len(rows)} sources to {output} (revision {revision})")
