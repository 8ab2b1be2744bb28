"""``attest_execution``: write the execution-implementation attestation
comparing the original run's execution script with the executed one, without importing either."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from difficulty.production.errors import DifficultyProductionError
from difficulty.production.execution import ROOTS
from difficulty.production.implementation_attestation import attest_execution


class Command(BaseCommand):
    help = (
        "Compare the parsed, normalised task loader, worker launcher and code-identity "
        "definitions (with what they reference and import) of two scripts; write the "
        "execution-implementation attestation."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--original", type=Path, required=True, help="The original run's execution script."
        )
        parser.add_argument(
            "--executed", type=Path, required=True, help="The script that executed the run."
        )
        parser.add_argument(
            "--output",
            type=Path,
            required=True,
            help="Attestation file to write (publish it as "
            "publication-execution-implementation-attestation.json in the run directory).",
        )
        parser.add_argument(
            "--root",
            action="append",
            default=[],
            metavar="NAME",
            help=f"A compared root definition (repeatable; default {', '.join(ROOTS)}).",
        )
        parser.add_argument(
            "--validation",
            action="append",
            default=[],
            metavar="PATH_OR_URL=DESCRIPTION",
            help="Evidence validating changed execution code: a run-relative path or an https "
            "URL, and what it shows (repeatable).",
        )

    def handle(self, *args, **options) -> None:
        validation = []
        for item in options["validation"]:
            target, separator, description = item.partition("=")
            if not separator or not target or not description:
                raise CommandError("--validation takes PATH_OR_URL=DESCRIPTION", returncode=2)
            key = "url" if target.startswith("https://") else "path"
            validation.append({key: target, "description": description})
        try:
            document = attest_execution(
                original=options["original"],
                executed=options["executed"],
                validation=validation or None,
                roots=tuple(options["root"]) or ROOTS,
            )
        except DifficultyProductionError as exc:
            raise CommandError(str(exc)) from None
        output: Path = options["output"]
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        state = "matching" if document["matching"] else "differing"
        self.stdout.write(f"Saved {state} execution-implementation attestation to {output}")
