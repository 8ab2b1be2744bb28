"""``fetch_review``: copy a published review's artifacts from an Atlas into a local directory,
each checked against its listed SHA-256 — the run directory the curators' tools read. Written in
full or not at all (``rundir.StagedOutput``): a refusal, Ctrl-C or a full disk leaves nothing."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from reviews.management.production_commands import refusals_as_command_errors
from reviews.production.runtime.atlas_client import AtlasClient
from reviews.production.runtime.rundir import StagedOutput


class Command(BaseCommand):
    help = (
        "Fetch a published review's artifacts (collection, run files, native inputs, solver "
        "turns, verifier logs) from an Atlas into a new directory, verifying every SHA-256."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--atlas", required=True, help="Base URL of the Atlas, e.g. https://atlas.example."
        )
        parser.add_argument(
            "--review-id", required=True, help="The published review (its collection's SHA-256)."
        )
        parser.add_argument(
            "--output", type=Path, required=True, help="New directory to write the artifacts to."
        )

    def handle(self, *args, **options) -> None:
        with (
            refusals_as_command_errors(),
            StagedOutput(options["output"], command="fetch_review") as stage,
        ):
            with AtlasClient(options["atlas"]) as atlas:
                record = atlas.fetch_review(review_id=options["review_id"], output=stage.path)
            output = stage.publish()
        self.stdout.write(
            f"Fetched {record['artifacts']} artifact(s) of {record['review_id']} "
            f"({record['source_id']}) to {output}"
        )
