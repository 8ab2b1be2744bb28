"""Source definitions: their rules, defaults, file discovery, rows."""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

import pytest

from atlas.artifact.definitions import DefinitionErrors, load_rows

HF_REV = "2fe88a2f1091d5048c0f36abc874fb997b3dd99a"
SHA_REV = "88660ec860e483213c2a1c5e03d7f1c483e93ab25860648ae40a656fcb876db4"

VALID_SOURCE = """
[[source]]
id = "MarinSkyRL:{key}"
title = "example/{key}"
origin = "MarinSkyRL"
tags = ["rlvr", "single-turn"]
"""


def write(directory: Path, relative: str, text: str) -> Path:
    path = directory / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def errors_of(directory: Path) -> list[str]:
    with pytest.raises(DefinitionErrors) as caught:
        load_rows(directory)
    # The exception text is the same list, one violation per line.
    assert str(caught.value).split("\n") == caught.value.errors
    return caught.value.errors


def single_error(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, "defs.toml", text)
    errors = errors_of(tmp_path)
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{path}: ")
    return errors[0]


def source(body: str, key: str = "a") -> str:
    """One [[source]] whose required keys are valid, followed by extra lines/tables."""
    return VALID_SOURCE.format(key=key) + textwrap.dedent(body)


# --- a valid file and the row it builds ---------------------------------------------------------


def test_minimal_source_builds_every_row_field_with_defaults(tmp_path):
    write(tmp_path, "a.toml", VALID_SOURCE.format(key="a"))
    (row,) = load_rows(tmp_path)
    assert row == {
        "id": "MarinSkyRL:a",
        "name": "a",
        "display_name": "example/a",
        "origin": "MarinSkyRL",
        "family": "",
        "tags": ["rlvr", "single-turn"],
        "task_count": None,
        "notes": "",
        "dataset_id": None,
        "dataset_revision": None,
        "url": None,
        "canonical_source": None,
        "canonical_url": None,
        "verifier_name": None,
        "verifier_revision": None,
        "verifier_url": None,
        "type": "RLVR",
        "turns": "Single-turn",
        "is_benchmark": False,
        "kind": "Dataset",
        "status": "Available",
        "pipeline": None,
        "quality": None,
        "review_url": None,
        "review_date": None,
        "review_source_revision": None,
        "review_verifier_revision": None,
        "difficulty": None,
        "traces": None,
    }


def test_full_source_maps_every_table(tmp_path):
    write(
        tmp_path,
        "full.toml",
        f"""
        [[source]]
        id = "MarinSkyRL:full"
        title = "org/full · sub"
        origin = "MarinSkyRL"
        family = "math-answer"
        tags = ["rlvr", "single-turn", "benchmark", "gym/aime", "license:mit"]
        count = 0
        notes = "kept"
        dataset = {{ name = "org/full", revision = "{HF_REV}", url = "https://hf.co/d/org/full" }}
        verifier = {{ name = "aime", revision = "{SHA_REV}", url = "" }}
        pipeline = {{ name = "full_pipe", files = ["data/*.parquet"] }}

        [source.review]
        grade = "some_issues"
        evidence_url = "https://example.org/evidence"
        reviewed_at = 2026-01-02T03:04:05+02:00
        dataset_revision = "{HF_REV}"
        verifier_revision = "{SHA_REV}"
        """,
    )
    (row,) = load_rows(tmp_path)
    assert row["name"] == "full_pipe"
    assert row["display_name"] == "org/full · sub"
    assert row["task_count"] == 0 and row["notes"] == "kept" and row["family"] == "math-answer"
    assert (row["dataset_id"], row["dataset_revision"], row["url"]) == (
        "org/full",
        HF_REV,
        "https://hf.co/d/org/full",
    )
    assert (row["canonical_source"], row["canonical_url"]) == (
        "org/full",
        "https://hf.co/d/org/full",
    )
    assert (row["verifier_name"], row["verifier_revision"], row["verifier_url"]) == (
        "aime",
        SHA_REV,
        "",
    )
    assert row["pipeline"] == {
        "name": "full_pipe",
        "version": "1",
        "source": "org/full",
        "revision": HF_REV,
        "files": ["data/*.parquet"],
    }
    assert row["is_benchmark"] is True
    assert row["quality"] == "some_issues"
    assert row["review_url"] == "https://example.org/evidence"
    assert row["review_date"] == "2026-01-02T01:04:05Z"  # offset date-time normalised to UTC
    assert (row["review_source_revision"], row["review_verifier_revision"]) == (HF_REV, SHA_REV)
    assert "grading_scope" not in row and "grading_revision" not in row


