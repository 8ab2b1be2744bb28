"""A make_review that refuses its inputs leaves no output folder behind, so the same command,
run again once the input is fixed, starts afresh instead of asking for --resume."""

from __future__ import annotations

import shutil

import pytest

from tests.production.conftest import gsm8k_rows, write_parquet
from tests.production.helpers import make_review, review_fails

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("breaks", "message"),
    [
        ("tasks", "Task input not found"),
        ("checkout", "Native checkout is not a git repository"),
        ("rows", "needs prompt and env_class"),
    ],
)
def test_a_refused_run_leaves_nothing_and_the_same_command_then_works(
    tmp_path, write_config, checkout, breaks, message
):
    tasks = tmp_path / "data" / "train.parquet"
    config = write_config(tasks_path=tasks)
    output = tmp_path / "runs" / "gsm8k" / "review"
    args = ("--config", str(config), "--n", "2", "--output", str(output))
    moved = tmp_path / "elsewhere"
    if breaks == "checkout":
        write_parquet(tasks, gsm8k_rows(4))
        shutil.move(checkout / ".git", moved)
    elif breaks == "rows":
        write_parquet(tasks, [{"data_source": "x", "note": "no prompt"}])
    assert message in review_fails(*args)
    assert not output.exists()

    if breaks == "checkout":
        shutil.move(moved, checkout / ".git")
    else:
        write_parquet(tasks, gsm8k_rows(4))
    stdout, _ = make_review(*args)
    assert stdout.startswith("Saved ") and (output / "quality-reviews.json").is_file()
