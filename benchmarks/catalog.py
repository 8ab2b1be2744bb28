"""Catalog read-path benchmark (not part of `make test`).

Usage: DATABASE_URL=postgres://… .venv/bin/python benchmarks/catalog.py [--sizes 10000 100000]
       [--only pages|csv]

Creates a dedicated database (<name>_bench, dropped afterwards), bulk-inserts synthetic sources,
and measures in-process server time of `/` and `/api/sources/` with a filter and a sort against
the same query run through raw psycopg + json, the SQL query count per page, and the CSV export
of every row against `COPY (…) TO STDOUT`, with the export's peak Python memory.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "atlas.settings")
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("SECRET_KEY", "benchmark-only-secret-key")
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.http import QueryDict  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from atlas.csv_export import writer_chunks  # noqa: E402
from atlas.display_state import CURATED_FIELDS, DisplayContext, compute_display_state  # noqa: E402
from atlas.filters import lenient_filterset  # noqa: E402
from atlas.models import Refresh, RefreshRun, Source  # noqa: E402

QUERY = "type=rlvr&sort=-rows"
FAMILIES = ["math-answer", "competitive-programming", "preference", "swe-repo", "qa-short-answer",
            "llm-judge-freeform", "unit-test-gen", "terminal-agent", "tool-use", "arc-agi",
            "reasoning-gym", "instruction-following", "safety", "text-to-sql", ""]  # fmt: skip
TAG_SETS = [["rlvr", "single-turn"], ["agentic", "multi-turn"], ["alignment", "single-turn"],
            ["rlvr", "multi-turn"], []]  # fmt: skip
RAW_SQL = """
SELECT id, origin, payload, active, effective_quality, difficulty_text, difficulty_summary,
       review_applicability, review_stale, grading_tracking, review_grading_revision,
       display_review_id, display_review_date_text, display_traces
FROM catalog_sources
WHERE active AND type = 'RLVR' AND status <> 'Excluded'
  AND (effective_quality IS NULL OR effective_quality <> 'bad')
ORDER BY task_count DESC NULLS LAST, id
LIMIT 100
"""
RAW_COUNT = """
SELECT count(*) FROM catalog_sources
WHERE active AND type = 'RLVR' AND status <> 'Excluded'
  AND (effective_quality IS NULL OR effective_quality <> 'bad')
"""
COPY_SQL = """
COPY (SELECT display_name, origin, canonical_source, task_count, turns, type, is_benchmark, family,
             difficulty_text, effective_quality, display_review_date_text, status,
             payload->>'url', payload->>'dataset_revision', payload->>'name',
             payload->'tags', payload->>'verifier_url', payload->>'verifier_revision'
      FROM catalog_sources WHERE active ORDER BY display_name COLLATE atlas_natural, id)
