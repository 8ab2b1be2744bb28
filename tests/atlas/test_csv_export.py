"""GET /export.csv."""

import csv
import io

import pytest
from django.conf import settings
from django.http import QueryDict

from atlas.export.csv_export import HEADER, copy_chunks, writer_chunks
from atlas.filters import lenient_filterset
from atlas.models import Source
from atlas.rules import formula_guard
from tests.atlas.test_catalog_helpers import make_row, seed, set_state

pytestmark = pytest.mark.django_db


def export(client, query: str = "") -> tuple[object, bytes]:
    response = client.get("/export.csv" + query)
    assert response.status_code == 200
    assert response.streaming
    return response, b"".join(response.streaming_content)


@pytest.fixture
def catalog(write_catalog):
    rows = [
        make_row("MarinSkyRL:a", display_name='=HYPERLINK("x")', family="math-answer",
                 tags=["rlvr", "single-turn", "gym/aime", "benchmark"], task_count=1234,
                 notes='say "hi"'),
        make_row("MarinSkyRL:b", display_name='He said "yes", then\nleft', task_count=None,
                 url=None, verifier_revision="@evil", tags=["alignment"]),
        make_row("MarinSkyRL:c", display_name="-minus", tags=["excluded"], task_count=3),
        make_row("MarinSkyRL:d", display_name="\tTabbed", task_count=7),
    ]  # fmt: skip
    seed(write_catalog, rows)
    set_state("MarinSkyRL:a", effective_quality="good", difficulty_text="Current: m 1/2 solved",
              display_review_date_text="2025-03-03T12:00:00Z")  # fmt: skip


def test_headers_and_no_bom(client, catalog):
    response, body = export(client)
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="rl-data-atlas.csv"'
    assert not body.startswith(b"\xef\xbb\xbf")
    first_line = body.split(b"\r\n", 1)[0].decode()
    assert first_line == ",".join(f'"{name}"' for name in HEADER)


def test_rows_raw_values_quoting_and_formula_guard(client, catalog):
    _, body = export(client, "?sort=-rows")
    lines = body.decode().split("\r\n")
    assert lines[-1] == "" and len(lines) == 5  # header + 3 rows (excluded hidden) + final CRLF
    assert lines[1] == (
        '"\'=HYPERLINK(""x"")","MarinSkyRL","example/a","1234","Single-turn","RLVR","true",'
        '"math-answer","Current: m 1/2 solved","good","2025-03-03T12:00:00Z","Available",'
        f'"https://huggingface.co/datasets/example/a","{"a" * 40}","a",'
        f'"rlvr,single-turn,gym/aime,benchmark","","{"b" * 64}"'
    )
    assert lines[2].startswith('"\'\tTabbed","MarinSkyRL","example/d","7",')
    assert lines[3].startswith('"He said ""yes"", then\nleft","MarinSkyRL","example/b","","",')
    assert ',"Alignment","false","math-answer","","","","Available","",' in lines[3]
    assert lines[3].endswith('"alignment","","\'@evil"')


def test_same_query_as_the_page(client, catalog):
    _, body = export(client, "?show_excluded=1&sort=name&q=minus&page=3&page_size=25")
    lines = body.decode().split("\r\n")
    assert len(lines) == 3 and lines[1].startswith('"\'-minus"')
    assert '"Excluded"' in lines[1]


@pytest.mark.parametrize("query", ["?type=bogus", "?quality=ok&sort=-id", "?colour=red"])
def test_an_invalid_filter_is_refused_never_the_whole_catalog(client, catalog, query):
    response = client.get("/export.csv" + query)
    assert response.status_code == 400
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    body = response.content.decode()
    assert body.startswith("Invalid export query:")
    for pair in query[1:].split("&"):
        assert pair.split("=")[0] + ":" in body


def test_paging_and_the_open_source_are_not_filters(client, catalog):
    response = client.get("/export.csv?page=2&page_size=25&source=MarinSkyRL:a")
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("query", "filename"),
    [
        ("", "rl-data-atlas.csv"),
        ("?sort=-rows", "rl-data-atlas.csv"),
        ("?type=rlvr&quality=good", "rl-data-atlas_type-RLVR_quality-good.csv"),
        ("?origin=MarinSkyRL&q=say+hi&show_bad=1",
         "rl-data-atlas_origin-MarinSkyRL_q-say-hi_show-bad.csv"),
    ],
)  # fmt: skip
def test_the_download_name_names_the_filters(client, catalog, query, filename):
    response = client.get("/export.csv" + query)
    assert response["Content-Disposition"] == f'attachment; filename="{filename}"'


@pytest.mark.parametrize(
    ("value", "field"),
    [("=1", "'=1"), ("+1", "'+1"), ("-1", "'-1"), ("@a", "'@a"), ("\ta", "'\ta"),
     ("\ra", "'\ra"), ("a=b", "a=b"), (" =b", " =b")],
)  # fmt: skip
def test_formula_guard_on_every_leading_character(client, write_catalog, value, field):
    seed(write_catalog, [make_row("MarinSkyRL:x", display_name=value, family=value,
                                  tags=[value, "rlvr"])])  # fmt: skip
    _, body = export(client)
    line = body.decode().split("\r\n")[1]
    assert line.startswith(f'"{field}","MarinSkyRL",')
    assert f',"{field}","",""' in line  # family keeps the guard too
    assert f',"{field},rlvr",' in line  # and the tags, joined in their stored order