def test_review_date_keeps_a_plain_date(tmp_path):
    write(tmp_path, "d.toml", source("review = { reviewed_at = 2025-12-31 }"))
    (row,) = load_rows(tmp_path)
    assert row["review_date"] == "2025-12-31"


# --- files: recursive, sorted, dotfiles ignored --------------------------------------------------


def test_reads_recursively_in_sorted_order_and_ignores_dotfiles(tmp_path):
    write(tmp_path, "b/z.toml", VALID_SOURCE.format(key="b"))
    write(tmp_path, "a/deep/nested/y.toml", VALID_SOURCE.format(key="c"))
    write(tmp_path, "a.toml", VALID_SOURCE.format(key="a"))
    # ignored: hidden file, file in a hidden directory, non-TOML file (all would be errors)
    write(tmp_path, ".hidden.toml", "this is not toml = = =")
    write(tmp_path, ".git/x.toml", "bogus = [")
    write(tmp_path, "b/.draft.toml", "[[source]]\nid = 3\n")
    write(tmp_path, "notes.txt", "not read")
    rows = load_rows(tmp_path)
    assert [row["id"] for row in rows] == ["MarinSkyRL:a", "MarinSkyRL:b", "MarinSkyRL:c"]


def test_files_are_checked_in_sorted_path_order(tmp_path):
    # Errors appear in sorted path order (directories recursed), not creation order.
    write(tmp_path, "z.toml", "[[source]]\nid = 1\n")
    write(tmp_path, "m/a.toml", "[[source]]\nid = 2\n")
    write(tmp_path, "a.toml", "[[source]]\nid = 3\n")
    errors = errors_of(tmp_path)
    files = [line.split(": ", 1)[0] for line in errors]
    order = [str(tmp_path / "a.toml"), str(tmp_path / "m/a.toml"), str(tmp_path / "z.toml")]
    assert list(dict.fromkeys(files)) == order


def test_missing_directory_is_an_error(tmp_path):
    assert errors_of(tmp_path / "nope") == [f"{tmp_path / 'nope'}: definitions directory not found"]


def test_unreadable_toml_names_the_file(tmp_path):
    path = write(tmp_path, "bad.toml", "[[source]\nid = ")
    (error,) = errors_of(tmp_path)
    assert error.startswith(f"{path}: #file: ")


# --- duplicates across files -------------------------------------------------------------------


def test_duplicate_ids_across_files(tmp_path):
    write(tmp_path, "a.toml", VALID_SOURCE.format(key="same"))
    second = write(tmp_path, "sub/b.toml", VALID_SOURCE.format(key="same"))
    assert errors_of(tmp_path) == [
        f"{second}: MarinSkyRL:same: Duplicate RL source identifiers: MarinSkyRL:same"
    ]


def test_duplicate_pipeline_names_across_files(tmp_path):
    write(tmp_path, "a.toml", source('pipeline = { name = "pipe" }', key="a"))
    second = write(tmp_path, "b.toml", source('pipeline = { name = "pipe" }', key="b"))
    assert errors_of(tmp_path) == [f"{second}: MarinSkyRL:b: Duplicate pipeline name: pipe"]


