import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from atlas.artifact.input_counts import InputCountError, count_parquet_rows


class Command(BaseCommand):
    help = (
        "Count rows of parquet inputs in a local Hugging Face download from their footers, after "
        "checking each file's recorded download revision. Prints a JSON map path -> rows. "
        "Reads no network resource."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--snapshot",
            type=Path,
            required=True,
            help="local download directory, including .cache/huggingface/download metadata",
        )
        parser.add_argument(
            "--revision", required=True, help="the commit every file must have been downloaded at"
        )
        parser.add_argument(
            "--files",
            required=True,
            help="parquet glob relative to the snapshot, e.g. data/*.parquet",
        )

    def handle(self, *args, snapshot, revision, files, **options):
        try:
            counts = count_parquet_rows(snapshot=snapshot, revision=revision, files=files)
        except InputCountError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(counts, indent=2, sort_keys=True))
