"""``make_review``: produce a review run directory. A thin shell over
``reviews.production``; it needs no Atlas database."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from django.core.management.base import CommandParser

from reviews.management.production_commands import (
    ProductionCommand,
    progress_stream,
    refusals_as_command_errors,
)
from reviews.production.make_review.attestation_writer import (
    attest_dataset_revision,
    attest_native_revision,
)
from reviews.production.make_review.options import (
    DEFAULT_JOBS,
    DEFAULT_MAX_EVIDENCE_BYTES,
    RunOptions,
)
from reviews.production.runtime.errors import UsageError
from reviews.production.runtime.hosts import AttemptHosts, native_bytecode_cache
from reviews.production.runtime.launcher import start_configured_routes

if TYPE_CHECKING:
    from reviews.production.make_review.run import RunResult


class Command(ProductionCommand):
    help = (
        "Sample local tasks, run them through their native verifiers, ask three independent model "
        "judges about each attempt, synthesise and save every byte of evidence in --output."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--config", type=Path, help="JSON review configuration (required).")
        parser.add_argument(
            "-n", "--n", type=int, help="Number of tasks to sample (required, > 0)."
        )
        parser.add_argument("--seed", type=int, default=42, help="Sampling seed (default 42).")
        parser.add_argument(
            "--output", type=Path, required=True, help="Run directory to create (or resume)."
        )
        parser.add_argument(
            "--resume",
            action="store_true",
            help="Reuse completed work in an existing output directory with identical inputs.",
        )
        parser.add_argument(
            "--max-evidence-bytes",
            type=int,
            default=DEFAULT_MAX_EVIDENCE_BYTES,
            help=(
                f"Largest evidence bundle of one attempt and judge input, in bytes (default "
                f"{DEFAULT_MAX_EVIDENCE_BYTES}); over it the run stops. Judge calls are split to "
                "fit the endpoint's context (model.context_tokens) separately."
            ),
        )
        parser.add_argument(
            "--jobs",
            type=int,
            default=DEFAULT_JOBS,
            help=f"Tasks processed concurrently (default {DEFAULT_JOBS}); output is the same.",
        )
        parser.add_argument(
            "--reuse",
            action="append",
            default=[],
            metavar="RUN_OR_URL",
            help="An earlier review to cite where it still applies (same task, dataset revision "
            "and native code): its run directory, a fetch_review copy or its Atlas review URL; "
            "those tasks get no new attempt or judges. Repeatable.",
        )
        parser.add_argument(
            "--rejudge",
            action="append",
            default=[],
            metavar="TASK_ID",
            help="A sampled task to attempt and judge afresh even where --reuse applies (a "
            "disagreement the curator names). Repeatable.",
        )
        parser.add_argument(
            "--attest-native-revision",
            metavar="COMMIT",
            help="Attest that COMMIT keeps the native code the finished run in --output executed.",
        )
        parser.add_argument(
            "--atlas-row",
            type=Path,
            help="Atlas source row JSON whose verifier_url names the verifier path to compare.",
        )
        parser.add_argument(
            "--attest-dataset-revision",
            metavar="REVISION",
            help="Attest that the dataset file is byte-identical at REVISION and the executed one.",
        )
        parser.add_argument(
            "--dataset-file", help="Dataset file path, relative to each snapshot directory."
        )
        parser.add_argument(
            "--executed-snapshot", type=Path, help="Local snapshot of the executed revision."
        )
        parser.add_argument(
            "--current-snapshot", type=Path, help="Local snapshot of the attested REVISION."
        )
        parser.add_argument(
            "--component-selector", help="Component selection recorded with the attestation."
        )

    def handle(self, *args, **options) -> None:
        with refusals_as_command_errors():
            if options["attest_native_revision"] or options["attest_dataset_revision"]:
                self._attest(options)
                return
            if options["config"] is None:
                raise UsageError("--config is required")
            if options["n"] is None:
                raise UsageError("--n is required")
            hosts = AttemptHosts(cache_dir=native_bytecode_cache())
            with contextlib.closing(hosts):
                result = self._review(options, hosts=hosts)
        self.stdout.write(f"Saved {result.review_count} reviews to {result.collection_path}")

    def _review(self, options: dict, *, hosts: AttemptHosts) -> RunResult:
        # The source's attempt host starts importing its route's libraries (the Gym host: ~0.5 s
        # of CPU) before this process imports the pipeline (jsonschema and the stages),
        # so the two overlap and the first attempts wait less for the host.
        start_configured_routes(hosts=hosts, config=options["config"])
        from reviews.production.make_review.pipeline import make_review

        return make_review(
            options=RunOptions(
                config=options["config"],
                n=options["n"],
                seed=options["seed"],
                output=options["output"],
                resume=options["resume"],
                max_evidence_bytes=options["max_evidence_bytes"],
                jobs=options["jobs"],
                reuse=tuple(options["reuse"]),
                rejudge=tuple(options["rejudge"]),
            ),
            stderr=progress_stream(self),
            hosts=hosts,
        )

    def _attest(self, options: dict) -> None:
        output = options["output"]
        if options["attest_native_revision"]:
            path = attest_native_revision(
                run_dir=output,
                registry_commit=options["attest_native_revision"],
                atlas_row=options["atlas_row"],
            )
            self.stdout.write(f"Saved native revision attestation to {path}")
        if options["attest_dataset_revision"]:
            missing = [
                flag
                for flag, key in (
                    ("--dataset-file", "dataset_file"),
                    ("--executed-snapshot", "executed_snapshot"),
                    ("--current-snapshot", "current_snapshot"),
                )
                if not options[key]
            ]
            if missing:
                raise UsageError(f"--attest-dataset-revision needs {', '.join(missing)}")
            path = attest_dataset_revision(
                run_dir=output,
                current_revision=options["attest_dataset_revision"],
                dataset_file=options["dataset_file"],
                executed_snapshot=options["executed_snapshot"],
                current_snapshot=options["current_snapshot"],
                component_selector=options["component_selector"],
            )
            self.stdout.write(f"Saved dataset revision attestation to {path}")
