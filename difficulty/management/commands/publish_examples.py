"""python manage.py publish_examples: generate the example runs into var/examples and publish them
through the same services as publish_review and publish_difficulty. It lives in the difficulty app
because it publishes both kinds (an app imports only from the apps below it)."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from atlas.models import Source
from difficulty.examples import write_example_difficulty
from difficulty.publication import DifficultyPublicationError, publish_difficulty_run
from reviews.defects import DefectRuleError
from reviews.evidence_set import PUBLICATION_RESULT_FILE
from reviews.example_defect import DEFECT_EXAMPLE_SOURCE, publish_defect_example
from reviews.management.commands.make_example_reviews import generate
from reviews.publication import PublicationConflict, publish_run_directory
from reviews.validation import PublicationRejected


class Command(BaseCommand):
    help = (
        "Generate the example review runs (clearly labelled examples) and publish them into the "
        "configured database; Good examples also get an example difficulty report, and one "
        "example source walks through a confirmed and resolved verifier defect."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--output",
            type=Path,
            default=Path(settings.BASE_DIR) / "var" / "examples",
            help="folder for the generated run directories (default var/examples)",
        )
        parser.add_argument(
            "--definitions",
            type=Path,
            default=None,
            help="source definitions to pick example sources from (default ATLAS_DEFINITIONS_DIR)",
        )

    def handle(self, *args, **options) -> None:
        results = []
        for atlas_id, run_dir in generate(
            output=options["output"], definitions=options["definitions"]
        ):
            try:
                result = publish_run_directory(run_dir=run_dir, atlas_id=atlas_id)
            except (PublicationRejected, PublicationConflict) as exc:
                raise CommandError(f"{atlas_id}: {exc}") from exc
            text = json.dumps(result, indent=2) + "\n"
            (run_dir / PUBLICATION_RESULT_FILE).write_text(text, encoding="utf-8")
            results.append(result)
            if Source.objects.filter(id=atlas_id, effective_quality="good").exists():
                results.append(self._publish_difficulty(atlas_id=atlas_id, run_dir=run_dir))
        results.extend(self._defect_walk(output=options["output"]))
        self.stdout.write(json.dumps(results, indent=2, default=str))

    def _defect_walk(self, *, output: Path) -> list[dict]:
        source = Source.objects.filter(id=DEFECT_EXAMPLE_SOURCE, active=True).first()
        if source is None:
            return []
        try:
            return publish_defect_example(output=output / "defect-walk", row=source.payload)
        except (PublicationRejected, PublicationConflict, DefectRuleError) as exc:
            raise CommandError(f"{DEFECT_EXAMPLE_SOURCE}: {exc}") from exc

    def _publish_difficulty(self, *, atlas_id: str, run_dir: Path) -> dict:
        revision = Source.objects.get(id=atlas_id).payload.get("dataset_revision")
        difficulty_dir = run_dir.parent / f"{run_dir.name}-difficulty"
        difficulty_dir.mkdir(parents=True, exist_ok=True)
        write_example_difficulty(
            run_dir=difficulty_dir, atlas_id=atlas_id, source_revision=revision
        )
        try:
            return publish_difficulty_run(run_dir=difficulty_dir, atlas_id=atlas_id)
        except DifficultyPublicationError as exc:
            raise CommandError(f"{atlas_id}: {exc}") from exc
