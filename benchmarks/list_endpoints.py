"""`/api/sources/` and `/` against their floors, all three served over HTTP in the same run.

* the project under gunicorn (``config.wsgi``, the production shape of ``make serve``);
* the raw floor (``benchmarks/raw_floor.py``) under the same gunicorn command: the project's own
  WHERE / ORDER BY / LIMIT (captured from the project's queries for the same address), one count
  and one rows statement, the rows as orjson (API) or a bare HTML table (page). Its column list is
  the page's narrow one, plus the payload for the API (API rows carry payload fields) — the
  columns a list needs, not the full model the API selects today;
* Datasette serving the same rows copied into SQLite (``benchmarks/sqlite_copy.py``), with the
  same WHERE as ``_where``, the same sort and the same columns.

Requests are interleaved (each round asks all three, in a rotating order) and the medians
compared. The unfiltered landing (`/`, `/api/sources/`) is judged against the filtered answer of
the same size (≤ 1.5×) and by the number of full scans of ``catalog_sources`` in its plans (0).

The filter options' counts (``/facets.json``, filtered and unfiltered) are judged against
Datasette's facet request for the same view (the page's WHERE, a ``_facet`` per faceted column,
no rows), ≤ 1.0×; ``run_facets`` measures them alone, for another size of the catalog. Flat
from 10,000 to 100,000 sources (≤ 1.25×) is judged with every size served at once, each from a
database of its own (``run_flat_facets``): measured minutes apart, the two sizes met different
loads (1.57× sequentially, 0.92× side by side in the same hour).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import orjson
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from benchmarks import servers
from benchmarks.report import Row, emit, emit_limit, median_ms
from benchmarks.sqlite_copy import TABLE, copy_table

FILTER = "type=RLVR&sort=-rows"
# A family sorted by rows: a shape once measured short of Datasette (the API only).
FAMILY_FILTER = "family=text-to-sql&sort=-rows"
GOAL_ROWS = (50, 500)  # the page sizes the speed goals are set for
ROWS_FROM = f' FROM "{TABLE}" '
# The filter options' counts the page's script asks for after the page (atlas.web.facets), each
# against Datasette's facets of the same view (the page whose WHERE it shares), and their plans
# checked for full scans.
FACET_PATHS = {
    "/facets.json filtered": (f"/facets.json?{FILTER}", f"/?{FILTER}&page_size=50"),
    "/facets.json unfiltered": ("/facets.json", "/"),
}
# The columns of the faceted filters (type, turns, family, benchmark, quality, difficulty).
FACET_COLUMNS = ("type", "turns", "family", "is_benchmark", "effective_quality",
                 "difficulty_status")  # fmt: skip


@dataclass(frozen=True)
class Case:
    label: str
    path: str
    kind: str  # "api" or "page"
    rows: int
    filtered: bool
    datasette_sort: tuple[str, str]  # Datasette's sort parameter and column
    yardstick: bool = True  # the filtered answer the unfiltered landing is judged against


def cases() -> list[Case]:
    by_rows = ("_sort_desc", "task_count")
    by_name = ("_sort", "display_name")
    found = []
    for kind, prefix in (("api", "/api/sources/"), ("page", "/")):
        for rows in (50, 100, 500):
            path = f"{prefix}?{FILTER}&page_size={rows}"
            label = f"{prefix} filter + sort, {rows} rows"
            found.append(Case(label, path, kind, rows, True, by_rows))
        # The landing's default page size is 100: the filtered 100-row answer is its yardstick.
        found.append(Case(f"{prefix} unfiltered landing", prefix, kind, 100, False, by_name))
    for rows in GOAL_ROWS:
        path = f"/api/sources/?{FAMILY_FILTER}&page_size={rows}"
        label = f"/api/sources/ family + sort by rows, {rows} rows"
        found.append(Case(label, path, "api", rows, True, by_rows, yardstick=False))
    return found


def captured(*, client: Client, path: str) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path)
    if response.status_code != 200:
        raise RuntimeError(f"{path} answered {response.status_code}")
    return [query["sql"] for query in queries.captured_queries]


def rows_statement(*, statements: list[str]) -> str:
    """The project's statement that reads the page of rows (the one with a LIMIT)."""
    return next(s for s in statements if ROWS_FROM in s and " LIMIT " in s and "GROUP BY" not in s)


def select_list(*, statement: str) -> str:
    return statement[len("SELECT ") : statement.index(ROWS_FROM)]


def where_clause(*, statement: str) -> str:
    tail = statement[statement.index(ROWS_FROM) + len(ROWS_FROM) :]
    return tail[len("WHERE ") : tail.index(" ORDER BY ")] if tail.startswith("WHERE ") else ""


