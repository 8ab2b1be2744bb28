"""The CSV export of a catalog view: raw values, every field quoted, CRLF,
formula-injection guard, streamed in constant memory.

The database prepares every field as text (formula guard, booleans); the joined, guarded tags are a
stored column (``Source.export_tags``). On PostgreSQL the
server also writes the CSV (`COPY … TO STDOUT`), and Python only turns each row's LF into CRLF;
elsewhere row tuples from a server-side cursor go through the C csv writer in batches.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import psycopg
from django.db import connections
from django.db.models import Case, F, Func, QuerySet, TextField, Value, When
from django.db.models.expressions import Combinable
from django.db.models.functions import Cast, Coalesce
from django.http import StreamingHttpResponse

from atlas.export.csv_writer import csv_text, streamed_csv
from atlas.models import Source
from atlas.rules.formula_guard import guard_sql

FILENAME = "rl-data-atlas.csv"
HEADER = (
    "Source name", "Catalog", "Dataset", "Input rows", "Interaction", "Type", "Benchmark",
    "Family", "Difficulty", "Quality", "Review date", "Status", "Pinned dataset URL",
    "Dataset revision", "Pipeline / source name", "Tags", "Verifier URL", "Verifier revision",
)  # fmt: skip
CURSOR_CHUNK = 5000
ROWS_PER_WRITE = 1000


class PayloadText(Func):
    """A payload key as SQL text: JSON null is SQL NULL."""

    output_field = TextField()

    def __init__(self, key: str) -> None:
        super().__init__(F("payload"), Value(key))

    def as_sql(self, compiler, connection, **extra):
        lhs, lhs_params = compiler.compile(self.source_expressions[0])
        key = self.source_expressions[1].value
        if connection.vendor == "postgresql":
            return f"({lhs} ->> %s)", (*lhs_params, key)
        return f"JSON_EXTRACT({lhs}, %s)", (*lhs_params, f'$."{key}"')


class FormulaGuard(Func):
    """``formula_guard.guard_sql`` of an expression, for the ORM."""

    output_field = TextField()

    def as_sql(self, compiler, connection, **extra):
        value, params = compiler.compile(self.source_expressions[0])
        return guard_sql(value, vendor=connection.vendor), (*params, *params, *params)


def export_fields(*, guard: bool = True) -> dict[str, Combinable]:
    """Every exported field, in header order, as a SQL expression (``guard=False``: the raw
    values, for a caller that guards them itself)."""
    text = {name: F(name) for name in ("display_name", "origin", "canonical_source")}

    def Guarded(expression: Combinable) -> Combinable:
        return FormulaGuard(expression) if guard else expression

    fields: dict[str, Combinable] = {
        **{f"csv_{name}": Guarded(expression) for name, expression in text.items()},
        "csv_task_count": F("task_count"),
        "csv_turns": F("turns"),
        "csv_type": F("type"),
        "csv_benchmark": Case(
            When(is_benchmark=True, then=Value("true")),
            default=Value("false"),
            output_field=TextField(),
        ),
        "csv_family": Guarded(F("family")),
        "csv_difficulty": Guarded(F("difficulty_text")),
        "csv_quality": F("effective_quality"),
        "csv_review_date": Guarded(F("display_review_date_text")),
        "csv_status": F("status"),
    }
    for key in ("url", "dataset_revision", "name"):
        fields[f"csv_{key}"] = Guarded(PayloadText(key))
    fields["csv_tags"] = F("export_tags")  # stored joined and guarded
    for key in ("verifier_url", "verifier_revision"):
        fields[f"csv_{key}"] = Guarded(PayloadText(key))
    return fields


def guarded_names() -> frozenset[str]:
    """The exported fields a spreadsheet could read as a formula."""
    return frozenset(
        name for name, expression in export_fields().items() if isinstance(expression, FormulaGuard)
    )


def export_values(
    *, queryset: QuerySet[Source], nulls_as_empty: bool = False, guard: bool = True
) -> QuerySet:
    """The view's rows as export_fields() tuples, in the view's order."""
    fields = export_fields(guard=guard)
    if nulls_as_empty:
        # COPY leaves NULL unquoted even with FORCE_QUOTE; the csv writer quotes None as "".
        fields = {
            name: Coalesce(Cast(expression, TextField()), Value(""), output_field=TextField())
            for name, expression in fields.items()
        }
    return queryset.annotate(**fields).values_list(*fields)


def header_line() -> str:
    return csv_text([HEADER])


def csv_chunks(*, queryset: QuerySet[Source]) -> Iterator[bytes]:
    """The header, then batches of rows; nulls are written as empty quoted fields."""
    if connections[queryset.db].vendor == "postgresql":
        return copy_chunks(queryset=queryset)
    return writer_chunks(queryset=queryset)


def writer_chunks(*, queryset: QuerySet[Source]) -> Iterator[bytes]:
    rows = export_values(queryset=queryset).iterator(chunk_size=CURSOR_CHUNK)
    yield from streamed_csv(header=HEADER, rows=rows, rows_per_chunk=ROWS_PER_WRITE)


def copy_chunks(*, queryset: QuerySet[Source]) -> Iterator[bytes]:
    """The same bytes as writer_chunks(), written by PostgreSQL's COPY in CSV format."""
    connection = connections[queryset.db]
    values = export_values(queryset=queryset, nulls_as_empty=True, guard=False)
    # The view's SELECT and its parameters, as Django would run it (compiled for the default
    # database, the one the Atlas has); Django offers no other route to a queryset's SQL.
    sql, params = values.query.sql_with_params()
    # The inner query computes each value once (a tags subquery, a JSON extraction); the outer
    # one guards it by column name, so no expression is evaluated again per comparison.
    guarded = guarded_names()
    columns = ", ".join(
        guard_sql(f"raw.{name}", vendor=connection.vendor) if name in guarded else f"raw.{name}"
        for name in export_fields()
    )
    query = (
        f"COPY (SELECT {columns} FROM ({sql}) AS raw) TO STDOUT "
        "WITH (FORMAT csv, FORCE_QUOTE *, ENCODING 'UTF8')"
    )
    batch = [header_line().encode("utf-8")]
    with connection.cursor() as cursor, connection.wrap_database_errors:
        # COPY takes no bind parameters: psycopg merges them client-side as its execute() would,
        # and Django's debug cursor logs the one statement it is handed.
        with psycopg.ClientCursor(cursor.connection) as client:
            statement = client.mogrify(query, params)
        with cursor.copy(statement) as copy:
            for row in copy:
                # libpq hands COPY data over one whole row at a time, so the last byte is the
                # row's LF and any other LF sits inside a quoted value and must stay as it is.
                batch.append(row[:-1])
                batch.append(b"\r\n")
                if len(batch) > 2 * ROWS_PER_WRITE:
                    yield b"".join(batch)
                    batch.clear()
    yield b"".join(batch)


def csv_response(*, queryset: QuerySet[Source]) -> StreamingHttpResponse:
    chunks = csv_chunks(queryset=queryset)
    # The first chunk is read here, inside the view (it runs the query): a database that cannot
    # be reached is then an error the view raises, answered 503 with Retry-After
    # (atlas.web.unavailable), not one raised after a 200 began streaming. A connection lost
    # later ends the stream short, never as a complete-looking file.
    first = next(chunks)
    response = StreamingHttpResponse(
        itertools.chain((first,), chunks), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{FILENAME}"'
    return response
