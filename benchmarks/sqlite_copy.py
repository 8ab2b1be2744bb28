"""The same catalog rows in SQLite, for Datasette to serve (the list endpoints' second floor)."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import psycopg

TABLE = "catalog_sources"
# What Datasette gets to serve the same queries fast: the sort keys of the filtered lists (a type,
# a family, by rows) and the default name order, like the project's PostgreSQL indexes.
INDEXES = ("active, type, status, task_count", "family, task_count DESC, id",
           "active, display_name", "task_count")  # fmt: skip


def sqlite_value(*, value: Any) -> Any:
    if isinstance(value, dict | list):
        return orjson.dumps(value).decode()
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return value


def copy_table(*, dsn: str, target: Path) -> int:
    """Copy every column of ``catalog_sources`` into ``target`` (created anew); the row count."""
    target.unlink(missing_ok=True)
    copied = 0
    with psycopg.connect(dsn) as source, sqlite3.connect(target) as sink:
        with source.cursor(name="bench_copy") as cursor:
            cursor.itersize = 5000
            cursor.execute(f"SELECT * FROM {TABLE} ORDER BY id")
            batch = cursor.fetchmany(5000)
            names = [column.name for column in cursor.description]
            sink.execute(f"CREATE TABLE {TABLE} ({', '.join(names)}, PRIMARY KEY (id))")
            marks = ", ".join("?" * len(names))
            while batch:
                sink.executemany(
                    f"INSERT INTO {TABLE} VALUES ({marks})",
                    ([sqlite_value(value=value) for value in row] for row in batch),
                )
                copied += len(batch)
                batch = cursor.fetchmany(5000)
        for number, columns in enumerate(INDEXES):
            sink.execute(f"CREATE INDEX bench_{number} ON {TABLE} ({columns})")
        sink.execute("ANALYZE")
    return copied
