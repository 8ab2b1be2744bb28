"""A checkout's own git configuration is input: a published run can ship a ``.git`` whose config
names commands. Every git command of the project reads such a checkout without running any of
them (``reviews.production.git_commands``) — a marker file each command would create is never
created — while plain git, as the test shows first, runs every one."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from reviews.production.examples.marinskyrl import GIT_ENV, commit_all, git
from reviews.production.git_commands import run_git
from reviews.production.make_review.attestation_writer import _git_bytes
from reviews.production.runtime.identity import MARINSKYRL_TREES, checkout_identity

MARKERS = ("fsmonitor", "clean", "process", "textconv", "gpg", "env")


def hostile_checkout(root: Path, marks: Path) -> Path:
    """A committed checkout whose ``.git/config`` (and an include it names) sets a command for
    every key that runs one during a status, a show or a log, each touching its own marker."""
    checkout = root / "checkout"
    (checkout / "skyrl-gym" / "skyrl_gym").mkdir(parents=True)
    (checkout / "skyrl-gym" / "skyrl_gym" / "env.py").write_text("X = 1\n", encoding="utf-8")
    (checkout / ".gitattributes").write_text("* filter=evil diff=evil\n", encoding="utf-8")
    git(checkout, "init", "-q", "-b", "main")
    commit_all(checkout, "a checkout")
    (root / "included").write_text(
        f'[filter "evil"]\n\tprocess = touch {marks}/process\n', encoding="utf-8"
    )
    with open(checkout / ".git" / "config", "a", encoding="utf-8") as config:
        config.write(
            f"[core]\n\tfsmonitor = touch {marks}/fsmonitor; false\n"
            f'[filter "evil"]\n\tclean = touch {marks}/clean; cat\n'
            f'[diff "evil"]\n\ttextconv = touch {marks}/textconv; cat\n'
            f"[log]\n\tshowSignature = true\n"
            f"[gpg]\n\tprogram = {root / 'gpg'}\n"
            f"[include]\n\tpath = {root / 'included'}\n"
        )
    gpg = root / "gpg"
    gpg.write_text(f"#!/bin/sh\ntouch {marks}/gpg\n", encoding="utf-8")
    gpg.chmod(0o755)
    return checkout


def stale(checkout: Path) -> None:
    """Every tracked file's time changes, so a status reads each file again (and filters it)."""
    for path in checkout.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            os.utime(path, (1_000_000_000, 1_000_000_000))


@pytest.fixture
def marks(tmp_path) -> Path:
    folder = tmp_path / "marks"
    folder.mkdir()
    return folder


def test_plain_git_runs_what_the_checkout_configures(tmp_path, marks):
    """The attack is real: the same commands through plain git create the markers."""
    checkout = hostile_checkout(tmp_path, marks)
    stale(checkout)
    plain = {**os.environ, **GIT_ENV}
    for args in (["status", "--porcelain"], ["log", "-1"], ["diff", "HEAD~0"]):
        subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, env=plain)
    assert {"fsmonitor", "process"} <= {p.name for p in marks.iterdir()}


def test_the_projects_git_runs_nothing_a_checkout_configures(tmp_path, marks, monkeypatch):
    checkout = hostile_checkout(tmp_path, marks)
    stale(checkout)
    # An inherited environment that names a command is dropped too.
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", f"touch {marks}/env; false")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", f"{tmp_path / 'gpg'}")

    identity = checkout_identity(checkout=checkout, trees=MARINSKYRL_TREES)
    assert identity["dirty"] is False and len(identity["commit"]) == 40
    head = identity["commit"]
    assert _git_bytes(checkout, "show", f"{head}:skyrl-gym/skyrl_gym/env.py") == b"X = 1\n"
    for args in (["log", "-1"], ["diff", "HEAD"], ["show", "HEAD"], ["status"]):
        assert run_git(checkout=checkout, args=args).returncode == 0
    assert sorted(p.name for p in marks.iterdir()) == []


def test_a_checkout_whose_config_never_ends_is_refused_in_one_line(tmp_path, marks):
    """An include naming a FIFO would block git forever: the deadline ends it."""
    checkout = hostile_checkout(tmp_path, marks)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with open(checkout / ".git" / "config", "a", encoding="utf-8") as config:
        config.write(f"[include]\n\tpath = {fifo}\n")
    from reviews.production.git_commands import GitFailed

    with pytest.raises(GitFailed) as failure:
        run_git(checkout=checkout, args=["rev-parse", "HEAD"], timeout=1)
    assert str(failure.value) == "git config --null --name-only --list gave no answer in 1 s"
