"""The one CSV dialect every CSV the Atlas writes (``/export.csv``, the API's CSV twin and its
error answers): every field quoted, CRLF line ends, UTF-8 without a byte order mark; and the one
streaming writer, which turns rows into chunks of bytes a batch at a time, in constant memory."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any


class AtlasDialect(csv.excel):
    quoting = csv.QUOTE_ALL
    lineterminator = "\r\n"


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    """Whole rows as CSV text."""
    buffer = io.StringIO()
    csv.writer(buffer, dialect=AtlasDialect).writerows(rows)
    return buffer.getvalue()


def streamed_csv(
    *, header: Iterable[Any], rows: Iterable[Iterable[Any]], rows_per_chunk: int
) -> Iterator[bytes]:
    """The header, then the rows, ``rows_per_chunk`` to a chunk (the header shares the first);
    always at least one chunk, the last one possibly short."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, dialect=AtlasDialect)
    writer.writerow(header)
    iterator = iter(rows)
    while True:
        batch = list(islice(iterator, rows_per_chunk))
        writer.writerows(batch)
        yield buffer.getvalue().encode("utf-8")
        if len(batch) < rows_per_chunk:
            return
        buffer.seek(0)
        buffer.truncate()
