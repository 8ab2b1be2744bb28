"""``make_difficulty``: measure a Good source's shared sample with the protocol's Small, Large and
Hosted models and write a run directory ``publish_difficulty`` accepts. A thin
shell over ``difficulty.production``; it needs no Atlas database."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandParser

from difficulty.production.errors import UsageError
from difficulty.production.followups import KINDS, parse_followup
from difficulty.production.pipeline import DEFAULT_JOBS, DifficultyOptions, make_difficulty
from reviews.management.production_commands import (
    ProductionCommand,
    progress_stream,
    refusals_as_command_errors,
)


class Command(ProductionCommand):
    help = (
        "Attempt one seeded task sample with the protocol's Small, Large and Hosted models through "
        "the native verifiers and write difficulty.json with every attempt in --output."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--config", type=Path, required=True, help="JSON difficulty configuration (roles, "
            "runtime, source; see fixtures/difficulty/difficulty-config.example.json).",
        )  # fmt: skip
        parser.add_argument(
            "--atlas-id", required=True, help="Atlas source ID to measure (must be Good)."
        )
        parser.add_argument("-n", "--n", type=int, required=True, help="Shared sample size (> 0).")
        parser.add_argument("--seed", type=int, default=42, help="Sampling seed (default 42).")
        parser.add_argument(
            "--output", type=Path, required=True, help="Run directory to create (or resume)."
        )
        parser.add_argument(
            "--resume",
            action="store_true",
            help="Reuse every finished attempt in --output; a finished run makes no model call. "
            "Changed production code is allowed and attested.",
        )
        parser.add_argument(
            "--jobs",
            type=int,
            default=DEFAULT_JOBS,
            help=f"Attempts run concurrently across roles (default {DEFAULT_JOBS}).",
        )
        parser.add_argument(
            "--protocol",
            metavar="ID",
            help="Protocol id from difficulty/protocols.toml (default: the current one).",
        )
        parser.add_argument(
            "--follow-up",
            choices=KINDS,
            help="Measure outside the protocol's settings, recording the changes as a follow-up.",
        )
        parser.add_argument(
            "--changed",
            action="append",
            default=[],
            metavar="ROLE.KEY=VALUE",
            help="With --follow-up: one changed setting or checkpoint, e.g. large.max_tokens=32768 "
            "or hosted.model=org/name (repeatable; VALUE is JSON or text).",
        )
        parser.add_argument("--reason", help="With --follow-up: why the settings change.")

    def handle(self, *args, **options) -> None:
        with refusals_as_command_errors():
            followup = None
            if options["follow_up"]:
                followup = parse_followup(
                    kind=options["follow_up"], changed=options["changed"], reason=options["reason"]
                )
            elif options["changed"] or options["reason"]:
                raise UsageError("--changed and --reason need --follow-up")
            result = make_difficulty(
                options=DifficultyOptions(
                    config=options["config"],
                    atlas_id=options["atlas_id"],
                    n=options["n"],
                    seed=options["seed"],
                    output=options["output"],
                    resume=options["resume"],
                    jobs=options["jobs"],
                    protocol=options["protocol"],
                    followup=followup,
                ),
                stderr=progress_stream(self),
            )
        counts = "; ".join(
            f"{model['size']} {model['solved']}/{model['verified']} solved"
            for model in result.report["models"]
        )
        self.stdout.write(f"Saved {result.report_path} ({counts})")
