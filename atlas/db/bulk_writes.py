"""Set-based writes of many ``catalog_sources`` rows on PostgreSQL (and ``update_each``, the
display-state write of the other backends, SQLite).

Rows are streamed with ``COPY`` into a transaction-local staging table shaped like the target, then
applied with one statement — ``INSERT … ON CONFLICT`` for a sync's upsert, ``UPDATE … FROM`` for a
display-state recompute. No statement binds per-row parameters: the ORM's bulk methods spend most
of their time quoting them (a forced sync that retired 50,000 sources spent minutes building
``CASE … WHEN``).
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Iterable, Sequence
from typing import Any

import orjson
from django.db import connection, transaction
from django.db.models import Model
from psycopg import sql
from psycopg.types.json import Jsonb

# JSON columns are serialised by orjson (over twice as fast as the json module on catalog rows,
# most of the client-side cost of a 100,000-row COPY); values were checked storable on intake.


class JsonText(str):
    """A JSON column's value given already serialised (a catalog row's canonical bytes): written
    as it is."""


def _columns(model: type[Model], names: Sequence[str]) -> tuple[list[str], set[str]]:
    fields = {field.name: field for field in model._meta.concrete_fields}
    columns = [str(fields[name].column) for name in names]
    json_names = {name for name in names if fields[name].get_internal_type() == "JSONField"}
    return columns, json_names


def _copy_rows(
    cursor: Any,
    *,
    model: type[Model],
    table: str,
    names: Sequence[str],
    records: Iterable[dict[str, Any]],
) -> None:
    columns, json_names = _columns(model, names)
    statement = sql.SQL("COPY {table} ({columns}) FROM STDIN").format(
        table=sql.Identifier(table), columns=sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    with cursor.copy(statement) as copy:
        if not json_names and len(names) > 1:
            # No value to wrap: the row is the record's values, picked in C (the per-value
            # comprehension was a tenth of a 10,000-artifact publication's COPY).
            row_of = operator.itemgetter(*names)
            for record in records:
                copy.write_row(row_of(record))
            return
        for record in records:
            copy.write_row(
                [
                    Jsonb(record[name], dumps=orjson.dumps)
                    if name in json_names
                    and record[name] is not None
                    and not isinstance(record[name], JsonText)
                    else record[name]
                    for name in names
                ]
            )


def _apply_staged(
    *,
    model: type[Model],
    key: str,
    names: Sequence[str],
    records: Iterable[dict[str, Any]],
    purpose: str,
    template: str,
    source: str = "staged",
) -> tuple[int, list[tuple[Any, ...]]]:
    """Stream the records into a transaction-local table shaped like the target, then run
    ``template`` with ``{table}``, ``{stage}``, ``{key}``, ``{columns}`` and ``{assignments}``
    (every column but the key set from ``source``) filled in; returns the affected row count and
    the rows a query template selected."""
    table = model._meta.db_table
    columns, _ = _columns(model, names)
    # One staging table per set of columns: a transaction may stage two different sets (a
    # curated edit's display columns, then a sync's with the retired flag), and the table made
    # for the first would lack the second's columns.
    shape = hashlib.blake2b(",".join(columns).encode(), digest_size=4).hexdigest()
    stage = f"{table}_{purpose}_{shape}"
    key_column = _columns(model, [key])[0][0]
    column_list = sql.SQL(", ").join(map(sql.Identifier, columns))
    # The staging table lives until commit: under autocommit it would vanish between statements.
    with transaction.atomic(), connection.cursor() as wrapper:
        cursor = wrapper.cursor  # the psycopg cursor behind Django's wrapper
        cursor.execute(
            sql.SQL(
                "CREATE TEMP TABLE IF NOT EXISTS {stage} ON COMMIT DROP AS "
                "SELECT {columns} FROM {table} WITH NO DATA"
            ).format(stage=sql.Identifier(stage), columns=column_list, table=sql.Identifier(table))
        )
        cursor.execute(sql.SQL("TRUNCATE {stage}").format(stage=sql.Identifier(stage)))
        _copy_rows(cursor, model=model, table=stage, names=names, records=records)
        assignments = sql.SQL(", ").join(
            sql.SQL("{column} = {source}.{column}").format(
                column=sql.Identifier(column), source=sql.SQL(source)
            )
            for column in columns
            if column != key_column
        )
        cursor.execute(
            sql.SQL(template).format(
                table=sql.Identifier(table),
                stage=sql.Identifier(stage),
                key=sql.Identifier(key_column),
                columns=column_list,
                assignments=assignments,
            )
        )
        return int(cursor.rowcount), cursor.fetchall() if cursor.description else []


def upsert(
    *, model: type[Model], key: str, names: Sequence[str], records: Iterable[dict[str, Any]]
) -> None:
    """Insert the records or, on a ``key`` conflict, set every column of ``names`` but the key."""
    _apply_staged(
        model=model,
        key=key,
        names=names,
        records=records,
        purpose="upsert",
        template=(
            "INSERT INTO {table} ({columns}) SELECT {columns} FROM {stage} "
            "ON CONFLICT ({key}) DO UPDATE SET {assignments}"
        ),
        source="EXCLUDED",
    )


def update(
    *, model: type[Model], key: str, names: Sequence[str], records: Iterable[dict[str, Any]]
) -> int:
    """Set the columns of ``names`` (besides ``key``) on the existing rows the records name."""
    count, _ = _apply_staged(
        model=model,
        key=key,
        names=names,
        records=records,
        purpose="update",
        template=(
            "UPDATE {table} AS target SET {assignments} FROM {stage} AS staged "
            "WHERE target.{key} = staged.{key}"
        ),
    )
    return count


def update_each(
    *, model: type[Model], key: str, names: Sequence[str], records: Iterable[dict[str, Any]]
) -> None:
    """Set the columns of ``names`` (besides ``key``) on the rows the records name, by one
    parameterised ``UPDATE`` run for every record (``executemany``), each value prepared by its
    field as a ``save()`` prepares it. The backends without ``COPY`` (SQLite): the ORM's
    ``bulk_update`` builds one ``CASE … WHEN`` per column over the whole batch, which the database
    then searches for every row — 11 s for 2,500 rows' display columns, against a fraction of a
    second here."""
    fields = {field.name: field for field in model._meta.concrete_fields}
    assigned = [fields[name] for name in names if name != key]
    quote = connection.ops.quote_name
    statement = "UPDATE {table} SET {assignments} WHERE {key} = %s".format(
        table=quote(model._meta.db_table),
        assignments=", ".join(f"{quote(str(field.column))} = %s" for field in assigned),
        key=quote(str(fields[key].column)),
    )
    key_field = fields[key]
    # The callers write a batch at a time (display.BATCH_SIZE rows): held whole, as the cursor's
    # executemany takes a sequence.
    parameters = [
        [field.get_db_prep_save(record[field.name], connection) for field in assigned]
        + [key_field.get_db_prep_save(record[key], connection)]
        for record in records
    ]
    with connection.cursor() as cursor:
        cursor.executemany(statement, parameters)


def copy_insert(
    *, model: type[Model], names: Sequence[str], records: Iterable[dict[str, Any]]
) -> None:
    """Insert new rows straight into the table with COPY (the caller knows none exists yet)."""
    with connection.cursor() as wrapper:
        _copy_rows(
            wrapper.cursor, model=model, table=model._meta.db_table, names=names, records=records
        )


def unanalyzed_rows(*, model: type[Model], rows: int, writing: int) -> tuple[int, int] | None:
    """(rows of ``model``'s table changed since its last ANALYZE, this transaction's ``writing``
    rows added; how many changes PostgreSQL's autovacuum lets pass before it analyzes a table of
    ``rows`` rows: ``autovacuum_analyze_threshold`` + ``autovacuum_analyze_scale_factor`` × rows,
    the server's settings). None when the server does not count changes (``track_counts`` off)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # counts as of now, not cached
        cursor.execute(
            "SELECT current_setting('track_counts')::bool, coalesce(s.n_mod_since_analyze, 0),"
            " current_setting('autovacuum_analyze_threshold')::float8,"
            " current_setting('autovacuum_analyze_scale_factor')::float8"
            " FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid"
            " WHERE c.oid = %s::regclass",
            [model._meta.db_table],
        )
        counted, changed, base, scale = cursor.fetchone()
    return (int(changed) + writing, int(base + scale * rows)) if counted else None


def vacuum_analyze(*, model: type[Model], vacuum: bool = True, fields: Sequence[str] = ()) -> None:
    """After a large write: refresh the planner's statistics (without them the catalog's main query
    was three times slower) and, with ``vacuum`` and outside any transaction, the visibility map
    too, so count queries can be answered from a covering index alone. Inside a transaction only
    ``ANALYZE`` can run. ``fields``: analyze only their columns (a write that changed nothing
    else; an ANALYZE samples every column of 30,000 rows)."""
    table = sql.Identifier(model._meta.db_table)
    vacuum = vacuum and not connection.in_atomic_block
    statement = sql.SQL("VACUUM (ANALYZE) {table}" if vacuum else "ANALYZE {table}").format(
        table=table
    )
    if fields:
        columns, _ = _columns(model, fields)
        statement += sql.SQL(" ({})").format(sql.SQL(", ").join(map(sql.Identifier, columns)))
    with connection.cursor() as cursor:
        cursor.execute(statement)