# --- rule 3: id and origin ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source_id", "message"),
    [
        ("Task Trove:x", "Source id must start with its origin: Task Trove:x"),
        ("MarinSkyRLx", "Source id must start with its origin: MarinSkyRLx"),
        ("marinskyrl:x", "Source id must start with its origin: marinskyrl:x"),
        ("MarinSkyRL:", "Source id needs a key after the origin: MarinSkyRL:"),
    ],
)
def test_id_must_start_with_origin_and_have_a_key(tmp_path, source_id, message):
    path = write(
        tmp_path,
        "defs.toml",
        f'[[source]]\nid = "{source_id}"\ntitle = "t"\norigin = "MarinSkyRL"\n',
    )
    assert errors_of(tmp_path) == [f"{path}: {source_id}: {message}"]


def test_ids_may_contain_colons_slashes_dots_and_spaces(tmp_path):
    write(
        tmp_path,
        "defs.toml",
        '[[source]]\nid = "Task Trove:a b/c:d.e_f-g"\ntitle = "t"\norigin = "Task Trove"\n',
    )
    (row,) = load_rows(tmp_path)
    assert row["name"] == "a b/c:d.e_f-g"


# --- rule 4: unknown keys at every level -------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "dotted"),
    [
        ('colour = "red"', "colour"),
        (f'dataset = {{ name = "x", sha = "{HF_REV}" }}', "dataset.sha"),
        ('verifier = { name = "v", branch = "main" }', "verifier.branch"),
        (
            'verifier = { name = "v", grading = { mode = "legacy", extra = 1 } }',
            "verifier.grading.extra",
        ),
        ('pipeline = { name = "p", entry = "main.py" }', "pipeline.entry"),
        ('review = { grade = "good", score = 3 }', "review.score"),
    ],
)
def test_unknown_keys_at_any_level(tmp_path, extra, dotted):
    error = single_error(tmp_path, source(extra))
    assert error.endswith(f": MarinSkyRL:a: Unknown key {dotted}")


def test_unknown_top_level_and_defaults_keys(tmp_path):
    path = write(
        tmp_path,
        "defs.toml",
        '[defaults]\norigin = "MarinSkyRL"\ncount = 3\n\n[meta]\nx = 1\n'
        + VALID_SOURCE.format(key="a"),
    )
    assert errors_of(tmp_path) == [
        f"{path}: #file: Unknown key meta",
        f"{path}: #file: Unknown key defaults.count",
    ]


def test_unknown_key_in_a_default_table_is_reported_for_the_source(tmp_path):
    text = '[defaults]\ndataset = { name = "x", sha = "abc" }\n' + VALID_SOURCE.format(key="a")
    assert single_error(tmp_path, text).endswith("MarinSkyRL:a: Unknown key dataset.sha")


# --- rule 5: required and mistyped keys --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "label", "message"),
    [
        ('[[source]]\ntitle = "t"\norigin = "O"\n', "#0", "id is required"),
        ('[[source]]\nid = "O:a"\norigin = "O"\n', "O:a", "title is required"),
        ('[[source]]\nid = "O:a"\ntitle = "t"\n', "O:a", "origin is required"),
        ('[[source]]\nid = 5\ntitle = "t"\norigin = "O"\n', "#0", "id must be a string"),
        ('[[source]]\nid = "O:a"\ntitle = ["t"]\norigin = "O"\n', "O:a", "title must be a string"),
    ],
)
def test_required_and_mistyped_identity(tmp_path, text, label, message):
    path = write(tmp_path, "defs.toml", text)
    assert errors_of(tmp_path) == [f"{path}: {label}: {message}"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("family = 3", "family must be a string"),
        ('notes = ["x"]', "notes must be a string"),
        ('count = "12"', "count must be an integer >= 0"),
        ("count = -1", "count must be an integer >= 0"),
        ("count = 1.5", "count must be an integer >= 0"),
        ("count = true", "count must be an integer >= 0"),
        ('dataset = "org/x"', "dataset must be a table"),
        (f'dataset = {{ revision = "{HF_REV}" }}', "dataset.name is required"),
        ("dataset = { name = 7 }", "dataset.name must be a string"),
        ('verifier = { url = "" }', "verifier.name is required"),
        ("pipeline = { version = '1' }", "pipeline.name is required"),
        ("pipeline = { name = 'p', version = 2 }", "pipeline.version must be a string"),
        (
            "pipeline = { name = 'p', files = 'a.parquet' }",
            "pipeline.files must be an array of strings",
        ),
        ("review = { grade = 'excellent' }", "review.grade must be good, some_issues or bad"),
        (
            "verifier = { name = 'v', grading = { agents = [] } }",
            "verifier.grading.mode is required",
        ),
    ],
)
def test_mistyped_optional_keys(tmp_path, extra, message):
    assert single_error(tmp_path, source(extra)).endswith(f": MarinSkyRL:a: {message}")


