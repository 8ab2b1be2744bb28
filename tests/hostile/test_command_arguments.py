"""Command arguments an operator mistypes or an attacker chooses: a usage error that says what is
allowed, never a traceback, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reviews.pages.work_queue import MAX_LIMIT, work_queue

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
BAD_LIMITS = ["-1", "0", str(MAX_LIMIT + 1), str(2**63), str(10**30), "1e3", "ten", "", " "]


@pytest.mark.parametrize("limit", BAD_LIMITS)
def test_review_queue_refuses_limits_it_cannot_page_by(limit, tables):
    tables.before()
    with pytest.raises(CommandError) as refused:
        call_command("review_queue", "--limit", limit)
    assert "argument --limit: the limit must be" in str(refused.value)
    tables.assert_unchanged()


def test_the_service_refuses_them_too():
    for limit in (-1, 0, 2**63):
        with pytest.raises(ValueError, match=r"between 1 and 1,000,000"):
            work_queue(limit=limit)
    assert [section.entries for section in work_queue(limit=MAX_LIMIT)] == [
        section.entries for section in work_queue()
    ]


@pytest.mark.slow
def test_from_the_command_line_it_is_a_usage_error_without_a_traceback():
    for limit in ("-1", str(10**30)):
        run = subprocess.run(
            [sys.executable, "manage.py", "review_queue", "--limit", limit],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert run.returncode == 2
        assert "error: argument --limit: the limit must be between 1 and 1,000,000" in run.stderr
        assert "Traceback" not in run.stderr
