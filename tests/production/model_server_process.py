"""The tests' model server as a process of its own, for a script that starts and stops its
server (``scripts/real_server_check.py --server-command``).

It answers as ``ReviewModel`` does but holds every chat request (a call in flight that never
ends, as a one-slot server busy generating), prints ``pid N`` once serving and ``held N`` as each
request is held, so a test waits on those lines, never on time. ``--ignore-term`` makes it ignore
SIGTERM, as a server finishing a generation does, so only SIGKILL ends it.
"""

from __future__ import annotations

import argparse
import os
import signal

from tests.model_server import ModelServer
from tests.production.review_model import ReviewModel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ignore-term", action="store_true")
    options = parser.parse_args()
    if options.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    server = ModelServer(default=ReviewModel())
    server.port = options.port
    server.hold()
    server.start()
    print(f"pid {os.getpid()}", flush=True)
    held = 0
    while True:
        now = server.wait_for_flight(
            lambda flight, seen=held: flight.held > seen, what="a request", seconds=None
        )
        held = now.held
        print(f"held {held}", flush=True)


if __name__ == "__main__":
    main()
