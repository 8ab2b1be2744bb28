"""python manage.py create_curator --username NAME: a staff user with every curator permission."""

from __future__ import annotations

import getpass
import os

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from atlas.permissions import CURATOR_PERMISSIONS
from atlas.services.curators import create_curator

PASSWORD_VARIABLE = "ATLAS_CURATOR_PASSWORD"


class Command(BaseCommand):
    help = (
        "Create (or update) a curator: a staff user who may refresh the catalog, publish reviews "
        f"and confirm or resolve verifier defects. The password is asked for, or read from "
        f"${PASSWORD_VARIABLE}."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", required=True)
        parser.add_argument("--email", default="")

    def handle(self, *args, username: str, email: str, **options) -> None:
        password = os.environ.get(PASSWORD_VARIABLE)
        if not password:
            if not os.isatty(0):
                raise CommandError(f"Set {PASSWORD_VARIABLE} or run the command in a terminal")
            password = getpass.getpass("Password: ")
            if password != getpass.getpass("Password (again): "):
                raise CommandError("The passwords differ")
        try:
            user = create_curator(username=username, password=password, email=email)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write(
            f"Curator {user.get_username()} can sign in at /admin/ "
            f"({', '.join(CURATOR_PERMISSIONS)})."
        )
