"""The run directory's JSON files: written as the standard library's indented JSON writes them."""

from __future__ import annotations

import hashlib
import json
import os

from reviews.production.runtime.rundir import (
    artifact_manifest,
    json_text,
    read_json,
    run_file_paths,
    write_json_file,
)

VALUES = [
    {"reviews": [], "subjects": {}, "nested": {"a": [1, 2.5, None, True, False, {}]}},
    {"é": "naïve — ✓ 猫 \U0001f600", "control": "tab\there\nline\x1f\x7f\u2028", "quote": '"\\'},
    [0.1, -0.0, 1e16, 1e22, 5e-324, 1.7976931348623157e308, 9_223_372_036_854_775_807],
    "a bare string",
]


def test_the_text_is_what_the_standard_library_indents():
    for value in VALUES:
        assert json_text(value) == json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def test_what_the_fast_writer_refuses_is_written_by_the_standard_library(tmp_path):
    """An integer past 64 bits and a key that is not a string, as before: exact, the key as
    its string."""
    value = {"big": 2**70, "keys": {1: "one", None: "none"}}
    assert json_text(value) == json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    write_json_file(tmp_path / "value.json", value)
    assert read_json(tmp_path / "value.json") == {
        "big": 2**70,
        "keys": {"1": "one", "null": "none"},
    }


def test_a_number_json_has_no_word_for_is_null():
    assert json.loads(json_text({"nan": float("nan"), "inf": float("inf")})) == {
        "nan": None,
        "inf": None,
    }


def test_a_float_reads_back_as_the_same_number():
    for number in (1e-05, 3.14159e-07, 123456789.123, 1 / 3):
        assert json.loads(json_text({"x": number})) == {"x": number}


def test_the_manifest_lists_every_regular_file_of_the_run_with_its_hash(tmp_path):
    run = tmp_path / "run"
    for relative, body in {
        "b.json": b"{}", "a/z.txt": b"z", "a/b/c.log": b"deep", ".run.lock": b"",
        "artifact-manifest.json": b"old", "tasks/.x.json.7.tmp": b"half",
        "a/__pycache__/m.pyc": b"",
    }.items():  # fmt: skip
        path = run / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the run's")
    os.symlink(outside, run / "a" / "link.txt")  # a link is not a file of the run
    assert [relative for relative, _ in run_file_paths(run)] == [
        ".run.lock", "artifact-manifest.json", "b.json", "a/z.txt", "a/b/c.log",
        "tasks/.x.json.7.tmp",
    ]  # fmt: skip
    assert artifact_manifest(run_dir=run) == {
        "files": [
            {"path": path, "bytes": len(body), "sha256": hashlib.sha256(body).hexdigest()}
            for path, body in (("a/b/c.log", b"deep"), ("a/z.txt", b"z"), ("b.json", b"{}"))
        ]
    }
