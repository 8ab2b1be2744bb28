"""``validate_fix``: re-run the saved failing inputs and incorrect-answer controls at the repaired
checkout and write the resolution collection. A thin shell over
``reviews.production.curation``; needs no database (the Atlas is read over its API when named)."""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from reviews.management.production_commands import progress_stream, refusals_as_command_errors
from reviews.production.curation.cases import CONTROL_KINDS
from reviews.production.curation.validate import ValidateOptions, validate_fix


class Command(BaseCommand):
    help = (
        "Validate a verifier fix: re-run every saved failing input of the confirming collection "
        "and incorrect-answer controls through the native worker at the repaired checkout of a "
        "fresh make_review run (no model call) and, when the failing inputs now hold and every "
        "control is rejected, write the resolution collection for publish_review and "
        "resolve_verifier_issue."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--confirming",
            type=Path,
            action="append",
            default=[],
            help="A reproduction of the defect: a reproduce_defect output, or a fetch_review "
            "copy; repeat for each reproduction added to the open defect.",
        )
        parser.add_argument(
            "--issue-url",
            help="Instead of --confirming: the GitHub issue, whose reproductions (the confirming "
            "collection and any added since) are fetched from --atlas.",
        )
        parser.add_argument(
            "--review",
            type=Path,
            required=True,
            help="A finished make_review run of the source at the repaired checkout (its config's "
            "runtime runs the validation).",
        )
        parser.add_argument(
            "--atlas",
            help="Base URL of the Atlas to read the source's current row (and, with "
            "--issue-url, the confirming collection) from.",
        )
        parser.add_argument(
            "--atlas-row",
            type=Path,
            help="The source's row saved from /api/sources/<id>/ (instead of reading --atlas).",
        )
        parser.add_argument(
            "--skip-control",
            action="append",
            default=[],
            choices=CONTROL_KINDS,
            dest="skip_controls",
            help="Leave out one kind of generated control (saved_wrong, off_by_one, empty, "
            "unformatted) where it does not apply to the task; repeatable.",
        )
        parser.add_argument(
            "--control-answer",
            action="append",
            default=[],
            dest="control_answers",
            metavar="TEXT",
            help="A wrong answer that must still be rejected, tried on every failing input's "
            "task; repeatable.",
        )
        parser.add_argument("--curator", help="Who validates the fix (default: the login name).")
        parser.add_argument(
            "--config",
            type=Path,
            help="A review config on this machine whose runtime names the MarinSkyRL checkout "
            "and interpreters (default: the runtime the review recorded; required when the "
            "review was fetched from an Atlas).",
        )
        parser.add_argument(
            "--output",
            type=Path,
            required=True,
            help="New directory for the validation and the resolution collection.",
        )

    def handle(self, *args, **options) -> None:
        with refusals_as_command_errors():
            result = validate_fix(
                options=ValidateOptions(
                    review=options["review"],
                    output=options["output"],
                    confirming=tuple(options["confirming"]),
                    atlas=options["atlas"],
                    atlas_row=options["atlas_row"],
                    issue_url=options["issue_url"],
                    skip_controls=tuple(options["skip_controls"]),
                    control_answers=tuple(options["control_answers"]),
                    curator=options["curator"],
                    config=options["config"],
                ),
                stderr=progress_stream(self),
            )
        review_id = hashlib.sha256(result.collection_path.read_bytes()).hexdigest()
        output = shlex.quote(str(result.output))
        source = shlex.quote(result.source_id)
        self.stdout.write(
            f"Fix validated on {len(result.observations)} case(s); saved the resolution "
            f"collection {review_id} to {result.collection_path}\n"
            f"Next: python manage.py publish_review --run-dir {output} --atlas-id {source}\n"
            f"Then: python manage.py resolve_verifier_issue --atlas-id {source} --issue-url "
            f"{shlex.quote(result.issue_url)} --resolution-review-id {review_id}\n"
            f"Then publish it again: resolution alone never restores a rating."
        )
