import json

from django.core.management.base import BaseCommand, CommandError

from reviews.api.serializers import issue_as_json
from reviews.management.published_runs import (
    add_curator_option,
    add_review_choice,
    curator_name,
    published_review_id,
)
from reviews.services.defects import DefectRuleError, confirm_verifier_issue


class Command(BaseCommand):
    help = (
        "Record a confirmed verifier defect (a GitHub issue plus the supplemental review that "
        "reproduces it) and demote the source: Good becomes Some issues, difficulty is withheld. "
        "For a defect already open under the same issue, add the collection as a further "
        "reproduction (validate_fix then re-runs the failing inputs of every reproduction)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--atlas-id", required=True, help="the Atlas source ID")
        parser.add_argument(
            "--issue-url", required=True, help="https://github.com/<owner>/<repo>/issues/<n>"
        )
        add_review_choice(
            parser,
            id_option="--review-id",
            dir_option="--review-run-dir",
            what="the published supplemental collection confirming it",
        )
        add_curator_option(parser, action="confirms the defect")

    def handle(self, *args, atlas_id, issue_url, review_id, **options):
        if options["review_run_dir"] is not None:
            review_id = published_review_id(run_dir=options["review_run_dir"], atlas_id=atlas_id)
        try:
            issue = confirm_verifier_issue(
                source_id=atlas_id,
                issue_url=issue_url,
                review_id=review_id,
                actor=curator_name(options["curator"]),
            )
        except DefectRuleError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(issue_as_json(issue), indent=2))
        if issue.review_id != review_id:
            self.stderr.write(
                f"Added the reproduction to the open defect {issue_url}: validate_fix re-runs the "
                f"failing inputs of its {len(issue.reproduction_review_ids())} reproductions"
            )
