"""``python -m reviews.production.examples.serve [--port 8009]``: the demo's scripted model, served
until Ctrl-C, so a newcomer can run the README's "Curating a defect" steps on ``make demo``'s
checkout (``var/examples/``): set a config's ``model.base_url`` (and each difficulty role's) to the
URL it prints. It answers every model name as ``make demo``'s solver and judges do — totals written
with a thousands separator, the task summing to 2,011 answered off by one, every opinion labelled as
an example — and never calls anything else."""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading

from atlas.rules.example_notice import EXAMPLE_NOTICE
from reviews.production.examples.chat_server import ChatServer
from reviews.production.examples.review_model import ReviewModel

# make demo's gsm8k rows sum to 2,006, 2,011 and 2,016; its solver gets the second wrong (the
# review's saved wrong answer, a control of validate_fix).
DEMO_WRONG_TOTAL = 2011


def demo_model() -> ReviewModel:
    """make demo's solver and judges: separators, one wrong total, opinions labelled."""
    return ReviewModel(
        separators=True, wrong_totals=frozenset({DEMO_WRONG_TOTAL}), notice=EXAMPLE_NOTICE
    )


def main(argv: list[str] | None = None, *, stop: threading.Event | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8009, help="port on 127.0.0.1 (0: any)")
    options = parser.parse_args(argv)
    stop = stop or threading.Event()
    # Served until stopped: it records no request (each body would stay in memory).
    with ChatServer(default=demo_model(), port=options.port, keep=0) as server:
        print(f"Scripted example model at {server.base_url} (Ctrl-C stops it)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
