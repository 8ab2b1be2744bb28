"""attest_execution: parsed, normalised definitions of the task loader, the
worker launcher and the code-identity check with what they reference — never imported."""

from __future__ import annotations

import json
import textwrap
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from difficulty.attestation import (
    CHANGED_WITHOUT_VALIDATION,
    AttestationError,
    verify_attestation,
)
from difficulty.production.implementation_attestation import attest_execution

ORIGINAL = '''
"""Execution script."""
import os
from pathlib import Path

from runtime import run_attempt, sample_tasks

ARMS = "difficulty"
UNRELATED = 1


def helper(value: int) -> str:
    """Arm folder name."""
    return f"{ARMS}/{value}"


def load_sample(*, source: dict, n: int):
    return sample_tasks(source, n)


def launch_attempt(*, number: int):
    return run_attempt(helper(number))


def code_identity(*, checkout: str):
    return os.path.join(checkout, "HEAD")


def quality_prompt():
    return "Judge this."

raise SystemExit("importing this script is an error: it must only be parsed")
'''


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def attest(tmp_path: Path, executed_text: str) -> dict:
    original = write(tmp_path, "original.py", ORIGINAL)
    executed = write(tmp_path, "executed.py", executed_text)
    document = attest_execution(original=original, executed=executed)
    # Every produced document is consistent for the Atlas's checker.
    try:
        verify_attestation(text=json.dumps(document), run_dir=tmp_path)
    except AttestationError as error:
        assert not document["matching"] and str(error) == CHANGED_WITHOUT_VALIDATION
    return document


def test_unchanged_code_matches(tmp_path):
    document = attest(tmp_path, ORIGINAL)
    assert document["matching"] is True
    assert document["original"]["file_sha256"] == document["executed"]["file_sha256"]
    names = [item["name"] for item in document["definitions"]]
    # The roots and what they reference; not the unrelated definitions.
    assert names == ["ARMS", "code_identity", "helper", "launch_attempt", "load_sample"]
    assert document["imports"]["original"] == [
        "from runtime import run_attempt",
        "from runtime import sample_tasks",
        "import os",
    ]


def test_formatting_comments_docstrings_and_annotations_still_match(tmp_path):
    reformatted = (
        ORIGINAL.replace('"""Arm folder name."""', '# the arm folder\n    """Other words."""')
        .replace("def helper(value: int) -> str:", "def helper(\n    value: float,\n) -> object:")
        .replace("return sample_tasks(source, n)", "return sample_tasks(  source,\n  n  )  # why")
        .replace('"""Execution script."""', '"""A rewritten module docstring."""')
    )
    document = attest(tmp_path, reformatted)
    assert document["matching"] is True
    assert document["original"]["file_sha256"] != document["executed"]["file_sha256"]


def test_an_unreferenced_change_keeps_matching(tmp_path):
    document = attest(
        tmp_path, ORIGINAL.replace('return "Judge this."', 'return "Judge strictly."')
    )
    assert document["matching"] is True


@pytest.mark.parametrize(
    ("change", "differing"),
    [
        (('ARMS = "difficulty"', 'ARMS = "difficulty-v2"'), ["ARMS"]),
        (('return f"{ARMS}/{value}"', 'return f"{ARMS}-{value}"'), ["helper"]),
        (('"HEAD"', '"ORIG_HEAD"'), ["code_identity"]),
        # The helper and its constant leave the closure: recorded as absent on the executed side.
        (
            ("return run_attempt(helper(number))", "return run_attempt(number)"),
            ["ARMS", "helper", "launch_attempt"],
        ),
    ],
)
def test_a_changed_literal_or_referenced_helper_differs(tmp_path, change, differing):
    document = attest(tmp_path, ORIGINAL.replace(*change))
    assert document["matching"] is False
    assert document["original"]["definitions_sha256"] != document["executed"]["definitions_sha256"]
    changed = [
        item["name"]
        for item in document["definitions"]
        if item["original_sha256"] != item["executed_sha256"]
    ]
    assert changed == differing


def test_a_changed_import_differs(tmp_path):
    document = attest(tmp_path, ORIGINAL.replace("from runtime import", "from runtime_v2 import"))
    assert document["matching"] is False
    assert document["imports"]["executed"][0] == "from runtime_v2 import run_attempt"


def test_the_command_writes_the_attestation_with_validation(tmp_path):
    original = write(tmp_path, "original.py", ORIGINAL)
    executed = write(tmp_path, "executed.py", ORIGINAL.replace('"HEAD"', '"ORIG_HEAD"'))
    output = tmp_path / "run" / "publication-execution-implementation-attestation.json"
    (tmp_path / "run" / "checks").mkdir(parents=True)
    (tmp_path / "run" / "checks" / "rerun.md").write_text("Same verdicts.\n")
    out = StringIO()
    call_command(
        "attest_execution", "--original", str(original), "--executed", str(executed),
        "--output", str(output), "--validation", "checks/rerun.md=Re-ran the sample",
        stdout=out,
    )  # fmt: skip
    assert out.getvalue().startswith("Saved differing execution-implementation attestation")
    document = json.loads(output.read_text())
    assert document["changed_code_validation"] == [
        {"path": "checks/rerun.md", "description": "Re-ran the sample"}
    ]
    assert verify_attestation(text=output.read_text(), run_dir=tmp_path / "run") == document
    with pytest.raises(CommandError, match="Cannot parse"):
        call_command(
            "attest_execution", "--original", str(original), "--executed",
            str(write(tmp_path, "broken.py", "def (")), "--output", str(output),
        )  # fmt: skip
