"""Fixtures of the curators' tools: a MarinSkyRL-shaped checkout whose gsm8k environment gets a
real, deliberate bug at one commit — it no longer strips thousands separators, so a correct answer
written ``#### 2,006`` is rejected — and the fix at the next; a solver that writes its answers
with separators (one of them wrong); and a finished make_review run at the buggy commit."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import transaction
from django.test import Client, override_settings

from atlas.services.sync import sync_catalog
from reviews.production.examples.marinskyrl import DefectCommits, add_separator_defect
from reviews.production.runtime.hosts import BYTECODE_CACHE_ENV
from tests.model_server import ModelServer
from tests.production.conftest import (  # noqa: F401 - fixtures used by name
    API_KEY,
    API_KEY_ENV,
    SOURCE_ID,
    api_key,
    bytecode_cache,
    checkout,
    commit_all,
    config_writer,
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


def walk_to_validated_fix(
    *,
    root: Path,
    buggy_run: Path,
    commits: DefectCommits,
    config: Path,
    packaged_rows: list[dict],
) -> ValidatedFix:
    """The curators' walk of ``test_defect_lifecycle`` with shipped commands, to the point where
    a validated fix waits to be published: review at the buggy commit published, reproduction
    published and confirmed, the registry's pin moved to the fix, a fresh review at the fixed
    commit, validate_fix's output."""
    sync_catalog(
        catalog_path=pinned_catalog(root, packaged_rows, commits.buggy),
        force=False,
        trigger="command",
    )
    publish_args = ("--atlas-id", SOURCE_ID)
    command("publish_review", "--run-dir", str(buggy_run), *publish_args)
    reproduction = root / "reproduction"
    command(
        "reproduce_defect", "--run-dir", str(buggy_run),
        "--attempt", task_folder_of(buggy_run, 2006), "--kind", "verifier",
        "--issue-url", ISSUE_URL, "--expect", "accepted", "--saved-answer",
        "--answer", "The total is 2,006.\n#### 2,006", "--curator", "alice",
        "--output", str(reproduction),
    )  # fmt: skip
    confirming_review_id = confirm_reproduction(reproduction)
    commits.at(commits.fixed)
    repin_to(root=root, packaged_rows=packaged_rows, commit=commits.fixed)
    fixed_review = root / "review-fixed"
    make_review(
        "--config", str(config), "--n", "2", "--seed", "7", "--output", str(fixed_review),
    )  # fmt: skip
    atlas_row = root / "atlas-row.json"
    atlas_row.write_text(
        json.dumps(Client().get(f"/api/sources/{SOURCE_ID}/").json()), encoding="utf-8"
    )
    fix = root / "fix"
    command(
        "validate_fix", "--confirming", str(reproduction), "--review", str(fixed_review),
        "--atlas-row", str(atlas_row), "--curator", "alice", "--output", str(fix),
    )  # fmt: skip
    return ValidatedFix(
        reproduction=reproduction, confirming_review_id=confirming_review_id, fix=fix
    )


def confirm_reproduction(reproduction: Path) -> str:
    """Publish a reproduction and confirm the defect with it; its review id."""
    published = json.loads(
        command("publish_review", "--run-dir", str(reproduction), "--atlas-id", SOURCE_ID)
    )
    command(
        "confirm_verifier_issue", "--atlas-id", SOURCE_ID, "--issue-url", ISSUE_URL,
        "--review-id", published["review_id"],
    )  # fmt: skip
    return published["review_id"]


def repin_to(*, root: Path, packaged_rows: list[dict], commit: str) -> None:
    sync_catalog(
        catalog_path=pinned_catalog(root, packaged_rows, commit), force=True, trigger="command"
    )


@dataclass(frozen=True)
class BuiltFix:
    """A validated fix's folders, built once per module, and the commits they ran at."""

    commits: DefectCommits
    buggy_run: Path
    walk: ValidatedFix


