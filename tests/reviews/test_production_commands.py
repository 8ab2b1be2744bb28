"""What the production tools' commands share: the progress stream on the command's stderr, and
a command-line process that keeps what Django loaded out of the collector's walks."""

from __future__ import annotations

import gc
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from reviews.management.production_commands import progress_stream


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_lines_reach_the_commands_stderr_as_written_and_unstyled():
    out = Terminal()
    command = BaseCommand(stderr=out, force_color=True)
    stream = progress_stream(command)
    stream.write("\r\033[Kmake_review: tasks 1/2")
    stream.write(" · done\n")
    stream.flush()
    assert out.getvalue() == "\r\033[Kmake_review: tasks 1/2 · done\n"
    assert stream.isatty()
    command.stderr.write("refused")  # the command's own messages keep their line end and style
    assert out.getvalue().endswith("\033[31;1mrefused\n\033[0m")


def test_off_a_terminal_the_stream_says_so():
    stream = progress_stream(BaseCommand(stderr=io.StringIO()))
    assert not stream.isatty()


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("command", ["make_review", "make_difficulty"])
def test_run_from_the_command_line_the_process_settles_what_django_loaded(command):
    """As a reviewer runs it (manage.py): what Django loaded is frozen out of the collector's
    walks and the first generation is collected less often; the other generations keep theirs.
    The refused invocation (no --config) still exits as a usage error."""
    probe = (
        "import atexit, gc, sys; default = gc.get_threshold(); "
        "atexit.register(lambda: print(gc.get_freeze_count(), *default, *gc.get_threshold(), "
        "file=sys.stderr)); sys.argv = ['manage.py', sys.argv[1], '--output', 'unused']; "
        "import runpy; runpy.run_path('manage.py', run_name='__main__')"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"}
    done = subprocess.run(
        [sys.executable, "-c", probe, command], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert done.returncode == 2
    *said, figures = done.stderr.strip().splitlines()
    assert "required" in said[-1]
    frozen, *thresholds = [int(n) for n in figures.split()]
    default, settled = thresholds[:3], thresholds[3:]
    assert frozen > 10_000
    assert settled[0] >= 10_000 > default[0] and settled[1:] == default[1:]


NOT_LOADED = ("config", "celery", "rest_framework", "psycopg", "django.contrib.admin",
              "django.db.models")  # fmt: skip


def loaded_by(arguments: list[str]) -> tuple[subprocess.CompletedProcess[str], list[str], str]:
    """``manage.py`` run with ``arguments`` where the environment names the project's settings:
    the process, what it said, and at exit whether the app registry was ready followed by which
    of ``NOT_LOADED`` it had imported."""
    probe = (
        "import atexit, sys; from django.apps import apps; "
        "atexit.register(lambda: print(apps.ready, *(m for m in sys.argv[1:] if m in sys.modules),"
        " file=sys.stderr)); "
        f"sys.argv = ['manage.py', *{arguments!r}]; "
        "import runpy; runpy.run_path('manage.py', run_name='__main__')"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"}
    done = subprocess.run(
        [sys.executable, "-c", probe, *NOT_LOADED], cwd=ROOT, capture_output=True, text=True,
        env=env,
    )  # fmt: skip
    *said, loaded = done.stderr.strip().splitlines()
    return done, said, loaded


@pytest.mark.slow
def test_make_review_runs_without_setting_the_project_up():
    """make_review's work is all in the Django-free producers' wing: manage.py runs it with empty
    settings, even where the environment names the project's, and sets no app up — neither the
    project's settings (nor Celery with them) nor its models, admin, API framework or database
    driver are imported. A refusal is still the command's."""
    done, said, loaded = loaded_by(["make_review", "--output", "unused"])
    assert done.returncode == 2
    assert said[-1] == "CommandError: --config is required"
    assert loaded == "False"


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["fetch_review", "make_difficulty", "reproduce_defect", "synthesise_source", "validate_fix"],
)
def test_the_other_producers_run_without_setting_the_project_up(name):
    """make_difficulty and the curators' tools the same way: their own usage error, and nothing
    of the project set up."""
    done, said, loaded = loaded_by([name])
    assert done.returncode == 2
    assert said[-1].startswith(f"manage.py {name}: error: the following arguments are required")
    assert loaded == "False"


def test_through_call_command_the_callers_process_is_left_alone():
    frozen, thresholds = gc.get_freeze_count(), gc.get_threshold()
    with pytest.raises(CommandError):
        call_command("make_review", "--output", "unused")
    assert (gc.get_freeze_count(), gc.get_threshold()) == (frozen, thresholds)