def floor_plan(*, client: Client, chosen: list[Case]) -> dict[str, dict[str, str]]:
    """For each address: the floor's count and rows statements, and its answer format."""
    narrow = select_list(statement=rows_statement(statements=captured(client=client, path="/")))
    plan = {}
    for case in chosen:
        statement = rows_statement(statements=captured(client=client, path=case.path))
        tail = statement[statement.index(ROWS_FROM) :]
        where = where_clause(statement=statement)
        columns = narrow + (f', "{TABLE}"."payload"' if case.kind == "api" else "")
        plan[case.path] = {
            "count": f'SELECT COUNT(*) FROM "{TABLE}"' + (f" WHERE {where}" if where else ""),
            "rows": f"SELECT {columns}{tail}",
            "format": "json" if case.kind == "api" else "html",
        }
    return plan


def datasette_path(*, case: Case, where: str, columns: list[str]) -> str:
    """The same rows from Datasette: its JSON (objects) for the API, its HTML table for the page."""
    parameter, column = case.datasette_sort
    query = [("_where", where), (parameter, column), ("_size", str(case.rows))]
    query += [("_col", name) for name in columns]
    if case.kind == "api":
        return f"/bench/{TABLE}.json?" + urlencode([*query, ("_shape", "objects")])
    return f"/bench/{TABLE}?" + urlencode(query)


def datasette_facets_path(*, where: str) -> str:
    """Datasette's facet counts of a view: no rows, one ``_facet`` per faceted column."""
    query = [("_where", where), *(("_facet", column) for column in FACET_COLUMNS), ("_size", "0")]
    return f"/bench/{TABLE}.json?" + urlencode(query)


def facet_paths(*, client: Client) -> dict[str, dict[str, str]]:
    """Each facets address and Datasette's for the same view (the WHERE of its page)."""
    paths = {}
    for label, (path, page) in FACET_PATHS.items():
        where = where_clause(
            statement=rows_statement(statements=captured(client=client, path=page))
        )
        paths[label] = {"atlas": path, "datasette": datasette_facets_path(where=where)}
    return paths


def full_scans(*, statements: list[str]) -> int:
    """Sequential scans of the catalog table in the plans of these statements."""
    scans = 0
    with connection.cursor() as cursor:
        for statement in statements:
            if TABLE not in statement:
                continue
            cursor.execute(f"EXPLAIN {statement}")
            scans += sum(f"Seq Scan on {TABLE}" in line for (line,) in cursor.fetchall())
    return scans


def measure(
    *, servers_by_name: dict[str, servers.Server], paths: dict[str, dict[str, str]], rounds: int
) -> dict[str, dict[str, float]]:
    """Median milliseconds per case and server, over interleaved rounds after a warm-up."""
    names = list(servers_by_name)
    samples: dict[str, dict[str, list[float]]] = {
        label: {name: [] for name in names} for label in paths
    }
    for number in range(rounds + 3):
        for label, by_server in paths.items():
            order = names[number % len(names) :] + names[: number % len(names)]
            for name in order:
                seconds = servers_by_name[name].seconds(path=by_server[name])
                if number >= 3:
                    samples[label][name].append(seconds)
    return {
        label: {name: median_ms(samples=values) for name, values in by_server.items()}
        for label, by_server in samples.items()
    }


def run_facets(*, size: int, rounds: int, scratch: Path, database_url: str, dsn: str) -> None:
    """The facets alone against Datasette's, at this size."""
    client = Client()
    sqlite_path = scratch / "bench.db"
    copy_table(dsn=dsn, target=sqlite_path)
    env = {**os.environ, "DATABASE_URL": database_url}
    log = scratch / "servers.log"
    with servers.stopped_after() as started:
        started["atlas"] = servers.gunicorn(
            name="atlas", app="config.wsgi", env=env, path="/healthz", log=log
        )
        started["datasette"] = servers.datasette(database=sqlite_path, env=env, path="/", log=log)
        medians = measure(servers_by_name=started, paths=facet_paths(client=client), rounds=rounds)
    report_facets(size=size, rounds=rounds, medians=medians, client=client)


def run_flat_facets(
    *, databases: dict[int, str], rounds: int, scratch: Path
) -> dict[str, dict[str, float]]:
    """The facets of every size at once: each size's database (``{size: DATABASE_URL}``) under a
    gunicorn of its own, every round asking each in turn. The medians, ``{label: {str(size): ms}}``.
    """
    log = scratch / "servers.log"
    with servers.stopped_after() as started:
        for size, database_url in databases.items():
            env = {**os.environ, "DATABASE_URL": database_url}
            started[str(size)] = servers.gunicorn(
                name=f"atlas {size:,}", app="config.wsgi", env=env, path="/healthz", log=log
            )
        paths = {label: dict.fromkeys(started, path) for label, (path, _) in FACET_PATHS.items()}
        load = os.getloadavg()[0]
        medians = measure(servers_by_name=started, paths=paths, rounds=rounds)
    print(f"facets served at once: 1-minute load {load:.1f}, then {os.getloadavg()[0]:.1f}")
    return medians


