"""Helpers shared by the production tests."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z")


def make_review(*args: str) -> tuple[str, str]:
    """Run the command; returns (stdout, stderr)."""
    out, err = StringIO(), StringIO()
    call_command("make_review", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def review_fails(*args: str) -> str:
    with pytest.raises(CommandError) as failure:
        make_review(*args)
    return str(failure.value)


def snapshot_files(root: Path) -> dict[str, bytes]:
    """Every file of a run directory by relative path (the lock excluded)."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name != ".run.lock"
    }


REWRITTEN = ("panel-reviews.partial.json",)  # rewritten after each task by design


def assert_intact(before: dict[str, bytes], root: Path) -> None:
    """Every file saved before a failure is still there, byte for byte."""
    after = snapshot_files(root)
    for path, data in before.items():
        if path not in REWRITTEN:
            assert after.get(path) == data, path


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def without_timestamps(text: str) -> str:
    return TIMESTAMP.sub("<time>", text)
