import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from atlas.services.sync import SyncRejected, sync_catalog

BUSY_EXIT_CODE = 75  # EX_TEMPFAIL: another sync holds the lock; try again later


class Command(BaseCommand):
    help = (
        "Validate the catalog artifact and reconcile the saved inventory with it. Prints the "
        "result as JSON. Exits 1 with the validation message on a bad artifact, 75 when another "
        "sync runs."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--catalog",
            type=Path,
            default=None,
            help="catalog artifact (default: the ATLAS_CATALOG_PATH setting, dist/catalog.json)",
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="rewrite every origin and recompute every display state even if unchanged",
        )

    def handle(self, *args, catalog=None, force=False, **options):
        path = catalog or settings.ATLAS_CATALOG_PATH
        try:
            result = sync_catalog(
                catalog_path=path,
                force=force,
                trigger="command",
                progress=self.stderr.write if options["verbosity"] >= 1 else None,
            )
        except SyncRejected as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(result, indent=2))
        if result.get("busy"):
            raise SystemExit(BUSY_EXIT_CODE)
