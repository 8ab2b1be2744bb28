"""python manage.py publish_examples: make the example reviews of ``make demo`` with the shipped
tools and publish them (``difficulty.examples``): a real make_review run on the gsm8k route of a
MarinSkyRL-shaped checkout, the example defect reproduced, confirmed, validated and resolved, and a
difficulty report, every review labelled as an example. Needs no network; about two minutes on a
2-core machine. Already published in this database → it says so and runs nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from difficulty.examples import ExampleWalkError, publish_examples


class Command(BaseCommand):
    help = (
        "Make the example reviews (clearly labelled examples) with make_review, reproduce_defect, "
        "validate_fix and make_difficulty against a bundled scripted chat server and the real "
        "skyrl_gym gsm8k verifier, and publish them, walking the example verifier defect from "
        "Good to confirmed to resolved."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--output",
            type=Path,
            default=Path(settings.BASE_DIR) / "var" / "examples",
            help="folder for the checkout, the inputs and every run directory (emptied first; "
            "default var/examples)",
        )

    def handle(self, *args, **options) -> None:
        started = time.monotonic()

        def progress(text: str) -> None:
            elapsed = time.monotonic() - started
            self.stderr.write(f"publish_examples: {elapsed:5.0f} s  {text}")

        try:
            results = publish_examples(output=options["output"], progress=progress)
        except (CommandError, ExampleWalkError) as exc:
            raise CommandError(f"publish_examples: {exc}") from exc
        self.stdout.write(json.dumps(results, indent=2, default=str))