TO STDOUT WITH (FORMAT csv, FORCE_QUOTE *)
"""


def synthetic_row(n: int, rng: random.Random) -> dict:
    origin = ("MarinSkyRL", "Task Trove", "Gym Hub")[n % 3]
    tags = list(rng.choice(TAG_SETS))
    if n % 9 == 0:
        tags.append("benchmark")
    if n % 7 == 0:
        tags.append("excluded")
    generator = n % 41 == 0
    if generator:
        tags.append("generator")
    kind = {"rlvr": "RLVR", "agentic": "Agentic", "alignment": "Alignment"}
    key = f"bench/{n:06d}-{rng.randrange(10**6)}"
    return {
        "id": f"{origin}:{key}",
        "name": key,
        "display_name": f"org{n % 500}/dataset-{n} · subset {n % 13}",
        "origin": origin,
        "family": FAMILIES[n % len(FAMILIES)],
        "tags": tags,
        "task_count": None if generator or n % 11 == 0 else rng.randrange(10, 2_000_000),
        "notes": "synthetic benchmark row",
        "dataset_id": f"org{n % 500}/dataset-{n}",
        "dataset_revision": f"{n:040x}",
        "url": f"https://huggingface.co/datasets/org{n % 500}/dataset-{n}",
        "canonical_source": f"org{n % 500}/dataset-{n}",
        "canonical_url": f"https://huggingface.co/datasets/org{n % 500}/dataset-{n}",
        "verifier_name": "gsm8k",
        "verifier_revision": "b" * 64,
        "verifier_url": "",
        "type": next((kind[t] for t in ("rlvr", "agentic", "alignment") if t in tags), ""),
        "turns": next((t.capitalize() for t in ("single-turn", "multi-turn") if t in tags), ""),
        "is_benchmark": "benchmark" in tags,
        "kind": "Generator" if generator else "Dataset",
        "status": "Excluded" if "excluded" in tags else "Available",
        "pipeline": {"name": key, "version": "1", "source": None, "revision": None, "files": []},
        "quality": rng.choice([None, None, "good", "some_issues", "bad"]),
        "review_url": None,
        "review_date": "2025-03-03" if n % 5 == 0 else None,
        "review_source_revision": None,
        "review_verifier_revision": None,
        "difficulty": None,
        "traces": None,
    }  # fmt: skip


def populate(size: int) -> None:
    rng = random.Random(size)
    Source.objects.all().delete()
    Refresh.objects.all().delete()
    batch = []
    curated = dict.fromkeys(CURATED_FIELDS)
    for n in range(size):
        payload = synthetic_row(n, rng)
        summary = None
        if payload["quality"] == "good" and n % 3 == 0:
            solved = rng.randrange(0, 101)
            summary = {"status": "current", "text": f"Current: m {solved}/100 solved",
                       "models": [{"size": "large", "measurement_status": "current",
                                   "solved": solved, "verified": 100}]}  # fmt: skip
        state = compute_display_state(
            payload=payload,
            curated=curated,
            active=True,
            context=DisplayContext(difficulty=summary),
        )
        batch.append(Source(id=payload["id"], origin=payload["origin"], payload=payload, **state))
        if len(batch) == 5000:
            Source.objects.bulk_create(batch)
            batch.clear()
    Source.objects.bulk_create(batch)
    now = timezone.now()
    for origin in ("Gym Hub", "MarinSkyRL", "Task Trove"):
        Refresh.objects.create(origin=origin, revision="c" * 64, checked_at=now, synced_at=now,
                               row_count=size // 3)  # fmt: skip
    RefreshRun.objects.create(started_at=now, finished_at=now, trigger="command", outcome="synced")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_sources")


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[max(0, round(0.95 * len(ordered)) - 1)]


def time_requests(client: Client, url: str, repeat: int) -> tuple[float, float, int]:
    for _ in range(3):
        assert client.get(url).status_code == 200
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = client.get(url)
        response.content  # noqa: B018 — render fully
        samples.append(time.perf_counter() - start)
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    p50, p95 = percentiles(samples)
    return p50, p95, len(queries)


def time_raw(repeat: int) -> tuple[float, float]:
    raw = connection.connection  # the psycopg connection Django opened
    samples = []
    for _ in range(repeat + 3):
        start = time.perf_counter()
        with raw.cursor() as cursor:
            cursor.execute(RAW_COUNT)
            (count,) = cursor.fetchone()
            cursor.execute(RAW_SQL)
            names = [column.name for column in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        body = json.dumps({"count": count, "results": rows}, default=str)
        assert body
        samples.append(time.perf_counter() - start)
    return percentiles(samples[3:])


def time_csv(client: Client) -> dict[str, float]:
    def consume() -> tuple[float, int, int]:
        start = time.perf_counter()
        response = client.get("/export.csv?show_excluded=1&show_bad=1")
        size = lines = 0
        for chunk in response.streaming_content:
            size += len(chunk)
            lines += chunk.count(b"\r\n")
        return time.perf_counter() - start, size, lines - 1

    def consume_writer() -> float:
        # The generic csv-writer path (SQLite's), for comparison with the COPY path on one database.
        queryset = lenient_filterset(data=QueryDict("show_excluded=1&show_bad=1")).qs
        start = time.perf_counter()
        for _ in writer_chunks(queryset=queryset):
            pass
        return time.perf_counter() - start

    consume()
    seconds, size, rows = consume()
    writer_seconds = consume_writer()
    tracemalloc.start()
    consume()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    raw = connection.connection
    start = time.perf_counter()
    copied = 0
    with raw.cursor() as cursor, cursor.copy(COPY_SQL) as copy:
        for block in copy:
            copied += len(block)
    copy_seconds = time.perf_counter() - start
    return {"rows": rows, "csv_s": seconds, "csv_mb": size / 1e6, "copy_s": copy_seconds,
            "copy_mb": copied / 1e6, "peak_mb": peak / 1e6, "writer_s": writer_seconds}  # fmt: skip


def time_pages(client: Client, repeat: int) -> None:
    raw50, raw95 = time_raw(repeat)
    print(f"raw psycopg+json          p50 {raw50 * 1000:7.1f} ms  p95 {raw95 * 1000:7.1f} ms")
    for label, url in (
        ("GET /", f"/?{QUERY}"),
        ("GET /api/sources/", f"/api/sources/?{QUERY}"),
    ):
        p50, p95, queries = time_requests(client, url, repeat)
        print(f"{label:<25} p50 {p50 * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms  "
              f"ratio {p50 / raw50:4.1f}x  queries {queries}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--only", choices=["pages", "csv"], help="run one part of the benchmark")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("benchmarks/catalog.py needs PostgreSQL: set DATABASE_URL")
    database = settings.DATABASES["default"]
    database["TEST"]["NAME"] = f"{database['NAME']}_bench"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        client = Client()
        for size in args.sizes:
            started = time.perf_counter()
            populate(size)
            print(f"\n== {size:,} sources (inserted in {time.perf_counter() - started:.1f} s)")
            if args.only != "csv":
                time_pages(client, args.repeat)
            if args.only == "pages":
                continue
            csv = time_csv(client)
            throughput = (csv["rows"] / csv["csv_s"]) / (csv["rows"] / csv["copy_s"])
            print(
                f"/export.csv {csv['rows']:,} rows {csv['csv_s']:.2f} s "
                f"({csv['csv_mb']:.1f} MB)"
                f"  COPY {csv['copy_s']:.2f} s ({csv['copy_mb']:.1f} MB)"
                f"  throughput {throughput:.2f}x of COPY  peak {csv['peak_mb']:.1f} MB"
                f"  (csv-writer path {csv['writer_s']:.2f} s,"
                f" {csv['copy_s'] / csv['writer_s']:.2f}x)"
            )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
