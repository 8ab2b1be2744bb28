"""Every option of the curators' commands is described by --help."""

from __future__ import annotations

import pytest
from django.core.management import load_command_class

OPTIONS = {
    "reproduce_defect": (
        "--run-dir", "--attempt", "--kind", "--issue-url", "--expect", "--saved-answer",
        "--reference-answer", "--answer-template", "--answer", "--answer-file", "--statement",
        "--severity", "--curator", "--config", "--output",
    ),
    "validate_fix": (
        "--confirming", "--issue-url", "--review", "--atlas", "--atlas-row", "--skip-control",
        "--control-answer", "--curator", "--output",
    ),
    "synthesise_source": (
        "--atlas-id", "--config", "--atlas", "--atlas-row", "--pool", "--inspected-commit",
        "--output",
    ),
    "fetch_review": ("--atlas", "--review-id", "--output"),
    "make_review": ("--reuse", "--rejudge"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_help_describes_every_option(name):
    parser = load_command_class("reviews", name).create_parser("manage.py", name)
    described = {
        option: action.help
        for action in parser._actions  # argparse keeps no public list of its actions
        for option in action.option_strings
    }
    for option in OPTIONS[name]:
        assert described.get(option), f"{name} {option} has no help"
