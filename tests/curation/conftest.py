"""Fixtures of the curators' tools: a MarinSkyRL-shaped checkout whose gsm8k environment gets a
real, deliberate bug at one commit — it no longer strips thousands separators, so a correct answer
written ``#### 2,006`` is rejected — and the fix at the next; a solver that writes its answers
with separators (one of them wrong); and a finished make_review run at the buggy commit."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from atlas.services.sync import sync_catalog
from reviews.production.examples.marinskyrl import DefectCommits, add_separator_defect
from tests.model_server import ModelServer
from tests.production.conftest import (  # noqa: F401 - fixtures used by name
    SOURCE_ID,
    api_key,
    checkout,
    commit_all,
    git,
    gsm8k_rows,
    pinned_catalog,
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


@pytest.fixture
def packaged_catalog(tmp_path, packaged_rows, defect_checkout) -> Path:
    """The packaged catalog as the curators' walk sees it: gsm8k pins the buggy commit the
    reviews run at until the fix lands (``repin``)."""
    return pinned_catalog(tmp_path, packaged_rows, defect_checkout.buggy)


@pytest.fixture
def repin(tmp_path, packaged_rows) -> Callable[[str], None]:
    """The registry's pin moves (the fix merged): sync the catalog pinning ``commit``."""

    def pin(commit: str) -> None:
        catalog = pinned_catalog(tmp_path, packaged_rows, commit)
        sync_catalog(catalog_path=catalog, force=True, trigger="command")

    return pin


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


@dataclass(frozen=True)
class ValidatedFix:
    """The defect walk up to a validated fix, nothing of the fix published yet."""

    reproduction: Path  # published and confirmed
    confirming_review_id: str
    fix: Path  # validate_fix's output at the fixed commit


def command(name: str, *args: str) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def validated_fix(
    buggy_run, defect_checkout, separator_config, packaged_catalog, client, tmp_path, repin
) -> ValidatedFix:
    """The curators' walk of ``test_defect_lifecycle`` with shipped commands, to the point where
    a validated fix waits to be published: review at the buggy commit published, reproduction
    published and confirmed, a fresh review at the fixed commit, validate_fix's output."""
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    publish_args = ("--atlas-id", SOURCE_ID)
    command("publish_review", "--run-dir", str(buggy_run), *publish_args)
    reproduction = tmp_path / "reproduction"
    command(
        "reproduce_defect", "--run-dir", str(buggy_run),
        "--attempt", task_folder_of(buggy_run, 2006), "--kind", "verifier",
        "--issue-url", ISSUE_URL, "--expect", "accepted", "--saved-answer",
        "--answer", "The total is 2,006.\n#### 2,006", "--curator", "alice",
        "--output", str(reproduction),
    )  # fmt: skip
    published = json.loads(command("publish_review", "--run-dir", str(reproduction), *publish_args))
    command(
        "confirm_verifier_issue", *publish_args, "--issue-url", ISSUE_URL,
        "--review-id", published["review_id"],
    )  # fmt: skip
    defect_checkout.at(defect_checkout.fixed)
    repin(defect_checkout.fixed)
    fixed_review = tmp_path / "review-fixed"
    make_review(
        "--config", str(separator_config), "--n", "2", "--seed", "7",
        "--output", str(fixed_review),
    )  # fmt: skip
    atlas_row = tmp_path / "atlas-row.json"
    atlas_row.write_text(
        json.dumps(client.get(f"/api/sources/{SOURCE_ID}/").json()), encoding="utf-8"
    )
    fix = tmp_path / "fix"
    command(
        "validate_fix", "--confirming", str(reproduction), "--review", str(fixed_review),
        "--atlas-row", str(atlas_row), "--curator", "alice", "--output", str(fix),
    )  # fmt: skip
    return ValidatedFix(
        reproduction=reproduction, confirming_review_id=published["review_id"], fix=fix
    )
