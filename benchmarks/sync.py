"""Sync throughput on PostgreSQL against a raw COPY + INSERT … ON CONFLICT baseline.

    python benchmarks/sync.py [--sizes 10000,100000] [--keep]

DATABASE_URL selects the server and the benchmark database (default
postgres://postgres@127.0.0.1:5432/atlas_bench_sync). The database is dropped and created by this
script, migrated, and dropped again at the end (unless --keep). Not part of ``make test``.

For each size it times, through the real service (``atlas.services.sync.sync_catalog``, including
reading and validating the artifact):

* first sync into an empty inventory,
* a no-change sync (must write 0 rows),
* a sync where 10 % of the rows changed,

and, in the same run, the baseline: the same rows and columns written with raw psycopg as
COPY into a temporary table followed by one ``INSERT … ON CONFLICT (id) DO UPDATE``. The baseline
gets its display-state values precomputed (only serialisation and the database work are timed),
so it is a lower bound on the cost of writing the rows. Throughput is rows of the artifact per
second; the target is at least 0.5x the baseline's throughput.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/atlas_bench_sync"
ORIGINS = ("Alpha", "MarinSkyRL", "Task Trove", "Zeta")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated row counts")
    parser.add_argument("--keep", action="store_true", help="do not drop the database at the end")
    return parser.parse_args()


def server_and_name(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise SystemExit(f"benchmarks/sync.py needs PostgreSQL, got DATABASE_URL={url}")
    name = parts.path.lstrip("/")
    maintenance = urlunsplit((parts.scheme, parts.netloc, "/postgres", parts.query, ""))
    return maintenance, name


def recreate_database(maintenance_url: str, name: str, *, drop_only: bool = False) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(maintenance_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        if not drop_only:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def make_rows(count: int, *, salt: str = "") -> list[dict[str, Any]]:
    from atlas.definitions import derived_fields

    rows = []
    for index in range(count):
        origin = ORIGINS[index % len(ORIGINS)]
        key = f"bench/{index:07d}"
        tags = ["rlvr", "single-turn", f"gym/env{index % 13}"]
        if index % 10 == 0:
            tags = ["agentic", "multi-turn", "license:mit"]
        if index % 17 == 0:
            tags.append("excluded")
        rows.append(
            {
                "id": f"{origin}:{key}",
                "name": key.replace("/", "_"),
                "display_name": f"org{index % 97}/dataset-{index} · subset {salt}",
                "origin": origin,
                "family": ("math-answer", "swe-repo", "preference", "")[index % 4],
                "tags": tags,
                "task_count": None if index % 9 == 0 else (index * 37) % 100_000,
                "notes": "" if index % 5 else f"Benchmark note {index} with some words.",
                "dataset_id": f"org{index % 97}/dataset-{index}",
                "dataset_revision": f"{index:040x}",
                "url": f"https://huggingface.co/datasets/org{index % 97}/dataset-{index}",
                "canonical_source": f"org{index % 97}/dataset-{index}",
                "canonical_url": f"https://huggingface.co/datasets/org{index % 97}/dataset-{index}",
                "verifier_name": f"env{index % 13}",
                "verifier_revision": f"{index % 13:064x}",
                "verifier_url": "",
                **derived_fields(tags),
                "pipeline": {
                    "name": key.replace("/", "_"),
                    "version": "1",
                    "source": f"org{index % 97}/dataset-{index}",
                    "revision": f"{index:040x}",
                    "files": ["data/*.parquet"],
                },
                "quality": None,
                "review_url": None,
                "review_date": None,
                "review_source_revision": None,
                "review_verifier_revision": None,
                "difficulty": None,
                "traces": None,
            }
        )
    return sorted(rows, key=lambda row: row["id"])


def change_tenth(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    changed = []
    for index, row in enumerate(rows):
        if index % 10 == 3:
            row = {**row, "task_count": (row["task_count"] or 0) + 1, "notes": "changed"}
        changed.append(row)
    return changed


def reset_tables() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE catalog_sources, catalog_refreshes, catalog_refresh_runs CASCADE")


def timed(function, *args, **kwargs) -> tuple[float, Any]:
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


def service_sync(path: Path, *, force: bool = False) -> tuple[float, int]:
    from atlas.catalog_artifact import _cache
    from atlas.models import RefreshRun
    from atlas.services.sync import sync_catalog

    _cache.clear()  # measure a cold process: read, parse and validate the artifact
    seconds, result = timed(sync_catalog, catalog_path=path, force=force, trigger="command")
    assert result["busy"] is False, result
    return seconds, RefreshRun.objects.get(id=result["run"]).rows_written


def baseline_values(rows: list[dict[str, Any]]) -> tuple[list[str], list[tuple]]:
    """The columns and values the service writes for these rows (computed outside the timing)."""
    from atlas.display_state import EMPTY_CONTEXT, compute_display_state
    from atlas.services.sync import UPSERT_FIELDS

    columns = ["id", *UPSERT_FIELDS]
    values = []
    for row in rows:
        state = compute_display_state(payload=row, curated={}, active=True, context=EMPTY_CONTEXT)
        record = {"id": row["id"], "origin": row["origin"], "payload": row, "active": True, **state}
        values.append(tuple(record[name] for name in columns))
    return columns, values


def baseline_upsert(dsn: str, columns: list[str], values: list[tuple]) -> float:
    """COPY into a temporary table, then one INSERT … ON CONFLICT DO UPDATE, in one transaction."""
    import psycopg
    from psycopg import sql

    json_columns = {"payload", "difficulty_summary"}
    quoted = sql.SQL(", ").join(sql.Identifier(c) for c in columns)
    updates = sql.SQL(", ").join(
        sql.SQL("{} = EXCLUDED.{}").format(sql.Identifier(c), sql.Identifier(c))
        for c in columns
        if c != "id"
    )
    with psycopg.connect(dsn) as conn:
        start = time.perf_counter()
        with conn.transaction(), conn.cursor() as cursor:
            cursor.execute(
                "CREATE TEMP TABLE bench_stage (LIKE catalog_sources INCLUDING DEFAULTS) "
                "ON COMMIT DROP"
            )
            positions = [i for i, c in enumerate(columns) if c in json_columns]
            copy_sql = sql.SQL("COPY bench_stage ({}) FROM STDIN").format(quoted)
            with cursor.copy(copy_sql) as copy:
                for record in values:
                    if positions:
                        record = list(record)
                        for i in positions:
                            if record[i] is not None:
                                record[i] = json.dumps(record[i])
                    copy.write_row(record)
            cursor.execute(
                sql.SQL(
                    "INSERT INTO catalog_sources ({cols}) SELECT {cols} FROM bench_stage "
                    "ON CONFLICT (id) DO UPDATE SET {updates}"
                ).format(cols=quoted, updates=updates)
            )
        return time.perf_counter() - start


def plain_dsn(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(("postgresql", parts.netloc, parts.path, parts.query, ""))


def bench_size(size: int, workdir: Path, dsn: str) -> dict[str, Any]:
    from atlas.catalog_artifact import write_document

    rows = make_rows(size)
    first_path = workdir / f"catalog-{size}.json"
    write_document(rows=rows, output=first_path)
    changed_rows = change_tenth(rows)
    changed_path = workdir / f"catalog-{size}-changed.json"
    write_document(rows=changed_rows, output=changed_path)
    columns, values = baseline_values(rows)
    changed_columns, changed_values = baseline_values(changed_rows)
    changed_only = [
        v for v, row, old in zip(changed_values, changed_rows, rows, strict=True) if row != old
    ]

    reset_tables()
    first_s, first_written = service_sync(first_path)
    same_s, same_written = service_sync(first_path)
    tenth_s, tenth_written = service_sync(changed_path)
    forced_s, forced_written = service_sync(changed_path, force=True)
    half_path = workdir / f"catalog-{size}-half.json"
    write_document(rows=changed_rows[::2], output=half_path)
    retire_s, _ = service_sync(half_path, force=True)

    reset_tables()
    base_insert_s = baseline_upsert(dsn, columns, values)
    base_update_s = baseline_upsert(dsn, changed_columns, changed_values)
    base_changed_only_s = baseline_upsert(dsn, changed_columns, changed_only)
    reset_tables()
    return {
        "size": size,
        "first": (first_s, first_written),
        "unchanged": (same_s, same_written),
        "tenth": (tenth_s, tenth_written),
        "forced": (forced_s, forced_written),
        "retire_half": (retire_s, size - len(changed_rows[::2])),
        "baseline_insert": base_insert_s,
        "baseline_upsert_all": base_update_s,
        "baseline_upsert_changed": (base_changed_only_s, len(changed_only)),
    }


def report(result: dict[str, Any]) -> bool:
    size = result["size"]

    def rate(seconds: float) -> float:
        return size / seconds if seconds else float("inf")

    base_insert = rate(result["baseline_insert"])
    base_all = rate(result["baseline_upsert_all"])
    lines = [f"\n== {size:,} rows =="]
    lines.append(
        f"baseline COPY+INSERT (empty table)  {result['baseline_insert']:7.3f} s  "
        f"{base_insert:12,.0f} rows/s"
    )
    lines.append(
        f"baseline COPY+UPSERT (all conflict) {result['baseline_upsert_all']:7.3f} s  "
        f"{base_all:12,.0f} rows/s"
    )
    changed_s, changed_n = result["baseline_upsert_changed"]
    lines.append(f"baseline COPY+UPSERT ({changed_n:,} changed rows only) {changed_s:7.3f} s")
    ok = True
    for label, key, baseline in (
        ("first sync", "first", base_insert),
        ("no-change sync", "unchanged", base_all),
        ("10 %-changed sync", "tenth", base_all),
        ("forced sync", "forced", base_all),
    ):
        seconds, written = result[key]
        ratio = rate(seconds) / baseline
        lines.append(
            f"{label:<20} {seconds:8.3f} s  {rate(seconds):12,.0f} rows/s  "
            f"{ratio:5.2f}x baseline  rows written {written:,}"
        )
        if key != "forced" and ratio < 0.5:
            ok = False
    retire_s, retired = result["retire_half"]
    lines.append(
        f"forced sync retiring {retired:,} sources {retire_s:8.3f} s  (target < 30 s: "
        f"{'met' if retire_s < 30 else 'NOT met'})"
    )
    if retire_s >= 30:
        ok = False
    if result["unchanged"][1] != 0:
        lines.append("!! the no-change sync wrote rows")
        ok = False
    print("\n".join(lines))
    return ok


def main() -> int:
    args = parse_args()
    url = os.environ.get("DATABASE_URL") or DEFAULT_URL
    maintenance, name = server_and_name(url)
    recreate_database(maintenance, name)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "atlas.settings")
    sys.path.insert(0, str(ROOT))
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connections

        call_command("migrate", verbosity=0)
        sizes = [int(item) for item in args.sizes.split(",") if item.strip()]
        all_ok = True
        with tempfile.TemporaryDirectory() as workdir:
            for size in sizes:
                all_ok &= report(bench_size(size, Path(workdir), plain_dsn(url)))
        connections.close_all()
        print("\ntarget (>= 0.5x baseline throughput, no-change sync writes 0 rows):",
              "met" if all_ok else "NOT met")  # fmt: skip
        return 0 if all_ok else 1
    finally:
        if not args.keep:
            recreate_database(maintenance, name, drop_only=True)


if __name__ == "__main__":
    raise SystemExit(main())
