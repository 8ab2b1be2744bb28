"""What the production tools' commands (make_review, make_difficulty) share as Django shells:
their progress stream and how a refusal becomes an exit status."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO, cast

from django.core.management.base import BaseCommand, CommandError

from reviews.production.errors import ReviewProductionError, UsageError
from reviews.production.terminal import shown


def progress_stream(command: BaseCommand) -> TextIO:
    """The command's raw stderr: progress lines are written as they come, unstyled."""
    return cast(TextIO, command.stderr._out)


@contextmanager
def refusals_as_command_errors() -> Iterator[None]:
    """A refusal prints its one-line reason; a usage error exits 2, any other refusal 1."""
    try:
        yield
    except ReviewProductionError as exc:
        # The reason may quote what a dataset or a server handed in (a task id, a server's
        # words): its control characters are shown as escapes, never sent to the terminal.
        reason = shown(str(exc))
        raise CommandError(reason, returncode=2 if isinstance(exc, UsageError) else 1) from None
