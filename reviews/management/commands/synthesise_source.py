"""``synthesise_source``: one source synthesis from the reviews a source already has.
A thin shell over ``reviews.production.curation``; needs no database (the Atlas is read over its
API)."""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from reviews.management.production_commands import progress_stream, refusals_as_command_errors
from reviews.production.curation.synthesise import SynthesiseOptions, synthesise_source


class Command(BaseCommand):
    help = (
        "Synthesise a source from its existing review pool (imported audits, earlier reviews "
        "and syntheses) with one call to the configured model — no solver run, no three-judge "
        "panel — citing the reviews it relies on, keeping disagreements and stating "
        "applicability to the current release; publish the result with publish_review."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--atlas-id", required=True, help="The Atlas source ID.")
        parser.add_argument(
            "--config",
            type=Path,
            required=True,
            help="The source's review config: its model block makes the call (same client, "
            "retries and validation as make_review's coalescer).",
        )
        parser.add_argument(
            "--atlas",
            help="Base URL of the Atlas to read the source's row and review pool from.",
        )
        parser.add_argument(
            "--atlas-row",
            type=Path,
            help="The source's row saved from /api/sources/<id>/ (instead of reading --atlas).",
        )
        parser.add_argument(
            "--pool",
            action="append",
            default=[],
            type=Path,
            help="A fetch_review copy of one pool collection, instead of reading the pool from "
            "--atlas; repeatable.",
        )
        parser.add_argument(
            "--inspected-commit",
            help="The MarinSkyRL reference commit inspected for this synthesis (default: the "
            "HEAD of the config's runtime.marinskyrl_checkout).",
        )
        parser.add_argument(
            "--output", type=Path, required=True, help="New directory for the synthesis."
        )

    def handle(self, *args, **options) -> None:
        with refusals_as_command_errors():
            result = synthesise_source(
                options=SynthesiseOptions(
                    atlas_id=options["atlas_id"],
                    config=options["config"],
                    output=options["output"],
                    atlas=options["atlas"],
                    atlas_row=options["atlas_row"],
                    pool=tuple(options["pool"]),
                    inspected_commit=options["inspected_commit"],
                ),
                stderr=progress_stream(self),
            )
        review_id = hashlib.sha256(result.collection_path.read_bytes()).hexdigest()
        self.stdout.write(
            f"Synthesised {result.source_id} from {len(result.collections)} pool collection(s); "
            f"saved {review_id} to {result.collection_path}\n"
            f"Next: python manage.py publish_review --run-dir {shlex.quote(str(result.output))} "
            f"--atlas-id {shlex.quote(result.source_id)}"
        )
