"""Path safety (reviews.production.format.path_safety): the one policy for names that must stay
relative and paths that must stay inside a folder, and the run directory's containment that goes
through it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reviews.production.format.path_safety import relative_form, resolved, resolves_inside
from reviews.production.format.run_files import RunDirectory, normalized_relative


class Refused(Exception):
    pass


@pytest.mark.parametrize(
    "name",
    ["", "/etc/passwd", "\\windows", "C:/x.json", "a\\b", "a\x00b", "..", "../x", "a/../b",
     "a/../../x", "tasks/..", None, 7],
)  # fmt: skip
def test_relative_form_refuses_every_name_that_is_not_a_plain_relative_path(name):
    assert relative_form(name) is None


@pytest.mark.parametrize(
    ("name", "normal"),
    [("a.json", "a.json"), ("./a.json", "a.json"), ("tasks//0001/./b.json", "tasks/0001/b.json"),
     ("a..b/c..", "a..b/c.."), (".", "."), ("./", "."), ("tasks/0001/", "tasks/0001")],
)  # fmt: skip
def test_relative_form_normalises_plain_relative_paths(name, normal):
    assert relative_form(name) == normal


def test_run_files_refuse_the_run_itself_and_names_no_column_stores():
    assert normalized_relative(".") is None and normalized_relative("publication/\udcff") is None
    assert normalized_relative("publication/./a.json") == "publication/a.json"


def test_resolves_inside_follows_links(tmp_path):
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", root / "out")
    os.symlink(root / "a", root / "in")
    inside = root.resolve()
    assert resolves_inside(root, inside) and resolves_inside(root / "a" / "missing", inside)
    assert resolves_inside(root / "in" / "x", inside)
    assert not resolves_inside(root / "out" / "x", inside)
    assert not resolves_inside(root / ".." / "root-sibling", inside)
    assert not resolves_inside("/etc/passwd", inside)
    assert resolved("a\x00b") is None and not resolves_inside(root / "a\x00b", inside)


@pytest.fixture
def run(tmp_path) -> tuple[Path, RunDirectory]:
    root = tmp_path / "run"
    nested = root / "tasks" / "0001" / "execution-001" / "solver"
    nested.mkdir(parents=True)
    (nested / "turn-1.json").write_text("{}")
    (root / "run.json").write_text("{}")
    (tmp_path / "secret.txt").write_text("secret")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "turn-1.json").write_text("{}")
    os.symlink(tmp_path / "secret.txt", root / "link-out.txt")
    os.symlink("../../../../../secret.txt", nested / "relative-out.txt")
    os.symlink(tmp_path / "elsewhere", root / "tasks" / "0002")
    os.symlink(nested, root / "tasks" / "latest")
    return root, RunDirectory(root)


@pytest.mark.parametrize(
    "name",
    ["tasks/0001/execution-001/solver/turn-1.json", "run.json",
     "tasks/latest/turn-1.json"],
)  # fmt: skip
def test_legit_nested_paths_are_read(run, name):
    root, directory = run
    assert directory.read(name, limit=1024, error=Refused) == b"{}"
    found = directory.resolve(name)
    assert found is not None and found.is_relative_to(root.resolve())
    assert directory.contains(name) == found


@pytest.mark.parametrize(
    "name",
    ["../secret.txt", "tasks/../../secret.txt", "/etc/passwd", str(Path("/tmp").resolve()),
     "link-out.txt", "tasks/0001/execution-001/solver/relative-out.txt",
     "tasks/0002/turn-1.json"],
)  # fmt: skip
def test_paths_that_leave_the_run_are_refused(run, name):
    _, directory = run
    assert directory.contains(name) is None
    if not name.startswith(("/", "..")) and "/../" not in name:
        # ``read`` and ``resolve`` take names already normalised: each escape by a link.
        assert directory.resolve(name) is None
        assert directory.read(name, limit=1024, error=Refused) is None


def test_a_folder_link_out_and_back_in_is_inside(run, tmp_path):
    root, directory = run
    os.symlink(tmp_path, root / "up")
    assert directory.read("up/run/run.json", limit=1024, error=Refused) == b"{}"
    assert directory.read("up/secret.txt", limit=1024, error=Refused) is None
