"""Running git in a checkout this machine may not have made, without running what it configures.

A checkout's own ``.git/config`` is input: a published run can ship one, and a config can make
git run a command (``core.fsmonitor``, a filter's ``clean``/``smudge``/``process``, a diff
driver's ``command``/``textconv``, ``core.sshCommand``, a hook, a signature program). Every git
command of the project runs through ``run_git``, which turns each of those off whatever the
repository (or an inherited ``GIT_*`` variable) says:

- the environment is the caller's without any ``GIT_*`` variable (``GIT_CONFIG_*``,
  ``GIT_DIR``, ``GIT_EXEC_PATH``, ``GIT_SSH_COMMAND``, ``GIT_EXTERNAL_DIFF``, …), plus the few
  this module sets;
- command-line configuration (``GIT_CONFIG_COUNT``/``KEY``/``VALUE``, which outranks every
  config file and takes any key verbatim, unlike ``-c name=value``) disables the fixed keys
  below and every ``filter.*``, ``diff.*`` and ``merge.*`` driver command the repository's
  config (includes followed) defines — git has no switch that ignores a repository's config, and a
  driver's name is the repository's to choose;
- ``GIT_OPTIONAL_LOCKS=0``: a read never writes the index; no prompt ever waits on a terminal;
- submodules are left alone (``diff.ignoreSubmodules=all``): each has a config of its own;
- every command has a deadline (an ``include.path`` naming a FIFO would otherwise block).

Standard library only: the demo's checkout builder (``examples/``) runs git through it too.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["GitFailed", "disarmed_environment", "run_git"]

GIT_SECONDS = 120.0
# Keys that make git run a program or read one from elsewhere, each set to what runs nothing.
DISARMED = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", "true"),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("sequence.editor", "false"),
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("protocol.allow", "never"),
    ("uploadpack.packObjectsHook", ""),
)
# Driver keys whose value is a command, for every driver the repository defines, each set to what
# runs nothing of the repository's: an empty filter passes content through unchanged (git skips
# it), a text conversion is the file itself, an external diff or merge says nothing.
DRIVER_COMMANDS = {
    "filter": {"clean": "", "smudge": "", "process": ""},
    "diff": {"command": "true", "textconv": "cat"},
    "merge": {"driver": "false"},
}


class GitFailed(Exception):
    """git could not run, ran past its deadline or exited non-zero; the message is one line."""


def disarmed_environment(overrides: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    """The caller's environment less every ``GIT_*`` variable, with ``DISARMED`` and
    ``overrides`` as command-line configuration."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    pairs = (*DISARMED, *overrides)
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for number, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def _driver_overrides(
    checkout: Path, env: dict[str, str], *, timeout: float
) -> tuple[tuple[str, str], ...]:
    """The disarmed value of every command of a filter, diff or merge driver the repository's
    config defines (listing config runs nothing)."""
    listed = _run(
        ["git", "-C", str(checkout), "config", "--null", "--name-only", "--list"],
        env,
        timeout=timeout,
    )
    overrides = []
    for name in listed.stdout.split(b"\x00"):
        key = name.decode("utf-8", "surrogateescape")
        section, _, rest = key.partition(".")
        subsection, _, variable = rest.rpartition(".")
        commands = DRIVER_COMMANDS.get(section.lower(), {})
        if subsection and variable.lower() in commands:
            overrides.append((key, commands[variable.lower()]))
    return tuple(overrides)


def _run(
    command: list[str], env: dict[str, str], *, timeout: float = GIT_SECONDS
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            command, capture_output=True, stdin=subprocess.DEVNULL, env=env, timeout=timeout,
            check=False,
        )  # fmt: skip
    except OSError as exc:
        raise GitFailed(f"git is not available: {exc}") from None
    except subprocess.TimeoutExpired:
        raise GitFailed(f"git {' '.join(command[3:])} gave no answer in {timeout:g} s") from None


def run_git(
    *,
    checkout: Path,
    args: list[str],
    env: dict[str, str] | None = None,
    timeout: float = GIT_SECONDS,
) -> subprocess.CompletedProcess[bytes]:
    """``git -C checkout *args`` disarmed; ``env`` adds variables (an author's name). Raises
    ``GitFailed`` only when git cannot run or passes the deadline: the caller reads the exit
    status."""
    base = disarmed_environment()
    disarmed = disarmed_environment(_driver_overrides(Path(checkout), base, timeout=timeout))
    command = ["git", "-C", str(checkout), *args]
    return _run(command, {**disarmed, **(env or {})}, timeout=timeout)
