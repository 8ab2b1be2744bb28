import json

from django.core.management.base import BaseCommand, CommandError

from reviews.api.serializers import issue_as_json
from reviews.management.published_runs import add_review_choice, published_review_id
from reviews.services.defects import DefectRuleError, resolve_verifier_issue


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
            )
        except DefectRuleError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(issue_as_json(issue), indent=2))
