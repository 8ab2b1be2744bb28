"""export_catalog: derived fields, revision, file format, atomic failure."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.conftest import DEFINITIONS, ROOT

HF_REV = "2fe88a2f1091d5048c0f36abc874fb997b3dd99a"


# --- an independent canonical serialiser, written from the definition only -------------------


def _escape(text: str) -> str:
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        elif code < 0x80:
            out.append(char)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            offset = code - 0x10000
            high, low = 0xD800 + (offset >> 10), 0xDC00 + (offset & 0x3FF)
            out.append(f"\\u{high:04x}\\u{low:04x}")
    out.append('"')
    return "".join(out)


def canonical(value) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _escape(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(item) for item in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items())
        return "{" + ",".join(f"{_escape(k)}:{canonical(v)}" for k, v in items) + "}"
    raise TypeError(f"not a catalog value: {value!r}")


def independent_revision(rows) -> str:
    return hashlib.sha256(canonical(rows).encode("ascii")).hexdigest()


# --- helpers -----------------------------------------------------------------------------------

SOURCES = {
    "b.toml": """
        [defaults]
        origin = "Zeta"
        tags = ["agentic", "multi-turn"]

        [[source]]
        id = "Zeta:b"
        title = "Zürich 😀 set"
        notes = "naïve “quotes” and \\"escapes\\" \\\\ tab\\tend"
        count = 12

        [[source]]
        id = "Zeta:A"
        title = "upper"
        tags = ["rlvr", "alignment", "excluded"]
        """,
    "sub/a.toml": f"""
        [[source]]
        id = "Alpha:x"
        title = "x"
        origin = "Alpha"
        tags = ["alignment", "single-turn", "benchmark", "generator"]
        dataset = {{ name = "org/x", revision = "{HF_REV}", url = "https://hf.co/x" }}

        [[source]]
        id = "Alpha:nothing"
        title = "n"
        origin = "Alpha"
        """,
}


def write_sources(directory: Path, files: dict[str, str] = SOURCES) -> Path:
    for relative, text in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return directory


def export(definitions: Path, output: Path) -> str:
    out, err = StringIO(), StringIO()
    call_command(
        "export_catalog",
        "--definitions",
        str(definitions),
        "--output",
        str(output),
        stdout=out,
        stderr=err,
    )
    assert err.getvalue() == ""
    return out.getvalue()


# --- tests ------------------------------------------------------------------------------------


def test_export_writes_the_document_and_reports_it(tmp_path):
    output = tmp_path / "deep" / "dir" / "catalog.json"  # parent directories are created
    message = export(write_sources(tmp_path / "defs"), output)
    document = json.loads(output.read_text(encoding="ascii"))
    assert set(document) == {"schema_version", "revision", "sources"}
    assert document["schema_version"] == 1 and type(document["schema_version"]) is int
    assert message.strip() == (f"Exported 4 sources to {output} (revision {document['revision']})")


def test_rows_are_sorted_by_id_in_code_point_order(tmp_path):
    output = tmp_path / "c.json"
    export(write_sources(tmp_path / "defs"), output)
    ids = [row["id"] for row in json.loads(output.read_text())["sources"]]
    assert ids == ["Alpha:nothing", "Alpha:x", "Zeta:A", "Zeta:b"]


def test_derived_fields_follow_tag_rules(tmp_path):
    output = tmp_path / "c.json"
    export(write_sources(tmp_path / "defs"), output)
    rows = {row["id"]: row for row in json.loads(output.read_text())["sources"]}

    def derived(source_id):
        row = rows[source_id]
        return tuple(row[k] for k in ("type", "turns", "is_benchmark", "kind", "status"))

    # rlvr > agentic > alignment: Zeta:A has agentic (default), rlvr and alignment.
    assert derived("Zeta:A") == ("RLVR", "Multi-turn", False, "Dataset", "Excluded")
    assert derived("Zeta:b") == ("Agentic", "Multi-turn", False, "Dataset", "Available")
    assert derived("Alpha:x") == ("Alignment", "Single-turn", True, "Generator", "Available")
    assert derived("Alpha:nothing") == ("", "", False, "Dataset", "Available")
    assert rows["Zeta:b"]["task_count"] == 12 and rows["Alpha:x"]["task_count"] is None


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["alignment", "agentic", "multi-turn"], "Agentic"),
        (["alignment", "rlvr"], "RLVR"),
        (["agentic", "multi-turn", "rlvr"], "RLVR"),
        (["alignment"], "Alignment"),
        (["benchmark"], ""),
    ],
)
def test_type_precedence_ignores_tag_order(tmp_path, tags, expected):
    defs = write_sources(
        tmp_path / "d",
        {
            "a.toml": '[[source]]\nid = "O:a"\ntitle = "a"\norigin = "O"\n'
            f"tags = {json.dumps(tags)}\n"
        },
    )
    output = tmp_path / "c.json"
    export(defs, output)
    (row,) = json.loads(output.read_text())["sources"]
    assert row["type"] == expected
    assert row["tags"] == tags  # tags stay in definition order


def test_revision_is_sha256_of_the_canonical_sources(tmp_path):
    output = tmp_path / "c.json"
    export(write_sources(tmp_path / "defs"), output)
    document = json.loads(output.read_text())
    rows = document["sources"]
    canonical_text = canonical(rows)
    # Non-ASCII escaped, non-BMP as a surrogate pair, no spaces, keys sorted.
    assert "Z\\u00fcrich \\ud83d\\ude00 set" in canonical_text
    assert "na\\u00efve \\u201cquotes\\u201d" in canonical_text
    assert '"display_name":"x","family":""' in canonical_text
    assert document["revision"] == independent_revision(rows)
    assert len(document["revision"]) == 64 and document["revision"] == document["revision"].lower()


def test_any_change_to_any_row_changes_the_revision(tmp_path):
    first, second = tmp_path / "1.json", tmp_path / "2.json"
    export(write_sources(tmp_path / "defs"), first)
    edited = dict(SOURCES)
    edited["b.toml"] = SOURCES["b.toml"].replace("count = 12", "count = 13")
    export(write_sources(tmp_path / "defs2", edited), second)
    one, two = json.loads(first.read_text()), json.loads(second.read_text())
    assert one["revision"] != two["revision"]
    assert two["revision"] == independent_revision(two["sources"])


def test_file_format_sorted_keys_two_space_indent_ascii_trailing_newline(tmp_path):
    output = tmp_path / "c.json"
    export(write_sources(tmp_path / "defs"), output)
    raw = output.read_bytes()
    text = raw.decode("ascii")  # ASCII only
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert text.startswith('{\n  "revision": "')
    document = json.loads(text)
    assert list(document) == ["revision", "schema_version", "sources"]
    for row in document["sources"]:
        assert list(row) == sorted(row)
    assert '\n    {\n      "canonical_source": ' in text
    assert "\\ud83d\\ude00" in text and "😀" not in text
    # Exactly the formatting rule restated: sorted keys, indent 2, ASCII escapes, one newline.
    expected = json.dumps(document, sort_keys=True, indent=2, ensure_ascii=True) + "\n"
    assert text == expected


def test_byte_identical_across_runs_and_file_reorderings(tmp_path):
    first, second, third = (tmp_path / f"{n}.json" for n in (1, 2, 3))
    export(write_sources(tmp_path / "defs"), first)
    export(tmp_path / "defs", second)
    assert first.read_bytes() == second.read_bytes()

    # Same sources, different files, different order within and across files.
    reordered = {
        "000.toml": textwrap.dedent(SOURCES["sub/a.toml"]).split("[[source]]")[0]
        + "[[source]]"
        + textwrap.dedent(SOURCES["sub/a.toml"]).split("[[source]]")[2],
        "zzz/last.toml": "[[source]]"
        + textwrap.dedent(SOURCES["sub/a.toml"]).split("[[source]]")[1],
        "m.toml": textwrap.dedent(SOURCES["b.toml"]).split("[[source]]")[0]
        + "[[source]]"
        + textwrap.dedent(SOURCES["b.toml"]).split("[[source]]")[2]
        + "[[source]]"
        + textwrap.dedent(SOURCES["b.toml"]).split("[[source]]")[1],
    }
    export(write_sources(tmp_path / "other", reordered), third)
    assert third.read_bytes() == first.read_bytes()


def test_packaged_definitions_export_byte_identically(tmp_path):
    first, second = tmp_path / "1.json", tmp_path / "2.json"
    export(DEFINITIONS, first)
    copy = tmp_path / "copy"
    shutil.copytree(DEFINITIONS, copy)
    # Rename files so their sorted order changes; contents are the same sources.
    for index, path in enumerate(sorted(copy.rglob("*.toml"), reverse=True)):
        path.rename(path.parent / f"{index:03d}-{path.name}")
    export(copy, second)
    assert first.read_bytes() == second.read_bytes()
    document = json.loads(first.read_text())
    assert document["revision"] == independent_revision(document["sources"])
    assert len(document["sources"]) == 206


def test_bad_definitions_leave_the_output_untouched_and_list_every_error(tmp_path):
    defs = write_sources(tmp_path / "defs")
    output = tmp_path / "out" / "catalog.json"
    export(defs, output)
    before = output.read_bytes()
    bad = defs / "zz.toml"
    bad.write_text(
        '[[source]]\nid = "Zeta:b"\ntitle = "dup"\norigin = "Zeta"\n'
        '[[source]]\nid = "Q:x"\ntitle = "x"\norigin = "Q"\ntags = ["agentic"]\n',
        encoding="utf-8",
    )
    err = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command(
            "export_catalog", "--definitions", str(defs), "--output", str(output), stderr=err
        )
    assert str(caught.value) == f"2 definition error(s); {output} was not written"
    assert err.getvalue().splitlines() == [
        f"{bad}: Q:x: Agentic sources must be multi-turn",
        f"{bad}: Zeta:b: Duplicate RL source identifiers: Zeta:b",
    ]
    assert output.read_bytes() == before
    assert sorted(p.name for p in output.parent.iterdir()) == ["catalog.json"]


def test_bad_definitions_write_nothing_when_no_output_existed(tmp_path):
    defs = write_sources(tmp_path / "defs", {"a.toml": '[[source]]\nid = "X"\n'})
    output = tmp_path / "out" / "catalog.json"
    with pytest.raises(CommandError):
        call_command(
            "export_catalog", "--definitions", str(defs), "--output", str(output), stderr=StringIO()
        )
    assert not output.exists()


def test_failure_while_writing_leaves_no_partial_file(tmp_path, monkeypatch):
    defs = write_sources(tmp_path / "defs")
    output = tmp_path / "catalog.json"
    output.write_text("previous\n", encoding="ascii")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(
        CommandError, match=r"Cannot write .*catalog\.json: No space left on device"
    ):
        export(defs, output)
    assert output.read_text(encoding="ascii") == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog.json", "defs"]


def test_unwritable_output_exits_with_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(CommandError, match=r"^Cannot write .*file/catalog\.json: "):
        export(write_sources(tmp_path / "defs"), blocker / "catalog.json")


@pytest.mark.slow
def test_command_process_exits_non_zero_with_one_line_per_error(tmp_path):
    defs = write_sources(
        tmp_path / "defs",
        {
            "a.toml": """
                [[source]]
                id = "O:a"
                title = "a"
                origin = "O"
                tags = ["generator", "single-turn", "multi-turn"]
                count = 3
                """
        },
    )
    output = tmp_path / "catalog.json"
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "export_catalog",
            "--definitions",
            str(defs),
            "--output",
            str(output),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    path = defs / "a.toml"
    assert done.stderr.splitlines() == [
        f"{path}: O:a: A source cannot be both single-turn and multi-turn",
        f"{path}: O:a: Generators have no fixed count",
        f"CommandError: 2 definition error(s); {output} was not written",
    ]
    assert done.stdout == "" and not output.exists()