def test_tags_must_be_an_array_of_strings(tmp_path):
    text = '[[source]]\nid = "O:a"\ntitle = "t"\norigin = "O"\ntags = "rlvr"\n'
    assert single_error(tmp_path, text).endswith(": O:a: tags must be an array of strings")


# --- rules 6-9: tags ---------------------------------------------------------------------------


def tagged(tags: list[str], extra: str = "") -> str:
    return (
        f'[[source]]\nid = "O:a"\ntitle = "t"\norigin = "O"\ntags = {json.dumps(tags)}\n{extra}\n'
    )


def test_agentic_requires_multi_turn(tmp_path):
    error = single_error(tmp_path, tagged(["agentic"]))
    assert error.endswith(": O:a: Agentic sources must be multi-turn")


def test_single_and_multi_turn_conflict(tmp_path):
    error = single_error(tmp_path, tagged(["single-turn", "multi-turn"]))
    assert error.endswith(": O:a: A source cannot be both single-turn and multi-turn")


def test_generator_with_a_count(tmp_path):
    error = single_error(tmp_path, tagged(["generator"], "count = 0"))
    assert error.endswith(": O:a: Generators have no fixed count")


def test_generator_without_count_is_fine(tmp_path):
    write(tmp_path, "g.toml", tagged(["rlvr", "generator"]))
    (row,) = load_rows(tmp_path)
    assert (row["kind"], row["task_count"]) == ("Generator", None)


@pytest.mark.parametrize("tag", ["Upper", "-lead", "with space", "", "ünïcode", "semi;colon"])
def test_invalid_tag_spelling(tmp_path, tag):
    error = single_error(tmp_path, tagged([tag]))
    assert error.endswith(f": O:a: Invalid tag: {tag}")


def test_valid_tag_alphabet(tmp_path):
    tags = ["license:cc-by-4.0", "gym/nemotron_ultra", "a+b", "0x"]
    write(tmp_path, "t.toml", tagged(tags))
    assert load_rows(tmp_path)[0]["tags"] == tags


def test_repeated_tag_within_a_source(tmp_path):
    error = single_error(tmp_path, tagged(["rlvr", "rlvr"]))
    assert error.endswith(": O:a: Invalid tag: rlvr")


def test_repeated_tag_within_a_source_is_reported_even_with_default_tags(tmp_path):
    # The merge with default tags removes duplicates between defaults and the source; it must not
    # hide a tag the source itself repeats.
    text = '[defaults]\ntags = ["agentic", "multi-turn"]\n' + tagged(["x", "x"])
    assert single_error(tmp_path, text).endswith(": O:a: Invalid tag: x")


