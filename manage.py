#!/usr/bin/env python
"""Django's command-line utility for RL Data Atlas."""

import os
import sys

INTERRUPTED_STATUS = 130  # the shell's status for a process ended by SIGINT


def main() -> None:
    try:
        from reviews.management.production_commands import STANDALONE_COMMANDS, run_standalone

        # make_review needs neither the project's settings nor its apps: it runs without them
        # (see run_standalone). Shell completion goes through Django's own utility.
        standalone = sys.argv[1:2] and sys.argv[1] in STANDALONE_COMMANDS
        if standalone and "DJANGO_AUTO_COMPLETE" not in os.environ:
            run_standalone(argv=sys.argv)
            return
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        from django.core.management import execute_from_command_line

        execute_from_command_line(sys.argv)
    except KeyboardInterrupt:
        # A Ctrl-C while Django and the command load (a second or two on a busy machine) is one
        # line too, like one during a command's work, never a traceback of the import under way.
        sys.stderr.write("Interrupted\n")
        sys.exit(INTERRUPTED_STATUS)


if __name__ == "__main__":
    main()
