"""Running the difficulty commands in tests."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command


def make_difficulty(*args: str) -> tuple[str, str]:
    """Run the command; returns (stdout, stderr)."""
    out, err = StringIO(), StringIO()
    call_command("make_difficulty", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def difficulty_fails(*args: str) -> str:
    with pytest.raises(CommandError) as failure:
        make_difficulty(*args)
    return str(failure.value)