# --- rule 10: https only -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "dotted"),
    [
        ('dataset = { name = "x", url = "http://hf.co/x" }', "dataset.url"),
        ('dataset = { name = "x", url = "" }', "dataset.url"),
        ('dataset = { name = "x", url = "ftp://hf.co/x" }', "dataset.url"),
        ('verifier = { name = "v", url = "http://github.com/x" }', "verifier.url"),
        ('review = { evidence_url = "javascript:alert(1)" }', "review.evidence_url"),
    ],
)
def test_only_https_urls(tmp_path, extra, dotted):
    error = single_error(tmp_path, source(extra))
    assert error.endswith(f": MarinSkyRL:a: Only https URLs are allowed: {dotted}")


def test_empty_verifier_url_is_allowed(tmp_path):
    write(tmp_path, "v.toml", source('verifier = { name = "v", url = "" }'))
    assert load_rows(tmp_path)[0]["verifier_url"] == ""


# --- malformed revisions -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "dotted"),
    [
        ('dataset = { name = "x", revision = "main" }', "dataset.revision"),
        (f'dataset = {{ name = "x", revision = "{HF_REV[:-1]}" }}', "dataset.revision"),
        (f'dataset = {{ name = "x", revision = "{HF_REV.upper()}" }}', "dataset.revision"),
        (f'verifier = {{ name = "v", revision = "{SHA_REV}0" }}', "verifier.revision"),
        ('review = { dataset_revision = "v1.0" }', "review.dataset_revision"),
        ('review = { verifier_revision = "xyz" }', "review.verifier_revision"),
    ],
)
def test_malformed_revisions(tmp_path, extra, dotted):
    error = single_error(tmp_path, source(extra))
    assert error.endswith(f": MarinSkyRL:a: {dotted} must be a 40-hex commit or a 64-hex SHA-256")


def test_forty_and_sixty_four_hex_revisions_are_accepted(tmp_path):
    write(
        tmp_path,
        "r.toml",
        source(
            f'dataset = {{ name = "u", revision = "{SHA_REV}" }}\n'
            f'verifier = {{ name = "v", revision = "{HF_REV}" }}'
        ),
    )
    (row,) = load_rows(tmp_path)
    assert (row["dataset_revision"], row["verifier_revision"]) == (SHA_REV, HF_REV)


# --- rule 11: grading manifest -----------------------------------------------------------------


def manifest_revision(manifest: dict) -> str:
    # JSON with sorted keys and the default separators ", " and ": ".
    text = json.dumps(manifest, sort_keys=True, separators=(", ", ": "))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


MANIFEST = {"files": {"env.py": "0" * 64, "utils/grade.py": "1" * 64}, "mode": "verifyit"}


def grading_source(revision: str, manifest: str = "manifests/a.json", agents: str = "") -> str:
    agents_line = f"agents = {agents}\n" if agents else ""
    return source(
        f"""
        [source.verifier]
        name = "aime"

        [source.verifier.grading]
        mode = "verifyit"
        revision = "{revision}"
        manifest = "{manifest}"
        {agents_line}"""
    )


def test_grading_manifest_matching_its_revision_is_exported(tmp_path):
    write(tmp_path, "defs/manifests/a.json", json.dumps(MANIFEST, indent=4))
    revision = manifest_revision(MANIFEST)
    # Independent check of the serialisation the spec fixes.
    assert revision == hashlib.sha256(
        b'{"files": {"env.py": "' + b"0" * 64 + b'", "utils/grade.py": "' + b"1" * 64
        + b'"}, "mode": "verifyit"}'
    ).hexdigest()  # fmt: skip
    write(tmp_path, "defs/a.toml", grading_source(revision, agents='["claude", "codex"]'))
    (row,) = load_rows(tmp_path / "defs")
    assert row["grading_revision"] == revision
    assert row["grading_manifest"] == MANIFEST
    assert row["grading_scope"] == {"mode": "verifyit", "agents": ["claude", "codex"]}


