"""Review import throughput: a run directory with 10,000 evidence files through the publication
service, against the floor: raw read + hash + COPY of the same artifact rows in the same run.

    python benchmarks/review_import.py [--files 10000] [--layout cited|execution] [--repeat 3]
        [--database-url URL]

Without --database-url a temporary SQLite file is used. A PostgreSQL URL names a scratch database
that is dropped, created, migrated and dropped again. Not part of ``make test``.

The service time covers everything a publication does in a running worker (the JSON Schema
validator is compiled once per process, before timing): reading and parsing the collection, JSON
Schema validation, hashing every cited file, the row lock, inserting the review and artifacts, the
curated update and the display-state refresh. The floor, in the same run, reads every stored file,
hashes it and writes the same rows with one ``COPY`` in one transaction (the goal: the service
at ≥ 0.5× its throughput). The figure goes to the ``make bench`` table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
SOURCE_ID = "MarinSkyRL:gsm8k"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--repeat", type=int, default=3, help="attempts; medians count")
    parser.add_argument(
        "--layout",
        choices=["cited", "execution"],
        default="cited",
        help="cited: every file is an evidence item of the collection (worst case for validation);"
        " execution: solver turns under tasks/*/execution-*/, archived by the globs",
    )
    return parser.parse_args()


def recreate_postgres(url: str, *, drop_only: bool = False) -> None:
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    maintenance = urlunsplit((parts.scheme, parts.netloc, "/postgres", parts.query, ""))
    with psycopg.connect(maintenance, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        if not drop_only:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def add_evidence_files(run_dir: Path, count: int) -> None:
    """Write ``count`` evidence files and cite each from the source synthesis."""
    collection_path = run_dir / "quality-reviews.json"
    collection = json.loads(collection_path.read_text(encoding="utf-8"))
    synthesis = next(r for r in collection["reviews"] if r["id"] == "source-synthesis")
    template = synthesis["evidence"][0]
    for index in range(count):
        relative = f"evidence/{index // 1000:02d}/item-{index:05d}.json"
        data = json.dumps({"index": index, "note": "benchmark evidence " * 8}).encode() + b"\n"
        target = run_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        synthesis["evidence"].append(
            {**template, "snapshot_path": relative, "sha256": hashlib.sha256(data).hexdigest()}
        )
    collection_path.write_text(json.dumps(collection, indent=2) + "\n", encoding="utf-8")


def add_execution_files(run_dir: Path, count: int) -> None:
    """Write ``count`` solver request/response files spread over tasks and turns."""
    turns_per_task = 10
    for index in range(count // 2):
        task, turn = divmod(index, turns_per_task)
        folder = run_dir / f"tasks/{task:04d}/execution-000/solver/turn-{turn:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        message = {"role": "user", "content": f"benchmark turn {index} " * 8}
        (folder / "request.json").write_text(json.dumps({"messages": [message]}) + "\n")
        (folder / "response.json").write_text(
            json.dumps({"choices": [{"message": message}]}) + "\n"
        )


def stamp_collection(run_dir: Path, attempt: int) -> None:
    path = run_dir / "quality-reviews.json"
    collection = json.loads(path.read_text(encoding="utf-8"))
    collection["created_at"] = f"2025-03-04T00:00:{attempt:02d}Z"
    path.write_text(json.dumps(collection, indent=2) + "\n", encoding="utf-8")


def raw_import(*, run_dir: Path, review_id: str, paths: list[str]) -> float:
    """The floor: read every stored file, hash it and COPY the rows, in one transaction.

    On PostgreSQL with psycopg's ``copy``; SQLite has no COPY, so there it is ``bulk_create`` of
    the rows read and hashed (reported as not the floor)."""
    from django.db import connection, transaction
    from django.utils import timezone

    from reviews.models import ReviewArtifact

    started = time.perf_counter()
    now = timezone.now()
    rows = []
    for path in paths:
        data = (run_dir / path).read_bytes()
        rows.append((review_id, path, data.decode("utf-8"), hashlib.sha256(data).hexdigest(),
                     len(data), now))  # fmt: skip
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as wrapper:
                statement = (
                    "COPY review_artifacts (review_id, path, content, sha256, size, created_at) "
                    "FROM STDIN"
                )
                with wrapper.cursor.copy(statement) as copy:
                    for row in rows:
                        copy.write_row(row)
        else:
            names = ("review_id", "path", "content", "sha256", "size", "created_at")
            ReviewArtifact.objects.bulk_create(
                [ReviewArtifact(**dict(zip(names, row, strict=True))) for row in rows],
                batch_size=500,
            )
    return time.perf_counter() - started


def main() -> None:
    args = parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="atlas-bench-review-"))
    url = args.database_url or f"sqlite:///{scratch / 'bench.sqlite3'}"
    if url.startswith("postgres"):
        recreate_postgres(url)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from atlas.artifact.catalog_artifact import write_document
    from atlas.artifact.definitions import load_rows
    from atlas.services.sync import sync_catalog
    from benchmarks.report import Row, emit
    from reviews.models import Review
    from reviews.production.format.collection_checks import shipped_validator
    from reviews.services.publication import publish_run_directory
    from tests.reviews.example_runs import EXAMPLE_PROFILES, spec_for_row, write_run_directory

    try:
        call_command("migrate", verbosity=0)
        rows = load_rows(settings.ATLAS_DEFINITIONS_DIR)
        catalog = scratch / "catalog.json"
        write_document(rows=rows, output=catalog)
        settings.ATLAS_SYNC_LOCK_DIR = scratch
        sync_catalog(catalog_path=catalog, force=True, trigger="command")

        row = next(r for r in rows if r["id"] == SOURCE_ID)
        run_dir = write_run_directory(
            output=scratch / "run", spec=spec_for_row(row, EXAMPLE_PROFILES[0])
        )
        if args.layout == "cited":
            add_evidence_files(run_dir, args.files)
        else:
            add_execution_files(run_dir, args.files)

        # A worker imports jsonschema and compiles the shipped schema once per process; time the
        # steady state, not interpreter start-up.
        shipped_validator()
        service_times, baseline_times = [], []
        for attempt in range(args.repeat):
            # A distinct created_at gives a new review id, so every attempt inserts every row.
            stamp_collection(run_dir, attempt)
            started = time.perf_counter()
            result = publish_run_directory(run_dir=run_dir, atlas_id=SOURCE_ID)
            service_times.append(time.perf_counter() - started)
            review = Review.objects.get(id=result["review_id"])
            stored = list(review.artifacts.values("path", "content", "sha256", "size"))

            baseline_review = Review.objects.create(
                id=hashlib.sha256(f"baseline-{attempt}".encode()).hexdigest(),
                source_id=SOURCE_ID,
                collection={},
                kind="supplemental",
                published_at=review.published_at,
            )
            paths = [item["path"] for item in stored]
            baseline_times.append(
                raw_import(run_dir=run_dir, review_id=baseline_review.id, paths=paths)
            )
        # Service and floor alternate within each attempt (a shared machine): medians of both.
        service_seconds = statistics.median(service_times)
        baseline_seconds = statistics.median(baseline_times)

        files = len(stored)
        print(
            json.dumps(
                {
                    "database": connection.vendor,
                    "layout": args.layout,
                    "evidence_files": args.files,
                    "artifacts_stored": files,
                    "service_seconds": round(service_seconds, 3),
                    "baseline_seconds": round(baseline_seconds, 3),
                    "attempts": args.repeat,
                }
            )
        )
        emit(
            row=Row(
                benchmark="review_import",
                figure=f"publish {files:,} artifacts ({args.layout}), median of {args.repeat}",
                value=files / service_seconds,
                unit="files/s",
                baseline="raw read + hash + COPY",
                baseline_value=files / baseline_seconds,
                floor=connection.vendor == "postgresql",
                goal_operator=">=",
                goal=0.5,
            )
        )
    finally:
        connection.close()
        if url.startswith("postgres"):
            recreate_postgres(url, drop_only=True)


if __name__ == "__main__":
    main()
