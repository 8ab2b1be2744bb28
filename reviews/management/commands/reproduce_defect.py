"""``reproduce_defect``: re-run suspected saved native inputs and write the supplemental collection
that confirms a defect. A thin shell over ``reviews.production.curation``; needs no database."""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from reviews.management.production_commands import progress_stream, refusals_as_command_errors
from reviews.production.curation.cases import DEFECT_KINDS, EXPECTATIONS, Answer
from reviews.production.curation.reproduce import SEVERITIES, ReproduceOptions, reproduce_defect
from reviews.production.curation.saved_runs import SavedAttempt
from reviews.production.runtime.terminal import shown


def unclaimed_note(unclaimed: list[tuple[SavedAttempt, Answer]]) -> str:
    """The run's other rejected attempts, each with its answer: validate_fix will require them to
    stay rejected, so a correct one among them must be claimed too — now, while nothing is
    published, or later as a reproduction added to the open defect."""
    listed = "; ".join(
        f"{attempt.execution_path} {shown(_last_line(answer.text))!r}"
        for attempt, answer in unclaimed
    )
    return (
        f"Note: {len(unclaimed)} other attempt(s) of the run were rejected too: {listed}. "
        "validate_fix keeps their answers as incorrect-answer controls that must stay rejected "
        "after the fix. If one is correct, it shows the same defect: before publishing, run "
        "reproduce_defect again into a new --output naming it with --attempt as well (or add it "
        "later: reproduce it alone, publish it, and confirm_verifier_issue adds it to the open "
        "defect)."
    )


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:80] if lines else ""


class Command(BaseCommand):
    help = (
        "Re-run saved native inputs of a review run through the same native worker at the "
        "recorded verifier revision (no model call) and, when every case contradicts the "
        "expectation, write a supplemental verifier_defect collection for publish_review and "
        "confirm_verifier_issue."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--run-dir",
            type=Path,
            required=True,
            help="The review run: a make_review output or a fetch_review copy of a published one.",
        )
        parser.add_argument(
            "--attempt",
            action="append",
            default=[],
            dest="attempts",
            metavar="ATTEMPT",
            help="An attempt under suspicion: NNNN or tasks/NNNN (its finished attempt), or the "
            "path of an execution folder in the run (tasks/NNNN/execution-NNN, or a reused "
            "panel's reused/…/execution-NNN); repeat for every attempt that shows the defect.",
        )
        parser.add_argument(
            "--failed-attempts",
            action="store_true",
            help="Every finished attempt the run's verifier rejected, when each of their answers "
            "shows the defect (e.g. with --expect accepted: you expect every one accepted); "
            "leave out the ones that do not with --except-attempt.",
        )
        parser.add_argument(
            "--except-attempt",
            action="append",
            default=[],
            dest="except_attempts",
            metavar="ATTEMPT",
            help="An attempt --failed-attempts would take that does not show the defect (a "
            "genuinely wrong answer); repeatable.",
        )
        parser.add_argument(
            "--kind",
            required=True,
            choices=sorted(DEFECT_KINDS),
            help="What is defective: the verifier, the task import, or the judge output.",
        )
        parser.add_argument(
            "--issue-url",
            required=True,
            help="The GitHub issue describing the defect (https://github.com/OWNER/REPO/issues/N).",
        )
        parser.add_argument(
            "--expect",
            required=True,
            choices=sorted(EXPECTATIONS),
            help="What should happen to each answer: accepted (it is correct), rejected (it is "
            "wrong) or graded (the environment grades it without an error, e.g. judge examples "
            "parse).",
        )
        parser.add_argument(
            "--saved-answer",
            action="store_true",
            help="Replay each attempt's saved solver answers (the default when no answer is "
            "named).",
        )
        parser.add_argument(
            "--reference-answer",
            action="store_true",
            help="Replay the task's reference answer (extras.reward_spec.ground_truth) written "
            "with --answer-template.",
        )
        parser.add_argument(
            "--answer-template",
            default="{reference}",
            help="How the reference answer is written, e.g. '#### {reference}' (default "
            "'{reference}').",
        )
        parser.add_argument(
            "--answer",
            action="append",
            default=[],
            dest="answers",
            metavar="TEXT",
            help="An answer the curator supplies, replayed for every named attempt; repeatable.",
        )
        parser.add_argument(
            "--answer-file",
            action="append",
            default=[],
            type=Path,
            dest="answer_files",
            metavar="PATH",
            help="A file holding an answer to replay (UTF-8); repeatable.",
        )
        parser.add_argument(
            "--statement",
            help="The defect in the curator's words, put first in the finding.",
        )
        parser.add_argument(
            "--severity",
            default="high",
            choices=SEVERITIES,
            help="Severity of the defect (default high).",
        )
        parser.add_argument(
            "--curator",
            help="Who states the expectation (default: the login name).",
        )
        parser.add_argument(
            "--config",
            type=Path,
            help="A review config on this machine whose runtime names the MarinSkyRL checkout "
            "and interpreters (default: the runtime the run recorded; required when the run "
            "was fetched from an Atlas).",
        )
        parser.add_argument(
            "--output",
            type=Path,
            required=True,
            help="New directory for the reproduction and its supplemental collection.",
        )

    def handle(self, *args, **options) -> None:
        with refusals_as_command_errors():
            result = reproduce_defect(
                options=ReproduceOptions(
                    run_dir=options["run_dir"],
                    attempts=tuple(options["attempts"]),
                    kind=options["kind"],
                    issue_url=options["issue_url"],
                    expect=options["expect"],
                    output=options["output"],
                    saved_answer=options["saved_answer"],
                    reference_answer=options["reference_answer"],
                    answers=tuple(options["answers"]),
                    answer_files=tuple(options["answer_files"]),
                    answer_template=options["answer_template"],
                    statement=options["statement"],
                    severity=options["severity"],
                    curator=options["curator"],
                    config=options["config"],
                    failed_attempts=options["failed_attempts"],
                    except_attempts=tuple(options["except_attempts"]),
                ),
                stderr=progress_stream(self),
            )
        review_id = hashlib.sha256(result.collection_path.read_bytes()).hexdigest()
        output = shlex.quote(str(result.output))
        source = shlex.quote(result.source_id)
        issue = shlex.quote(options["issue_url"])
        self.stdout.write(
            f"Reproduced {len(result.observations)} of {len(result.observations)} case(s); "
            f"saved the supplemental collection {review_id} to {result.collection_path}\n"
            f"Next: python manage.py publish_review --run-dir {output} --atlas-id {source}\n"
            f"Then: python manage.py confirm_verifier_issue --atlas-id {source} "
            f"--issue-url {issue} --review-run-dir {output}"
        )
        if result.unclaimed:
            self.stdout.write(unclaimed_note(result.unclaimed))
