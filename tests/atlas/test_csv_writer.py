"""The one CSV dialect and streaming writer (``/export.csv``, the API's CSV twin)."""

import csv
import io

from atlas.export.csv_writer import csv_text, streamed_csv


def test_every_field_quoted_crlf_utf8():
    assert csv_text([("a", 'say "hi"', "x\ny", 1, None)]) == '"a","say ""hi""","x\ny","1",""\r\n'


def test_streams_the_header_then_batches_of_rows():
    rows = [(f"r{n}", n) for n in range(5)]
    chunks = list(streamed_csv(header=("name", "n"), rows=iter(rows), rows_per_chunk=2))
    assert [chunk.count(b"\r\n") for chunk in chunks] == [3, 2, 1]
    assert b"".join(chunks) == csv_text([("name", "n"), *rows]).encode("utf-8")
    parsed = list(csv.reader(io.StringIO(b"".join(chunks).decode("utf-8"), newline="")))
    assert parsed == [["name", "n"], *([name, str(n)] for name, n in rows)]


def test_a_full_last_batch_ends_with_an_empty_chunk_and_no_rows_give_the_header():
    chunks = list(streamed_csv(header=("é",), rows=[("a",), ("b",)], rows_per_chunk=2))
    assert chunks == ['"é"\r\n"a"\r\n"b"\r\n'.encode(), b""]
    assert list(streamed_csv(header=("h",), rows=[], rows_per_chunk=2)) == [b'"h"\r\n']
