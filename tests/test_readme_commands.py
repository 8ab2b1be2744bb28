"""Every command the README prints runs as printed, from the clone, in a fresh shell (no
environment activated, nothing but the system's PATH): each line of its shell code blocks and each
inline command that runs the project's Python. A ``manage.py`` command or module answers
``--help`` and knows every option the README gives it; a ``make`` line is dry-run (``make -n``);
an ``export`` runs as printed."""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.S | re.M)
INLINE = re.compile(r"`([^`]+)`")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
PYTHON = ".venv/bin/python"
# What a new terminal has: the system's PATH, no activated environment, no project variables.
FRESH_SHELL = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(Path.home()), "LANG": "C.UTF-8"}


@dataclass
class Check:
    """One dry run standing for the README lines that print the same program."""

    dry: str
    options: set[str] = field(default_factory=set)
    printed: list[str] = field(default_factory=list)


def printed_commands(text: str) -> list[str]:
    """The README's commands: each line of its sh/bash blocks (continuations joined) and each
    inline code span that runs the project's Python or mentions manage.py."""
    found = []
    for block in FENCE.finditer(text):
        if block.group(2) not in ("sh", "bash"):
            continue
        body = block.group(3).replace("\\\n", " ")
        found += [line.strip() for line in body.splitlines() if line.strip()]
    for span in INLINE.findall(FENCE.sub("", text)):
        words = " ".join(span.split())
        if "manage.py" in words or PYTHON in words:
            command = program_words(shlex.split(words))
            if command and (command[0] == PYTHON or "manage.py" in command):
                found.append(words)
    return found


def program_words(words: list[str]) -> list[str]:
    """The words after any leading ``NAME=value`` assignments."""
    while words and ASSIGNMENT.match(words[0]):
        words = words[1:]
    return words


def shell_line(env: list[str], command: list[str]) -> str:
    """``env`` assignments (kept in the form bash reads as assignments) before ``command``."""
    assignments = [f"{n}={shlex.quote(v)}" for n, _, v in (word.partition("=") for word in env)]
    return " ".join([*assignments, shlex.join(command)])


def dry_run(line: str) -> tuple[str, set[str]] | None:
    """The fresh-shell command that checks ``line`` without doing its work, and the options it
    must know; None for the README's generic form (``.venv/bin/python manage.py …``)."""
    words = shlex.split(line, comments=True)
    command = program_words(words)
    env = words[: len(words) - len(command)]
    options = set(OPTION.findall(" ".join(command)))
    if command[:1] == ["export"]:
        return line, set()
    if command[:1] == ["make"]:
        return shell_line(env, ["make", "-n", *command[1:]]), set()
    if command[:2] == [PYTHON, "manage.py"] and len(command) > 2:
        if command[2] == "…":
            return None
        return shell_line(env, [PYTHON, "manage.py", command[2], "--help"]), options
    if command[:2] == [PYTHON, "-m"] and len(command) > 2:
        return shell_line(env, [PYTHON, "-m", command[2], "--help"]), options
    if command and command[0].startswith("scripts/") and (ROOT / command[0]).is_file():
        # A repository script prints its usage, which names the subcommand given.
        subcommand = {command[1]} if len(command) > 1 and not command[1].startswith("-") else set()
        return shell_line(env, [command[0], "--help"]), options | subcommand
    raise AssertionError(f"the README prints a command this test cannot check: {line}")


def checks() -> list[Check]:
    found: dict[str, Check] = {}
    for line in printed_commands(README.read_text(encoding="utf-8")):
        dry = dry_run(line)
        if dry is None:
            continue
        check = found.setdefault(dry[0], Check(dry=dry[0]))
        check.options |= dry[1]
        check.printed.append(line)
    return list(found.values())


def test_the_readme_prints_no_command_that_needs_an_activated_environment():
    text = README.read_text(encoding="utf-8")
    assert not re.search(r"(?<![/\w.])python3? (manage\.py|-m )", text)
    assert "uv run" not in text  # uv may be only in .tools/bin
    assert len(printed_commands(text)) >= 30  # the blocks and the commands table were found


def named(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


@pytest.mark.slow
@pytest.mark.parametrize("check", checks(), ids=lambda check: check.dry)
def test_each_printed_command_runs_from_a_fresh_shell(check):
    done = subprocess.run(
        ["bash", "-c", check.dry], cwd=ROOT, env=FRESH_SHELL,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    # Success; for a script without --help, the usage error it answers with (status 2).
    script = check.dry.split()[0].startswith("scripts/")
    assert done.returncode in ((0, 2) if script else (0,)), f"{check.printed[0]}\n{done.stderr}"
    usage = done.stdout + done.stderr
    if "--help" in check.dry:
        assert usage.lstrip().lower().startswith("usage: "), usage
    unknown = sorted(word for word in check.options if not named(usage, word))
    assert unknown == [], f"{check.printed[0]}: its usage does not name {unknown}"
