import json
import shlex

from django.core.management.base import BaseCommand, CommandError

from reviews.api.serializers import issue_as_json
from reviews.management.published_runs import (
    add_curator_option,
    add_review_choice,
    curator_name,
    published_review_id,
)
from reviews.services.defects import (
    RESTORE_GOOD,
    DefectRuleError,
    after_resolution,
    resolve_verifier_issue,
)


class Command(BaseCommand):
    help = (
        "Resolve an open verifier defect with a fresh native review proving a validated fix on "
        "the current revisions. Resolution never restores Good by itself."
    )

    def add_arguments(self, parser):
        parser.add_argument("--atlas-id", required=True, help="the Atlas source ID")
        parser.add_argument("--issue-url", required=True, help="the recorded GitHub issue URL")
        add_review_choice(
            parser,
            id_option="--resolution-review-id",
            dir_option="--resolution-run-dir",
            what="the published rating collection that validates the fix",
        )
        add_curator_option(parser, action="resolves the defect")

    def handle(self, *args, atlas_id, issue_url, resolution_review_id, **options):
        if options["resolution_run_dir"] is not None:
            resolution_review_id = published_review_id(
                run_dir=options["resolution_run_dir"], atlas_id=atlas_id
            )
        try:
            issue = resolve_verifier_issue(
                source_id=atlas_id,
                issue_url=issue_url,
                resolution_review_id=resolution_review_id,
                actor=curator_name(options["curator"]),
            )
        except DefectRuleError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(issue_as_json(issue), indent=2))
        left = after_resolution(source_id=atlas_id)
        if left == RESTORE_GOOD:
            run_dir = options["resolution_run_dir"]
            again = (
                f"python manage.py publish_review --run-dir {shlex.quote(str(run_dir))} "
                f"--atlas-id {shlex.quote(atlas_id)}"
                if run_dir is not None
                else f"publish_review of review {resolution_review_id}'s run directory"
            )
            self.stderr.write(f"Next: {left}: {again}")
        elif left:
            self.stderr.write(f"Next: {left}")