def test_grading_manifest_mismatch(tmp_path):
    write(tmp_path, "manifests/a.json", json.dumps(MANIFEST))
    other = manifest_revision({**MANIFEST, "mode": "legacy"})
    error = single_error(tmp_path, grading_source(other))
    assert error.endswith(": MarinSkyRL:a: Grading manifest does not match its revision")


def test_grading_manifest_that_is_not_json_does_not_match(tmp_path):
    write(tmp_path, "manifests/a.json", "{not json")
    error = single_error(tmp_path, grading_source(manifest_revision(MANIFEST)))
    assert error.endswith(": MarinSkyRL:a: Grading manifest does not match its revision")


def test_grading_manifest_not_found(tmp_path):
    error = single_error(
        tmp_path, grading_source(manifest_revision(MANIFEST), "manifests/none.json")
    )
    assert error.endswith(": MarinSkyRL:a: Grading manifest not found: manifests/none.json")


def test_grading_manifest_path_is_relative_to_the_definition_file(tmp_path):
    # The manifest beside the definitions directory root is not the one beside the file.
    write(tmp_path, "manifests/a.json", json.dumps(MANIFEST))
    write(tmp_path, "sub/a.toml", grading_source(manifest_revision(MANIFEST)))
    (error,) = errors_of(tmp_path)
    assert error.endswith("Grading manifest not found: manifests/a.json")


def test_grading_selection_without_manifest_exports_scope_only(tmp_path):
    text = source(
        """
        [source.verifier]
        name = "aime"
        grading = { mode = "harbor", agents = ["terminus"], marinskyrl_revision = "REV" }
        """.replace("REV", HF_REV)
    )
    write(tmp_path, "g.toml", text)
    (row,) = load_rows(tmp_path)
    assert row["grading_scope"] == {
        "mode": "harbor",
        "agents": ["terminus"],
        "marinskyrl_revision": HF_REV,
    }
    assert "grading_revision" not in row and "grading_manifest" not in row


def test_the_verifyit_pin_is_exported_where_grading_uses_verifyit(tmp_path):
    """The pins a review's executed identity is compared with (``reviews.identity``)."""
    pins = f'marinskyrl_revision = "{HF_REV}", verifyit_revision = "{HF_REV}"'
    write(tmp_path, "g.toml", source(f"""
        [source.verifier]
        name = "aime"
        grading = {{ mode = "verifyit", {pins} }}
        """))  # fmt: skip
    (row,) = load_rows(tmp_path)
    assert row["grading_scope"] == {
        "mode": "verifyit", "agents": [],
        "marinskyrl_revision": HF_REV, "verifyit_revision": HF_REV,
    }  # fmt: skip


def test_a_verifyit_pin_outside_verifyit_grading_is_refused(tmp_path):
    error = single_error(tmp_path, source(f"""
        [source.verifier]
        name = "aime"
        grading = {{ mode = "legacy", verifyit_revision = "{HF_REV}" }}
        """))  # fmt: skip
    assert error.endswith(
        ": MarinSkyRL:a: verifier.grading.verifyit_revision applies only to mode verifyit"
    )


# --- defaults ----------------------------------------------------------------------------------


def test_defaults_supply_origin_family_tags_dataset_verifier(tmp_path):
    write(
        tmp_path,
        "d.toml",
        f"""
        [defaults]
        origin = "Task Trove"
        family = "swe-repo"
        tags = ["agentic", "multi-turn"]
        dataset = {{ name = "open-thoughts/TaskTrove", revision = "{HF_REV}" }}
        verifier = {{ name = "Harbor", url = "" }}

        [[source]]
        id = "Task Trove:a"
        title = "a"
        """,
    )
    (row,) = load_rows(tmp_path)
    assert row["origin"] == "Task Trove" and row["family"] == "swe-repo"
    assert row["tags"] == ["agentic", "multi-turn"]
    assert (row["dataset_id"], row["dataset_revision"]) == ("open-thoughts/TaskTrove", HF_REV)
    assert (row["verifier_name"], row["verifier_url"]) == ("Harbor", "")