def run(*, size: int, rounds: int, scratch: Path, dsn: str, database_url: str) -> None:
    """Every list address and the facets at this size."""
    client = Client()
    chosen = cases()
    plan = floor_plan(client=client, chosen=chosen)
    plan_file = scratch / "raw-floor-plan.json"
    plan_file.write_bytes(orjson.dumps(plan))
    narrow_columns = re.findall(r'"catalog_sources"\."(\w+)" AS', plan["/"]["rows"])
    sqlite_path = scratch / "bench.db"
    copied = copy_table(dsn=dsn, target=sqlite_path)
    print(f"copied {copied:,} rows into SQLite for Datasette", flush=True)

    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "RAW_FLOOR_DSN": dsn,
        "RAW_FLOOR_PLAN": str(plan_file),
    }
    log = scratch / "servers.log"
    with servers.stopped_after() as started:
        started["atlas"] = servers.gunicorn(
            name="atlas", app="config.wsgi", env=env, path="/healthz", log=log
        )
        started["raw"] = servers.gunicorn(
            name="raw",
            app="benchmarks.raw_floor:application",
            env=env,
            path=chosen[0].path,
            log=log,
        )
        started["datasette"] = servers.datasette(database=sqlite_path, env=env, path="/", log=log)
        # Datasette gets the page's columns, plus the payload for the API (its rows' fields come
        # from it); its HTML table renders every column it gets, so the page gets no payload.
        columns = {"page": narrow_columns, "api": [*narrow_columns, "payload"]}
        paths = {
            case.label: {
                "atlas": case.path,
                "raw": case.path,
                "datasette": datasette_path(
                    case=case,
                    where=where_clause(statement=plan[case.path]["rows"]),
                    columns=columns[case.kind],
                ),
            }
            for case in chosen
        }
        medians = measure(servers_by_name=started, paths=paths, rounds=rounds)
        facets = measure(
            servers_by_name={name: started[name] for name in ("atlas", "datasette")},
            paths=facet_paths(client=client),
            rounds=rounds,
        )
    report(size=size, rounds=rounds, chosen=chosen, medians=medians, client=client)
    report_facets(size=size, rounds=rounds, medians=facets, client=client)


def report_facets(
    *, size: int, rounds: int, medians: dict[str, dict[str, float]], client: Client
) -> None:
    for label, (path, _) in FACET_PATHS.items():
        emit(row=Row(benchmark="catalog", figure=f"{label}, {size:,} sources, p50 of {rounds}",
                     value=medians[label]["atlas"], unit="ms",
                     baseline="Datasette facets of the view (SQLite)",
                     baseline_value=medians[label]["datasette"], goal_operator="<=",
                     goal=1.0))  # fmt: skip
        emit_limit(benchmark="catalog", figure=f"{label}: full scans of {TABLE}",
                   value=full_scans(statements=captured(client=client, path=path)),
                   unit="scans", at_most=0)  # fmt: skip


def flat_facet_rows(
    *, small: int, large: int, rounds: int, medians: dict[str, dict[str, float]]
) -> list[Row]:
    """The facets at the large size against the same at the small one, both served at once
    (``run_flat_facets``' medians): flat is ≤ 1.25×."""
    return [
        Row(benchmark="catalog",
            figure=f"{label}, {large:,} sources against {small:,}, served at once, p50 of {rounds}",
            value=medians[label][str(large)], unit="ms", baseline=f"the same at {small:,} sources",
            baseline_value=medians[label][str(small)], goal_operator="<=", goal=1.25)
        for label in FACET_PATHS
    ]  # fmt: skip


def report(
    *,
    size: int,
    rounds: int,
    chosen: list[Case],
    medians: dict[str, dict[str, float]],
    client: Client,
) -> None:
    goals = {"api": {"raw": 1.5, "datasette": 1.0}, "page": {"raw": 2.5, "datasette": 0.8}}
    floor_names = {
        "api": {"raw": "raw psycopg + orjson", "datasette": "Datasette JSON (SQLite)"},
        "page": {"raw": "raw psycopg bare table", "datasette": "Datasette HTML (SQLite)"},
    }
    filtered = {(case.kind, case.rows): case for case in chosen if case.filtered and case.yardstick}
    for case in chosen:
        figure = f"{case.label}, {size:,} sources, p50 of {rounds}"
        atlas_ms = medians[case.label]["atlas"]
        if not case.filtered:
            same_size = filtered[(case.kind, case.rows)]
            emit(row=Row(benchmark="catalog", figure=figure, value=atlas_ms, unit="ms",
                         baseline=f"filtered, {case.rows} rows",
                         baseline_value=medians[same_size.label]["atlas"],
                         goal_operator="<=", goal=1.5))  # fmt: skip
            scans = full_scans(statements=captured(client=client, path=case.path))
            emit_limit(benchmark="catalog", figure=f"{case.label}: full scans of {TABLE}",
                       value=scans, unit="scans", at_most=0)  # fmt: skip
            continue
        if case.rows not in GOAL_ROWS:
            continue  # measured only as the landing's yardstick
        for floor in ("raw", "datasette"):
            emit(row=Row(benchmark="catalog", figure=figure, value=atlas_ms, unit="ms",
                         baseline=floor_names[case.kind][floor],
                         baseline_value=medians[case.label][floor],
                         goal_operator="<=", goal=goals[case.kind][floor]))  # fmt: skip
