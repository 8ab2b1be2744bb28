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

the peak memory of a first sync in a process of its own (above that process's memory before the
sync; goal: at most twice the artifact's size — the artifact is streamed, issue 12 §3),
and, in the same run, each one's floor with raw psycopg: read and parse the artifact with orjson,
COPY the rows (all of them, or only the changed ones for the 10 % sync) into a temporary table and
apply one ``INSERT … ON CONFLICT (id) DO UPDATE``. The floor gets its display-state values
precomputed (the project's own rule, not I/O), so it is a lower bound on the cost of a sync.
Throughput is rows of the artifact per second; the goal (issue 12) is a first sync at ≥ 0.8× the
floor, the others ≥ 0.5×. Figures go to the ``make bench`` table (``benchmarks/report.py``); a
missed goal is a row of the table, not an exit status.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/atlas_bench_sync"
ORIGINS = ("Alpha", "MarinSkyRL", "Task Trove", "Zeta")
# Rounds of retiring half the inventory against its floor (each round re-syncs the whole artifact
# twice to undo them).
RETIRE_ROUNDS = 2


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated row counts")
    parser.add_argument("--keep", action="store_true", help="do not drop the database at the end")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved first syncs (medians)")
    parser.add_argument(
        "--memory-of",
        metavar="ARTIFACT",
        help="(used by the benchmark itself) sync ARTIFACT and print this process's memory",
    )
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
    from atlas.artifact.definitions import derived_fields

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
    from atlas.artifact.catalog_artifact import _cache
    from atlas.models import RefreshRun
    from atlas.services.sync import sync_catalog

    _cache.clear()  # measure a cold process: read, parse and validate the artifact
    seconds, result = timed(sync_catalog, catalog_path=path, force=force, trigger="command")
    assert result["busy"] is False, result
    return seconds, RefreshRun.objects.get(id=result["run"]).rows_written


def baseline_states(rows: list[dict[str, Any]]) -> tuple[list[str], dict[str, list[Any]]]:
    """The columns the service writes, and per source id the values it writes besides the payload
    (the display state, computed outside the timing: the project's own rules, not I/O)."""
    from atlas.rules.display_state import EMPTY_CONTEXT, compute_display_state
    from atlas.services.sync import UPSERT_FIELDS

    columns = ["id", *UPSERT_FIELDS]
    states = {}
    for row in rows:
        state = compute_display_state(payload=row, curated={}, active=True, context=EMPTY_CONTEXT)
        record = {
            "id": row["id"],
            "origin": row["origin"],
            "payload": None,
            "active": True,
            **state,
        }
        states[row["id"]] = [record[name] for name in columns]
    return columns, states


def baseline_upsert(
    dsn: str,
    *,
    artifact: Path,
    columns: list[str],
    states: dict[str, list[Any]],
    only: set[str] | None = None,
) -> float:
    """The floor of a sync: read and parse the artifact with orjson, COPY its rows (all, or the
    ``only`` ids) into a temporary table and apply one INSERT … ON CONFLICT DO UPDATE, in one
    transaction. What a sync cannot avoid; validation and change tracking are not in it."""
    import orjson
    import psycopg
    from psycopg import sql

    json_positions = [i for i, c in enumerate(columns) if c in {"payload", "difficulty_summary"}]
    payload_position = columns.index("payload")
    quoted = sql.SQL(", ").join(sql.Identifier(c) for c in columns)
    updates = sql.SQL(", ").join(
        sql.SQL("{} = EXCLUDED.{}").format(sql.Identifier(c), sql.Identifier(c))
        for c in columns
        if c != "id"
    )
    with psycopg.connect(dsn) as conn:
        start = time.perf_counter()
        rows = orjson.loads(artifact.read_bytes())["sources"]
        with conn.transaction(), conn.cursor() as cursor:
            cursor.execute(
                "CREATE TEMP TABLE bench_stage (LIKE catalog_sources INCLUDING DEFAULTS) "
                "ON COMMIT DROP"
            )
            copy_sql = sql.SQL("COPY bench_stage ({}) FROM STDIN").format(quoted)
            with cursor.copy(copy_sql) as copy:
                for row in rows:
                    if only is not None and row["id"] not in only:
                        continue
                    record = list(states[row["id"]])
                    record[payload_position] = row
                    for i in json_positions:
                        if record[i] is not None:
                            record[i] = orjson.dumps(record[i]).decode()
                    copy.write_row(record)
            cursor.execute(
                sql.SQL(
                    "INSERT INTO catalog_sources ({cols}) SELECT {cols} FROM bench_stage "
                    "ON CONFLICT (id) DO UPDATE SET {updates}"
                ).format(cols=quoted, updates=updates)
            )
        return time.perf_counter() - start


def baseline_compare(dsn: str, *, artifact: Path) -> float:
    """The floor of a sync that finds nothing to write: read and parse the artifact, read the
    stored payloads, compare them row by row."""
    import orjson
    import psycopg

    with psycopg.connect(dsn) as conn:
        start = time.perf_counter()
        rows = orjson.loads(artifact.read_bytes())["sources"]
        stored = {
            key: orjson.loads(payload)
            for key, payload in conn.execute(
                "SELECT id, payload::text FROM catalog_sources WHERE active"
            )
        }
        changed = sum(stored.get(row["id"]) != row for row in rows)
        elapsed = time.perf_counter() - start
    assert changed == 0, changed
    return elapsed


def bare_retire(dsn: str, *, ids: list[str]) -> float:
    """The floor of retiring ``ids``: one transaction, one bare UPDATE of their flag."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        start = time.perf_counter()
        with conn.transaction():
            conn.execute("UPDATE catalog_sources SET active = false WHERE id = ANY(%s)", [ids])
        return time.perf_counter() - start


def vacuum() -> None:
    """The state both retirements start from: dead rows of the previous round cleared."""
    from atlas.db.bulk_writes import vacuum_analyze
    from atlas.models import Source

    vacuum_analyze(model=Source)


def plain_dsn(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(("postgresql", parts.netloc, parts.path, parts.query, ""))


def rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def memory_probe(path: Path) -> None:
    """In a process of its own: one sync of ``path``; prints the resident memory before it and
    its peak during the sync (sampled every millisecond), as JSON. A sync of a one-row artifact
    first loads the code and its caches, which any process that has synced once holds."""
    import json
    import threading

    from atlas.artifact.catalog_artifact import write_document

    warm = path.with_name("warm-up.json")
    write_document(rows=make_rows(1, salt="warm"), output=warm)
    service_sync(warm)
    reset_tables()
    before = peak = rss_mb()
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.001):
            peak = max(peak, rss_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        service_sync(path)
    finally:
        done.set()
        sampler.join()
    print(json.dumps({"before_mb": before, "peak_mb": max(peak, rss_mb())}))


def first_sync_memory(path: Path) -> float:
    """The peak memory (MB) a first sync of ``path`` adds to its process."""
    import json
    import subprocess

    reset_tables()
    finished = subprocess.run(
        [sys.executable, __file__, "--memory-of", str(path)],
        check=True,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    found = json.loads(finished.stdout.strip().splitlines()[-1])
    reset_tables()
    return float(found["peak_mb"] - found["before_mb"])


def bench_size(*, size: int, workdir: Path, dsn: str, repeat: int) -> dict[str, Any]:
    from atlas.artifact.catalog_artifact import write_document

    rows = make_rows(size)
    first_path = workdir / f"catalog-{size}.json"
    write_document(rows=rows, output=first_path)
    changed_rows = change_tenth(rows)
    changed_path = workdir / f"catalog-{size}-changed.json"
    write_document(rows=changed_rows, output=changed_path)
    columns, states = baseline_states(rows)
    _, changed_states = baseline_states(changed_rows)
    changed_ids = {row["id"] for row, old in zip(changed_rows, rows, strict=True) if row != old}
    memory_mb = first_sync_memory(first_path)

    # The headline figure: first syncs and their floor in turn (a shared machine), medians.
    first_times, floor_times = [], []
    for _ in range(repeat):
        reset_tables()
        floor_times.append(
            baseline_upsert(dsn, artifact=first_path, columns=columns, states=states)
        )
        reset_tables()
        first_s, first_written = service_sync(first_path)
        first_times.append(first_s)
    first_s, base_insert_s = statistics.median(first_times), statistics.median(floor_times)
    same_s, same_written = service_sync(first_path)
    tenth_s, tenth_written = service_sync(changed_path)
    forced_s, forced_written = service_sync(changed_path, force=True)
    half_path = workdir / f"catalog-{size}-half.json"
    write_document(rows=changed_rows[::2], output=half_path)
    retiring = sorted(
        {row["id"] for row in changed_rows} - {row["id"] for row in changed_rows[::2]}
    )
    # Retiring half, and its floor, in turn from the same state (every source active, vacuumed):
    # the sync retires them, the floor flips their flag in one bare UPDATE; each is undone by a
    # sync of the whole artifact (the sources return), outside the timing. Then once by a forced
    # sync, which also re-applies the display rules to every row (the earlier figure).
    retire_times, bare_times = [], []
    for _ in range(RETIRE_ROUNDS):
        vacuum()
        bare_times.append(bare_retire(dsn, ids=retiring))
        service_sync(changed_path, force=True)  # forced: the artifact did not change
        vacuum()
        seconds, written = service_sync(half_path)
        assert written == len(retiring), (written, len(retiring))  # every one of them retired
        retire_times.append(seconds)
        service_sync(changed_path, force=True)
    retire_s, base_retire_s = statistics.median(retire_times), statistics.median(bare_times)
    vacuum()
    forced_retire_s, _ = service_sync(half_path, force=True)

    reset_tables()
    baseline_upsert(dsn, artifact=first_path, columns=columns, states=states)
    base_changed_s = baseline_upsert(
        dsn, artifact=changed_path, columns=columns, states=changed_states, only=changed_ids
    )
    base_compare_s = baseline_compare(dsn, artifact=changed_path)
    reset_tables()
    return {
        "size": size,
        "first": (first_s, first_written),
        "unchanged": (same_s, same_written),
        "tenth": (tenth_s, tenth_written),
        "forced": (forced_s, forced_written),
        "retire_half": (retire_s, len(retiring)),
        "retire_ranges": (retire_times, bare_times),
        "forced_retire": forced_retire_s,
        "baseline_retire": base_retire_s,
        "baseline_insert": base_insert_s,
        "baseline_compare": base_compare_s,
        "baseline_changed": base_changed_s,
        "memory_mb": memory_mb,
        "artifact_mb": first_path.stat().st_size / 2**20,
    }


def report(result: dict[str, Any]) -> None:
    from benchmarks.report import Row, emit, emit_limit

    size = result["size"]

    def rate(seconds: float) -> float:
        return size / seconds if seconds else float("inf")

    # (figure, service result key, floor key, floor name, goal): the goal for the first
    # sync; the project's earlier 0.5× target for the others.
    for label, key, floor_key, floor_name, goal in (
        ("first sync (median)", "first", "baseline_insert", "read + COPY + upsert", 0.8),
        ("no-change sync", "unchanged", "baseline_compare", "read + compare stored", 0.5),
        ("10 %-changed sync", "tenth", "baseline_changed", "read + upsert changed", 0.5),
        # The forced sync re-reads the artifact the 10 % sync applied: nothing is left to write.
        ("forced sync, unchanged rows", "forced", "baseline_compare", "read + compare stored", 0.5),
    ):
        seconds, written = result[key]
        emit(
            row=Row(
                benchmark="sync",
                figure=f"{label}, {size:,} rows (wrote {written:,})",
                value=rate(seconds),
                unit="rows/s",
                baseline=floor_name,
                baseline_value=rate(result[floor_key]),
                goal_operator=">=",
                goal=goal,
            )
        )
    emit_limit(benchmark="sync", figure=f"no-change sync rows written, {size:,} rows",
               value=result["unchanged"][1], unit="rows", at_most=0)  # fmt: skip
    artifact_mb = result["artifact_mb"]
    emit_limit(benchmark="sync",
               figure=f"first sync peak memory above the idle process, {size:,} rows "
                      f"({artifact_mb:,.0f} MB artifact; goal: twice its size)",
               value=result["memory_mb"], unit="MB", at_most=round(2 * artifact_mb))  # fmt: skip
    retire_s, retired = result["retire_half"]
    retires, bares = result["retire_ranges"]
    emit(row=Row(benchmark="sync",
                 figure=f"sync retiring {retired:,} sources, median of {len(retires)} "
                        f"({min(retires):.1f}–{max(retires):.1f} s; floor "
                        f"{min(bares):.1f}–{max(bares):.1f} s)",
                 value=retire_s, unit="s", baseline="bare UPDATE of the same rows",
                 baseline_value=result["baseline_retire"], goal_operator="<=",
                 goal=2.0))  # fmt: skip
    emit_limit(benchmark="sync", figure=f"forced sync retiring {retired:,} sources",
               value=result["forced_retire"], unit="s", at_most=30)  # fmt: skip


def main() -> int:
    args = parse_args()
    if args.memory_of:
        sys.path.insert(0, str(ROOT))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django

        django.setup()
        memory_probe(Path(args.memory_of))
        return 0
    url = os.environ.get("DATABASE_URL") or DEFAULT_URL
    maintenance, name = server_and_name(url)
    recreate_database(maintenance, name)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connections

        call_command("migrate", verbosity=0)
        sizes = [int(item) for item in args.sizes.split(",") if item.strip()]
        with tempfile.TemporaryDirectory() as workdir:
            for size in sizes:
                report(
                    bench_size(
                        size=size, workdir=Path(workdir), dsn=plain_dsn(url), repeat=args.repeat
                    )
                )
        connections.close_all()
        return 0
    finally:
        if not args.keep:
            recreate_database(maintenance, name, drop_only=True)


if __name__ == "__main__":
    raise SystemExit(main())
