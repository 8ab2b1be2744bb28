"""The raw floor of a list endpoint: the same SQL as the project, psycopg + orjson, nothing else.

Served by the same gunicorn command as the project (``benchmarks.raw_floor:application``), so
both pay the same HTTP cost. ``RAW_FLOOR_PLAN`` names a JSON file written by
``benchmarks/catalog.py``: for each request path (with its query string) the count and rows
statements the project ran for it, and whether to answer JSON (``{"count", "results"}`` by orjson)
or a bare HTML table of the rows. ``RAW_FLOOR_DSN`` is the database; each worker keeps one
connection, as the project does (``CONN_MAX_AGE``).
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import set_json_loads

_connection: psycopg.Connection | None = None
_plan: dict[str, dict[str, str]] = {}


def connection() -> psycopg.Connection:
    global _connection
    if _connection is None or _connection.closed:
        _connection = psycopg.connect(os.environ["RAW_FLOOR_DSN"], autocommit=True)
        # JSON columns parsed by orjson too (psycopg's default is the json module).
        set_json_loads(orjson.loads, _connection)
    return _connection


def plan() -> dict[str, dict[str, str]]:
    if not _plan:
        _plan.update(orjson.loads(Path(os.environ["RAW_FLOOR_PLAN"]).read_bytes()))
    return _plan


def bare_table(*, count: int, rows: list[dict[str, Any]]) -> bytes:
    """The least a page of rows can be: a count and one escaped cell per value."""
    names = list(rows[0]) if rows else []
    parts = [f"<!doctype html><title>floor</title><p>{count} sources</p><table><tr>"]
    parts += [f"<th>{html.escape(name)}</th>" for name in names]
    parts.append("</tr>")
    for row in rows:
        parts.append("<tr>")
        parts += [f"<td>{html.escape(str(value))}</td>" for value in row.values()]
        parts.append("</tr>")
    parts.append("</table>")
    return "".join(parts).encode()


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    key = environ.get("PATH_INFO", "/")
    if environ.get("QUERY_STRING"):
        key += "?" + environ["QUERY_STRING"]
    entry = plan().get(key)
    if entry is None:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not in the plan"]
    with connection().cursor(row_factory=dict_row) as cursor:
        cursor.execute(entry["count"].encode())
        count = next(iter(cursor.fetchone().values()))
        cursor.execute(entry["rows"].encode())
        rows = cursor.fetchall()
    if entry["format"] == "html":
        body, kind = bare_table(count=count, rows=rows), "text/html; charset=utf-8"
    else:
        body = orjson.dumps({"count": count, "results": rows}, default=str)
        kind = "application/json"
    start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body)))])
    return [body]
