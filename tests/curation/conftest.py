"""Fixtures of the curators' tools: a MarinSkyRL-shaped checkout whose gsm8k environment gets a
real, deliberate bug at one commit — it no longer strips thousands separators, so a correct answer
written ``#### 2,006`` is rejected — and the fix at the next; a solver that writes its answers
with separators (one of them wrong); and a finished make_review run at the buggy commit."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.model_server import ModelServer, RecordedRequest
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
from tests.production.review_model import SUM, ReviewModel

UTILS = Path("skyrl-gym/skyrl_gym/envs/gsm8k/utils.py")
STRIPPED = '.replace(",", "").replace("$", "")'
BUGGY = '.replace("$", "")'
ISSUE_URL = "https://github.com/marin-community/MarinSkyRL/issues/4242"
# Two prepared rows whose sums need a thousands separator: 1201 + 805 and 1204 + 807.
ROW_OFFSET = 400
WRONG_TOTAL = 2011  # the solver answers this task off by one: a saved wrong answer


class SeparatorModel(ReviewModel):
    """Writes every total with a thousands separator (``#### 2,006``); gets one task wrong."""

    def solver_answer(self, request: RecordedRequest) -> str:
        text = " ".join(str(m.get("content")) for m in request.messages if m["role"] == "user")
        match = SUM.search(text)
        total = int(match.group(1)) + int(match.group(2)) if match else 0
        if total == WRONG_TOTAL:
            total += 1
        return f"Adding the numbers gives {total:,}.\n#### {total:,}"


@dataclass(frozen=True)
class DefectCheckout:
    path: Path
    good: str
    buggy: str
    fixed: str

    def at(self, commit: str) -> None:
        git(self.path, "checkout", "-q", commit)


@pytest.fixture
def defect_checkout(checkout) -> DefectCheckout:  # noqa: F811 - the production fixture
    good = git(checkout, "rev-parse", "HEAD").strip()
    utils = checkout / UTILS
    source = utils.read_text(encoding="utf-8")
    assert source.count(STRIPPED) == 1
    utils.write_text(source.replace(STRIPPED, BUGGY), encoding="utf-8")
    buggy = commit_all(checkout, "gsm8k: keep the answer as written")
    utils.write_text(source, encoding="utf-8")
    fixed = commit_all(checkout, "gsm8k: strip thousands separators again")
    repo = DefectCheckout(path=checkout, good=good, buggy=buggy, fixed=fixed)
    repo.at(buggy)
    return repo


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer(default=SeparatorModel()) as server:
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
