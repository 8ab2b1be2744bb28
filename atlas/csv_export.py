"""The CSV export of a catalog view (catalog-page.md §14): raw values, every field quoted, CRLF,
formula-injection guard, streamed from a server-side cursor in constant memory.

The database prepares every field as text (formula guard, booleans, joined tags), so Python only
hands row tuples to the C csv writer in batches.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from itertools import islice

from django.db.models import Case, F, Func, QuerySet, TextField, Value, When
from django.db.models.functions import Concat, Left
from django.db.models.lookups import In
from django.http import StreamingHttpResponse

from atlas.models import Source

FILENAME = "rl-data-atlas.csv"
HEADER = (
    "Source name", "Catalog", "Dataset", "Input rows", "Interaction", "Type", "Benchmark",
    "Family", "Difficulty", "Quality", "Review date", "Status", "Pinned dataset URL",
    "Dataset revision", "Pipeline / source name", "Tags", "Verifier URL", "Verifier revision",
)  # fmt: skip
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
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


class JoinedTags(Func):
    """The payload's tags joined by commas, in their stored order."""

    output_field = TextField()

    def __init__(self) -> None:
        super().__init__(F("payload"))

    def as_sql(self, compiler, connection, **extra):
        payload, params = compiler.compile(self.source_expressions[0])
        if connection.vendor == "postgresql":
            sql = (
                "array_to_string(ARRAY(SELECT jsonb_array_elements_text("
                f"{payload} -> 'tags')), ',')"
            )
        else:
            sql = f"(SELECT group_concat(value, ',') FROM json_each({payload}, '$.tags'))"
        return sql, params


def guarded(expression) -> Case:
    """Prefix a value that a spreadsheet would read as a formula with a single quote."""
    return Case(
        When(In(Left(expression, 1), list(FORMULA_PREFIXES)), then=Concat(Value("'"), expression)),
        default=expression,
        output_field=TextField(),
    )


def export_fields() -> dict[str, object]:
    """Every exported field, in header order, as a SQL expression."""
    text = {name: F(name) for name in ("display_name", "origin", "canonical_source")}
    fields = {
        **{f"csv_{name}": guarded(expression) for name, expression in text.items()},
        "csv_task_count": F("task_count"),
        "csv_turns": F("turns"),
        "csv_type": F("type"),
        "csv_benchmark": Case(
            When(is_benchmark=True, then=Value("true")),
            default=Value("false"),
            output_field=TextField(),
        ),
        "csv_family": guarded(F("family")),
        "csv_difficulty": guarded(F("difficulty_text")),
        "csv_quality": F("effective_quality"),
        "csv_review_date": guarded(F("display_review_date_text")),
        "csv_status": F("status"),
    }
    for key in ("url", "dataset_revision", "name"):
        fields[f"csv_{key}"] = guarded(PayloadText(key))
    fields["csv_tags"] = guarded(JoinedTags())
    for key in ("verifier_url", "verifier_revision"):
        fields[f"csv_{key}"] = guarded(PayloadText(key))
    return fields


def export_rows(*, queryset: QuerySet[Source]) -> Iterator[tuple]:
    fields = export_fields()
    return queryset.annotate(**fields).values_list(*fields).iterator(chunk_size=CURSOR_CHUNK)


def csv_chunks(*, queryset: QuerySet[Source]) -> Iterator[str]:
    """The header, then batches of rows; nulls are written as empty quoted fields."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(HEADER)
    rows = export_rows(queryset=queryset)
    while True:
        batch = list(islice(rows, ROWS_PER_WRITE))
        if batch:
            writer.writerows(batch)
        yield buffer.getvalue()
        if len(batch) < ROWS_PER_WRITE:
            return
        buffer.seek(0)
        buffer.truncate()


def csv_response(*, queryset: QuerySet[Source]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        (chunk.encode("utf-8") for chunk in csv_chunks(queryset=queryset)),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="{FILENAME}"'
    return response
