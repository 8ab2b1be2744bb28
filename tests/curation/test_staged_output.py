"""A curator's output is written in full or not at all: ``StagedOutput`` writes beside the output
and renames into it when the run is finished; a refusal, a Ctrl-C or an error of the file system
removes what was written and says so in one line; what a killed run left is cleared by the next."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviews.production.runtime.errors import CurationInterrupted, CurationRefused
from reviews.production.runtime.rundir import StagedOutput


def listing(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def test_a_finished_run_is_renamed_into_place(tmp_path):
    with StagedOutput(tmp_path / "out", command="tool") as stage:
        assert stage.path.parent == tmp_path and stage.path.name.startswith(".out.")
        (stage.path / "a.json").write_text("{}")
        assert not (tmp_path / "out").exists()
        assert stage.publish() == tmp_path / "out"
    assert listing(tmp_path) == ["out"]
    assert listing(tmp_path / "out") == ["a.json"]
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o700


def test_an_existing_output_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(CurationRefused, match="Output already exists; use a new output"):
        StagedOutput(tmp_path / "out", command="tool")
    assert listing(tmp_path) == ["out"]


@pytest.mark.parametrize(
    ("raised", "expected", "message"),
    [
        (CurationRefused("Not reproduced: x"), CurationRefused, "Not reproduced: x"),
        (KeyboardInterrupt(), CurationInterrupted, "tool: interrupted; nothing was kept in {out}"),
        (
            OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "{stage}/tasks/a.json"),
            CurationRefused,
            "tool stopped: No space left on device: {out}/tasks/a.json; nothing was kept in {out}",
        ),
    ],
)
def test_every_stop_leaves_nothing_and_says_so_in_one_line(tmp_path, raised, expected, message):
    out = tmp_path / "out"
    with pytest.raises(expected) as stopped, StagedOutput(out, command="tool") as stage:
        (stage.path / "tasks").mkdir()
        (stage.path / "tasks" / "a.json").write_text("{}")
        if isinstance(raised, OSError):
            raised.filename = raised.filename.format(stage=stage.path)
        raise raised
    assert str(stopped.value) == message.format(out=out)
    assert listing(tmp_path) == []


def test_what_a_killed_run_left_is_cleared_by_the_next(tmp_path):
    # A process that has ended (its pid no longer runs) left its staging folder behind.
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    left = tmp_path / f".out.{ended.stdout.strip()}.partial"
    (left / "tasks").mkdir(parents=True)
    running = tmp_path / f".out.{os.getppid()}.partial"  # a run still going: kept
    running.mkdir()
    other = tmp_path / f".other.{ended.stdout.strip()}.partial"  # another output's: kept
    other.mkdir()
    with StagedOutput(tmp_path / "out", command="tool") as stage:
        assert not left.exists()
        stage.publish()
    assert listing(tmp_path) == sorted([running.name, other.name, "out"])
