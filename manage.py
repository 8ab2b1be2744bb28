#!/usr/bin/env python
"""Django's command-line utility for RL Data Atlas."""

import os
import sys

INTERRUPTED_STATUS = 130  # the shell's status for a process ended by SIGINT


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    try:
        from django.core.management import execute_from_command_line

        execute_from_command_line(sys.argv)
    except KeyboardInterrupt:
        # A Ctrl-C while Django and the command load (a second or two on a busy machine) is one
        # line too, like one during a command's work, never a traceback of the import under way.
        sys.stderr.write("Interrupted\n")
        sys.exit(INTERRUPTED_STATUS)


if __name__ == "__main__":
    main()
