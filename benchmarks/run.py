"""Run every benchmark under benchmarks/ to the end and print one table (what `make bench` does).

    DATABASE_URL=postgres://… python benchmarks/run.py [--only sync,catalog] [--output PATH]

A benchmark is a script of this folder with a ``__main__`` block; each runs in its own process
with its own database (``<DATABASE_URL's name>_<script>``, created and dropped by the script) and
reports its figures through ``benchmarks.report``. A crash, a timeout or a script that reports
nothing becomes a row of the table, and the next benchmark still runs. The exit status is 1 when a
benchmark crashed or timed out, never because a goal was missed.

Sizes (the issue's, by default): BENCH_SOURCES (100000) sources for the catalog and sync,
BENCH_REVIEW_FILES (10000) evidence files for the review import; BENCH_TIMEOUT (2400) seconds per
benchmark.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.report import RESULTS_ENV, Row, read_rows, table  # noqa: E402

MAIN_GUARD = 'if __name__ == "__main__":'


def sizes() -> dict[str, str]:
    return {
        "sources": os.environ.get("BENCH_SOURCES", "100000"),
        "review_files": os.environ.get("BENCH_REVIEW_FILES", "10000"),
    }


def arguments(*, script: str, database_url: str) -> list[str]:
    """The issue's sizes for the scripts that take them; any other script runs bare."""
    size = sizes()
    known = {
        "sync": ["--sizes", size["sources"]],
        "catalog": ["--sizes", size["sources"]],
        "review_import": ["--files", size["review_files"], "--database-url", database_url],
    }
    return known.get(script, [])


# The order of the table: the reads first (what users wait on), then writes, then tools.
ORDER = ("catalog", "cold_start", "sync", "review_import")


def discover() -> list[str]:
    scripts = [
        path.stem for path in HERE.glob("*.py") if MAIN_GUARD in path.read_text(encoding="utf-8")
    ]
    scripts.remove("run")
    return sorted(scripts, key=lambda s: (ORDER.index(s) if s in ORDER else len(ORDER), s))


def database_for(*, url: str, script: str) -> str:
    """A database of its own per benchmark, named after the configured one."""
    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/')}_{script}"
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


def run_one(*, script: str, url: str, timeout: float, results: Path) -> tuple[list[Row], str]:
    """The script's rows, and why it failed ("" when it ran to the end)."""
    database_url = database_for(url=url, script=script)
    env = {
        **os.environ,
        RESULTS_ENV: str(results),
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
        "PYTHONPATH": str(HERE.parent),
    }
    command = [sys.executable, str(HERE / f"{script}.py")]
    command += arguments(script=script, database_url=database_url)
    print(f"\n### {script}: {' '.join(command[1:])}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    # The benchmark's own output goes to stderr: stdout carries only the final table.
    try:
        process = subprocess.run(command, env=env, stdout=sys.stderr, timeout=timeout, check=False)
        failure = f"crashed (exit {process.returncode})" if process.returncode else ""
    except subprocess.TimeoutExpired:
        failure = f"timed out after {timeout:.0f} s"
    seconds = time.perf_counter() - started
    print(f"### {script}: {failure or 'done'} in {seconds:.0f} s", file=sys.stderr, flush=True)
    rows = read_rows(path=results)
    if failure or not rows:
        rows.append(Row(benchmark=script, figure="(whole benchmark)", value=None, unit="",
                        note=failure or "no figures reported"))  # fmt: skip
    return rows, failure


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated script names")
    parser.add_argument("--output", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        print("DATABASE_URL must name a PostgreSQL database", file=sys.stderr)
        return 2
    timeout = float(os.environ.get("BENCH_TIMEOUT", "2400"))
    chosen = [s for s in args.only.split(",") if s]
    scripts = [s for s in discover() if not chosen or s in chosen]
    rows: list[Row] = []
    crashed = False
    with tempfile.TemporaryDirectory(prefix="atlas-bench-") as scratch:
        for script in scripts:
            script_rows, failure = run_one(
                script=script, url=url, timeout=timeout, results=Path(scratch) / f"{script}.jsonl"
            )
            crashed |= bool(failure)
            rows += script_rows
    printed = table(rows=rows)
    print(f"\nsources: {sizes()['sources']}, review files: {sizes()['review_files']}\n")
    print(printed)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(printed + "\n", encoding="utf-8")
    return 1 if crashed else 0


if __name__ == "__main__":
    raise SystemExit(main())
