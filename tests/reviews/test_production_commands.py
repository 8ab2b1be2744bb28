"""What the production tools' commands share: the progress stream on the command's stderr."""

from __future__ import annotations

import io

from django.core.management.base import BaseCommand

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