def test_streams_in_chunks_with_a_server_side_iterator(
    client, write_catalog, django_assert_num_queries
):
    seed(write_catalog, [make_row(f"MarinSkyRL:r{n:04}") for n in range(2500)])
    # One streaming query, started in the view (its first rows: a database that is down is a
    # 503 there, atlas.web.unavailable), the rest read in chunks as the answer streams.
    with django_assert_num_queries(1):
        response = client.get("/export.csv")
        chunks = iter(response.streaming_content)
        first = next(chunks)
        rest = list(chunks)
    assert first.startswith(b'"Source name"')
    assert len(rest) >= 2  # rows arrive in several chunks, not one buffered body
    assert sum(chunk.count(b"\r\n") for chunk in [first, *rest]) == 2501


TRICKY = [
    'quote " inside, and "" doubled',
    "line\nfeed",
    "crlf\r\nend\n",
    "\rcarriage",
    "comma,separated,",
    "naïve café — 数据 🚀",
    "=SUM(A1)",
    "+1",
    "-1",
    "@user",
    "\ttab",
    "back\\slash \\N",
    '"',
    "\n",
    "",
]


@pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql",
    reason="the COPY path is PostgreSQL's",
)
def test_copy_and_writer_paths_are_byte_identical(write_catalog):
    seed(write_catalog, [make_row(f"MarinSkyRL:t{n:02}") for n in range(len(TRICKY) + 1)])
    for n, value in enumerate(TRICKY):
        source = Source.objects.get(pk=f"MarinSkyRL:t{n:02}")
        payload = {
            **source.payload,
            "url": value,
            "name": None,
            "tags": [value, "rlvr", value],
            "verifier_url": value or None,
        }
        payload.pop("dataset_revision")
        set_state(source.pk, display_name=value, family=value, canonical_source=value,
                  export_tags=formula_guard.export_tags(payload["tags"]),
                  difficulty_text=value or None, display_review_date_text=None,
                  task_count=None if n % 2 else n * 1_000_003, payload=payload)  # fmt: skip
    queryset = lenient_filterset(data=QueryDict("show_excluded=1&show_bad=1&sort=-rows")).qs

    copied = b"".join(copy_chunks(queryset=queryset))
    written = b"".join(writer_chunks(queryset=queryset))

    assert copied == written
    rows = list(csv.reader(io.StringIO(copied.decode("utf-8"), newline="")))
    assert len(rows) == len(TRICKY) + 2
    assert {row[0] for row in rows[1:]} >= {"'=SUM(A1)", "'\ttab", "'\rcarriage", "crlf\r\nend\n"}
    assert copied.count(b"\r\n") >= len(TRICKY) + 2


@pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql",
    reason="the COPY path is PostgreSQL's",
)
def test_copy_merges_the_query_parameters_as_values(write_catalog):
    names = ["O'Brien %s \\ x", "O'Brien'); DROP TABLE catalog_sources; --", "other"]
    seed(write_catalog, [make_row(f"MarinSkyRL:p{n}", display_name=name)
                         for n, name in enumerate(names)])  # fmt: skip
    queryset = lenient_filterset(data=QueryDict("q=O%27Brien&sort=name")).qs

    copied = b"".join(copy_chunks(queryset=queryset))

    assert copied == b"".join(writer_chunks(queryset=queryset))
    rows = list(csv.reader(io.StringIO(copied.decode("utf-8"), newline="")))
    assert sorted(row[0] for row in rows[1:]) == sorted(names[:2])
    assert Source.objects.count() == 3


def test_the_migration_fills_the_stored_tags_of_existing_rows(write_catalog):
    import importlib

    from django.apps import apps

    seed(write_catalog, [make_row("MarinSkyRL:a", tags=["=x", "rlvr"]),
                         make_row("MarinSkyRL:b", tags=[]),
                         make_row("MarinSkyRL:c", tags=["=x", "rlvr"])])  # fmt: skip
    Source.objects.update(export_tags="")
    migration = importlib.import_module("atlas.migrations.0007_export_tags")
    migration.fill_export_tags(apps, None)
    stored = dict(Source.objects.values_list("id", "export_tags"))
    assert stored == {"MarinSkyRL:a": "'=x,rlvr", "MarinSkyRL:b": "", "MarinSkyRL:c": "'=x,rlvr"}


@pytest.mark.django_db
def test_the_sql_guard_is_the_python_guard():
    """One rule in two forms: the database's guard of a value is guarded()'s, on every leading
    character that needs one and on values that do not (here on the database under test)."""
    from django.db import connection

    values = [*(f"{prefix}x" for prefix in formula_guard.FORMULA_PREFIXES), "", "x=1", " =1",
              "'=1", "é=", "😀", "=", "\n=1"]  # fmt: skip
    with connection.cursor() as cursor:
        for value in values:
            sql = formula_guard.guard_sql("%s", vendor=connection.vendor)
            cursor.execute(f"SELECT {sql}", [value, value, value])
            assert cursor.fetchone()[0] == formula_guard.guarded(value), repr(value)
        cursor.execute(f"SELECT {formula_guard.guard_sql('NULL', vendor=connection.vendor)}")
        assert cursor.fetchone()[0] is None
