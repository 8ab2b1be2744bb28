"""Fixtures of the curators' tools: a MarinSkyRL-shaped checkout whose gsm8k environment gets a
real, deliberate bug at one commit — it no longer strips thousands separators, so a correct answer
written ``#### 2,006`` is rejected — and the fix at the next; a solver that writes its answers
with separators (one of them wrong); and a finished make_review run at the buggy commit."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviews.production.examples.marinskyrl import DefectCommits, add_separator_defect
from tests.model_server import ModelServer
from tests.production.conftest import (  # noqa: F401 - fixtures used by name
    api_key,
    checkout,
    commit_all,
    git,
    gsm8k_rows,
    session_checkout,
    write_config,
    write_parquet,
)
from tests.production.helpers import make_review
from tests.production.review_model import ReviewModel

ISSUE_URL = "https://github.com/marin-community/MarinSkyRL/issues/4242"
# Two prepared rows whose sums need a thousands separator: 1201 + 805 and 1204 + 807.
ROW_OFFSET = 400
WRONG_TOTAL = 2011  # the solver answers this task off by one: a saved wrong answer


@pytest.fixture
def defect_checkout(checkout) -> DefectCommits:  # noqa: F811 - the production fixture
    return add_separator_defect(checkout)


def separator_model() -> ReviewModel:
    """Writes every total with a thousands separator (``#### 2,006``); gets one task wrong."""
    return ReviewModel(separators=True, wrong_totals=frozenset({WRONG_TOTAL}))


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer(default=separator_model()) as server:
        yield server


@pytest.fixture
def separator_config(tmp_path, write_config):  # noqa: F811
    rows = gsm8k_rows(2, offset=ROW_OFFSET)
    return write_config(tasks_path=write_parquet(tmp_path / "data" / "train.parquet", rows))


@pytest.fixture
def buggy_run(tmp_path, defect_checkout, separator_config) -> Path:
    output = tmp_path / "review-buggy"
    make_review(
        "--config", str(separator_config), "--n", "2", "--seed", "7", "--output", str(output)
    )
    return output


def task_folder_of(run: Path, total: int) -> str:
    """The task folder whose prompt sums to ``total``."""
    for attempt in sorted(run.glob("tasks/*/attempt.json")):
        request = next(attempt.parent.glob("execution-*/solver/turn-*/request.json"))
        numbers = re.search(r"Compute (\d+) \+ (\d+)", request.read_text(encoding="utf-8"))
        if numbers and int(numbers.group(1)) + int(numbers.group(2)) == total:
            return attempt.parent.relative_to(run).as_posix()
    raise AssertionError(f"no task sums to {total}")
