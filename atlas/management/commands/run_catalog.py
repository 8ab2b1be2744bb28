"""python manage.py run_catalog [ADDRPORT]: migrate, export and sync the packaged catalog, then
serve it — in one process, so `make run` starts Django once instead of four times."""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = (
        "Prepare the database (migrate), build the catalog artifact from the packaged definitions, "
        "synchronise it, and serve the site with the development server. For `make run`."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "addrport", nargs="?", default="127.0.0.1:8000", help="host:port to serve on"
        )
        parser.add_argument(
            "--no-serve",
            action="store_true",
            help="only migrate, export and sync (what `make catalog` does), then exit",
        )

    def handle(self, *args: Any, addrport: str, no_serve: bool, **options: Any) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        call_command("export_catalog", stdout=self.stdout)
        call_command("sync_catalog", stdout=self.stdout, stderr=self.stderr)
        if no_serve:
            return
        host, _, port = addrport.rpartition(":")
        self.stdout.write(f"Serving the catalog on http://{host or '127.0.0.1'}:{port}/")
        call_command("runserver", addrport, use_reloader=False)