@pytest.fixture(scope="module")
def built_fix(
    tmp_path_factory, session_checkout, bytecode_cache, packaged_rows,  # noqa: F811
    django_db_setup, django_db_blocker,
) -> Iterator[BuiltFix]:  # fmt: skip
    """The walk to a validated fix made once for a module's tests (two reviews, a reproduction
    and a validation, each running the real verifier: about 8 s): its folders are kept, what it
    wrote to the database is rolled back. Each test copies the folders and replays the
    database's part of the walk (``validated_fix``)."""
    root = tmp_path_factory.mktemp("validated-fix")
    private_checkout = root / "MarinSkyRL"
    shutil.copytree(session_checkout, private_checkout, symlinks=True)
    commits = add_separator_defect(private_checkout)
    with (
        pytest.MonkeyPatch.context() as env,
        ModelServer(default=separator_model()) as server,
        override_settings(
            ATLAS_SYNC_LOCK_DIR=root / "locks",
            CELERY_TASK_ALWAYS_EAGER=True,
            ATLAS_PUBLIC_URL="http://atlas.test",
        ),
        django_db_blocker.unblock(),
    ):
        # What the function-scoped fixtures set for a test: the session's native bytecode cache
        # and the model's key.
        env.setenv(BYTECODE_CACHE_ENV, str(bytecode_cache))
        env.setenv(API_KEY_ENV, API_KEY)
        write = config_writer(folder=root, checkout=private_checkout, base_url=server.base_url)
        config = write(
            tasks_path=write_parquet(
                root / "data" / "train.parquet", gsm8k_rows(2, offset=ROW_OFFSET)
            )
        )
        buggy_run = root / "review-buggy"
        make_review("--config", str(config), "--n", "2", "--seed", "7", "--output", str(buggy_run))
        with transaction.atomic():
            walk = walk_to_validated_fix(
                root=root, buggy_run=buggy_run, commits=commits, config=config,
                packaged_rows=packaged_rows,
            )  # fmt: skip
            transaction.set_rollback(True)
    yield BuiltFix(commits=commits, buggy_run=buggy_run, walk=walk)


@pytest.fixture
def walked_fix(
    buggy_run, defect_checkout, separator_config, packaged_rows, tmp_path, db
) -> ValidatedFix:
    """The whole walk to a validated fix in this test, for a test that resolves the defect: the
    fix's review must be newer than the defect its confirmation opened."""
    return walk_to_validated_fix(
        root=tmp_path, buggy_run=buggy_run, commits=defect_checkout, config=separator_config,
        packaged_rows=packaged_rows,
    )  # fmt: skip


@pytest.fixture
def validated_fix(built_fix, packaged_rows, tmp_path, db) -> ValidatedFix:
    """The walk to a validated fix, as this test's own: the module's folders copied (a test may
    edit them), and the database's part replayed — the buggy review published, the reproduction
    published and confirmed, the pin moved to the fix. The fix's reviews are dated at the
    module's build, before this test's confirmation: resolving the defect needs ``walked_fix``."""
    copies = {
        name: shutil.copytree(folder, tmp_path / name, symlinks=True)
        for name, folder in (
            ("review-buggy", built_fix.buggy_run),
            ("reproduction", built_fix.walk.reproduction),
            ("fix", built_fix.walk.fix),
        )
    }
    sync_catalog(
        catalog_path=pinned_catalog(tmp_path, packaged_rows, built_fix.commits.buggy),
        force=False,
        trigger="command",
    )
    command("publish_review", "--run-dir", str(copies["review-buggy"]), "--atlas-id", SOURCE_ID)
    confirming_review_id = confirm_reproduction(copies["reproduction"])
    assert confirming_review_id == built_fix.walk.confirming_review_id
    repin_to(root=tmp_path, packaged_rows=packaged_rows, commit=built_fix.commits.fixed)
    return ValidatedFix(
        reproduction=copies["reproduction"],
        confirming_review_id=confirming_review_id,
        fix=copies["fix"],
    )