def test_source_tables_replace_default_tables_wholesale(tmp_path):
    write(
        tmp_path,
        "d.toml",
        f"""
        [defaults]
        origin = "O"
        family = "math-answer"
        dataset = {{ name = "default/ds", revision = "{HF_REV}", url = "https://default" }}
        verifier = {{ name = "default-v", revision = "{SHA_REV}", url = "https://v" }}

        [[source]]
        id = "O:a"
        title = "a"
        family = ""
        dataset = {{ name = "own/ds" }}
        verifier = {{ name = "own-v" }}
        """,
    )
    (row,) = load_rows(tmp_path)
    # Not merged key by key: the default revision and url do not leak into the source's tables.
    assert (row["dataset_id"], row["dataset_revision"], row["url"]) == ("own/ds", None, None)
    assert (row["verifier_name"], row["verifier_revision"], row["verifier_url"]) == (
        "own-v",
        None,
        None,
    )
    assert row["family"] == ""


def test_tags_are_default_tags_then_source_tags_first_occurrence_kept(tmp_path):
    write(
        tmp_path,
        "d.toml",
        """
        [defaults]
        origin = "O"
        tags = ["agentic", "multi-turn", "license:mit"]

        [[source]]
        id = "O:a"
        title = "a"
        tags = ["excluded", "multi-turn", "agentic", "gym/x"]

        [[source]]
        id = "O:b"
        title = "b"
        """,
    )
    a, b = load_rows(tmp_path)
    assert a["tags"] == ["agentic", "multi-turn", "license:mit", "excluded", "gym/x"]
    assert b["tags"] == ["agentic", "multi-turn", "license:mit"]


def test_defaults_apply_only_within_their_file(tmp_path):
    write(tmp_path, "a.toml", '[defaults]\norigin = "O"\n[[source]]\nid = "O:a"\ntitle = "a"\n')
    other = write(tmp_path, "b.toml", '[[source]]\nid = "O:b"\ntitle = "b"\n')
    assert errors_of(tmp_path) == [f"{other}: O:b: origin is required"]


# --- errors are collected, one per line --------------------------------------------------------


def test_every_violation_is_reported_at_once_with_file_and_id(tmp_path):
    first = write(
        tmp_path,
        "a.toml",
        """
        [[source]]
        id = "O:one"
        title = "one"
        origin = "O"
        tags = ["agentic", "Bad"]
        dataset = { name = "d", url = "http://x", sha = "1" }

        [[source]]
        title = "no id"
        origin = "O"
        """,
    )
    second = write(
        tmp_path,
        "b/c.toml",
        """
        [[source]]
        id = "O:one"
        title = "again"
        origin = "O"
        count = -3
        tags = ["generator"]
        """,
    )
    errors = errors_of(tmp_path)
    assert sorted(errors) == sorted(
        [
            f"{first}: O:one: Invalid tag: Bad",
            f"{first}: O:one: Agentic sources must be multi-turn",
            f"{first}: O:one: Unknown key dataset.sha",
            f"{first}: O:one: Only https URLs are allowed: dataset.url",
            f"{first}: #1: id is required",
            f"{second}: O:one: count must be an integer >= 0",
            f"{second}: O:one: Generators have no fixed count",
            f"{second}: O:one: Duplicate RL source identifiers: O:one",
        ]
    )
    assert all("\n" not in line for line in errors)


def test_rows_are_sorted_by_id_in_code_point_order(tmp_path):
    write(
        tmp_path,
        "a.toml",
        '[defaults]\norigin = "O"\n'
        + "".join(f'[[source]]\nid = "O:{k}"\ntitle = "{k}"\n' for k in ["b", "B", "a", "é", "_"]),
    )
    assert [row["id"] for row in load_rows(tmp_path)] == ["O:B", "O:_", "O:a", "O:b", "O:é"]
