"""What the production tools' commands (make_review, make_difficulty) share as Django shells:
their process when run from the command line, their progress stream and how a refusal becomes
an exit status."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from typing import TextIO, cast

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, OutputWrapper

from atlas.db.gc_pause import settle_loaded
from reviews.production.runtime.errors import ReviewProductionError, UsageError
from reviews.production.runtime.terminal import shown


class ProductionCommand(BaseCommand):
    """A production tool's command. Run from the command line (``run_from_argv``; never through
    ``call_command``, whose caller owns its process), the process settles what Django loaded
    before the run makes its thousands of records: a run's process then neither walks Django's
    objects at each full collection nor at exit, where that walk took 0.2-0.4 s of a 2-4 s
    make_review (see ``atlas.db.gc_pause.settle_loaded``)."""

    def run_from_argv(self, argv: list[str]) -> None:
        settle_loaded()
        super().run_from_argv(argv)


# Commands whose work is all in the Django-free producers' wing (reviews/production,
# difficulty/production): make_review, make_difficulty and the curators' tools, which talk to an
# Atlas only over HTTP. They read no setting, no model and no database, and check nothing of the
# project (``requires_system_checks = []``). ``manage.py`` runs them with empty settings instead
# of the project's.
STANDALONE_COMMANDS = {
    name: f"{app}.management.commands.{name}"
    for app, name in (
        ("reviews", "make_review"),
        ("reviews", "reproduce_defect"),
        ("reviews", "validate_fix"),
        ("reviews", "synthesise_source"),
        ("reviews", "fetch_review"),
        ("difficulty", "make_difficulty"),
    )
}


def run_standalone(*, argv: list[str]) -> None:
    """Run the standalone command ``argv[1]`` as ``manage.py`` would, but with empty settings and
    no app registry: setting the project up (its settings with Celery, every app's models, admin
    and API wiring, psycopg, DRF) was ~0.45 s of CPU before a 1.2 s make_review began, more than
    a third of its wall time from a fresh process. ``run_from_argv`` still parses the options,
    turns a ``CommandError`` into its exit status and freezes what was loaded."""
    settings.configure()
    command = import_module(STANDALONE_COMMANDS[argv[1]]).Command()
    command.run_from_argv(argv)


class ProgressStream:
    """A command's stderr as a plain text stream: progress lines are written as they come, with no
    line end added and unstyled (its ``write`` otherwise ends every write with a newline and, on a
    terminal, colours it as an error)."""

    def __init__(self, out: OutputWrapper) -> None:
        self.out = out

    def write(self, text: str) -> int:
        self.out.write(text, style_func=unstyled, ending="")
        return len(text)

    def flush(self) -> None:
        self.out.flush()

    def isatty(self) -> bool:
        return self.out.isatty()


def unstyled(text: str) -> str:
    return text


def progress_stream(command: BaseCommand) -> TextIO:
    """The command's stderr for the production tools' progress lines."""
    return cast(TextIO, ProgressStream(command.stderr))


INTERRUPTED = "Interrupted"
INTERRUPTED_STATUS = 130  # the shell's status for a process ended by SIGINT


@contextmanager
def refusals_as_command_errors() -> Iterator[None]:
    """A refusal prints its one-line reason; a usage error exits 2, an interruption 130, any
    other refusal 1. A Ctrl-C the tool did not word itself is one line too, never a traceback."""
    try:
        yield
    except ReviewProductionError as exc:
        # The reason may quote what a dataset or a server handed in (a task id, a server's
        # words): its control characters are shown as escapes, never sent to the terminal.
        reason = shown(str(exc))
        status = 2 if isinstance(exc, UsageError) else getattr(exc, "exit_status", 1)
        raise CommandError(reason, returncode=status) from None
    except KeyboardInterrupt:
        raise CommandError(INTERRUPTED, returncode=INTERRUPTED_STATUS) from None
