"""First paint of the pages people open: DOMContentLoaded and first contentful paint of the
catalog and of the demo's review pages in the system Chromium, with the size of their HTML and
their DOM.

    python benchmarks/page_load.py [--repeat 15] [--output DIR]

The site is what `make demo` serves, in a fresh ``var/`` (a temporary directory: SQLite, the
packaged catalog synced, the example reviews published with ``publish_examples``) and the same
development server. Each page is loaded ``--repeat`` times, each time in a new browser context (a
first visit: nothing cached); the median DOMContentLoaded (navigation start to the end of the
DOMContentLoaded handlers, so the deferred scripts included) goes to the table against its floor,
measured in the same run: the same answer given over HTTP by a replay of the server
(``benchmarks/replay_server.py``: the page's status, headers and bytes kept from the server's
first answer; its stylesheets and scripts still fetched from the server). So the ratio is what
the server's work for the page adds; the absolute ceilings are the issue's: the catalog under last
round's 304 ms, a review page under 150 KB of HTML. Needs no PostgreSQL.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import replay_server, servers  # noqa: E402
from benchmarks.cold_start import fresh_env  # noqa: E402
from benchmarks.report import Row, emit, emit_limit  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
CATALOG_CEILING_MS = 304  # issue 34: the catalog's DOMContentLoaded of the round before
REVIEW_PAGE_CEILING_KB = 150  # issue 34: the demo's review pages
FLOOR_GOAL = 1.5
# The first contentful paint may come after the load event on a busy machine: wait for it.
TIMING = """() => new Promise(resolve => {
  const entry = performance.getEntriesByType("navigation")[0];
  const answer = paint => resolve({dcl: entry.domContentLoadedEventEnd, fcp: paint.startTime,
    bytes: entry.decodedBodySize, elements: document.getElementsByTagName("*").length});
  new PerformanceObserver((list, observer) => {
    const painted = list.getEntriesByName("first-contentful-paint")[0];
    if (painted) { observer.disconnect(); answer(painted); }
  }).observe({type: "paint", buffered: true});
})"""


def prepare(*, var: Path, env: dict[str, str], log: Path) -> list[dict]:
    """Migrate, sync the packaged catalog and publish the examples, as `make demo` does."""
    manage = [sys.executable, str(ROOT / "manage.py")]
    with log.open("ab") as output:
        subprocess.run([*manage, "run_catalog", "--no-serve"], cwd=ROOT, env=env, check=True,
                       stdout=output, stderr=subprocess.STDOUT)  # fmt: skip
        examples = subprocess.run(
            [*manage, "publish_examples", "--output", str(var / "examples")],
            cwd=ROOT, env=env, check=True, stdout=subprocess.PIPE, stderr=output,
        )  # fmt: skip
    return json.loads(examples.stdout)


def review_paths(*, examples: list[dict]) -> list[tuple[str, str]]:
    """(label, path) of each published example review, in publication order, once each."""
    seen: dict[str, str] = {}
    for item in examples:
        review_id = item.get("review_id")
        if review_id and review_id not in seen:
            seen[review_id] = f"{item['atlas_id']} {item['kind']} {review_id[:12]}"
    return [(label, f"/reviews/{review_id}/") for review_id, label in seen.items()]


def load(*, browser, url: str) -> dict:
    """One first visit of ``url``: a new browser context, nothing cached."""
    context = browser.new_context()
    try:
        page = context.new_page()
        response = page.goto(url, wait_until="load")
        if response is None or response.status != 200:
            raise RuntimeError(f"{url} answered {response.status if response else 'nothing'}")
        return page.evaluate(TIMING)
    finally:
        context.close()


@contextmanager
def replayed(*, server: servers.Server, path: str, scratch: Path) -> Iterator[str]:
    """The URL of ``path`` on a replay of ``server``'s answer for it."""
    port = servers.free_port()
    command = replay_server.command(origin_port=server.port, port=port, page=path)
    replay = servers.start(
        name="replay", command=command, port=port, env=dict(os.environ), path=path,
        log=scratch / "replay.log",
    )  # fmt: skip
    try:
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        replay.stop()


def measure(*, browser, server: servers.Server, path: str, repeat: int) -> dict:
    url = f"http://127.0.0.1:{server.port}{path}"
    with (
        tempfile.TemporaryDirectory(prefix="atlas-page-replay-") as scratch,
        replayed(server=server, path=path, scratch=Path(scratch)) as floor_url,
    ):
        # Not timed: the server's first answer compiles templates; the replay's starts its process.
        load(browser=browser, url=url)
        load(browser=browser, url=floor_url)
        pages, floors = [], []
        for _ in range(repeat):  # interleaved, so both see the same machine load
            pages.append(load(browser=browser, url=url))
            floors.append(load(browser=browser, url=floor_url))
    return {
        "dcl": statistics.median(sample["dcl"] for sample in pages),
        "floor": statistics.median(sample["dcl"] for sample in floors),
        "fcp": statistics.median(sample["fcp"] for sample in pages),
        "fcp_floor": statistics.median(sample["fcp"] for sample in floors),
        "bytes": pages[-1]["bytes"],
        "elements": pages[-1]["elements"],
    }


def report(*, figure: str, found: dict, ceiling_ms: float | None) -> None:
    emit(row=Row(benchmark="page_load", figure=f"{figure}: DOMContentLoaded", value=found["dcl"],
                 unit="ms", baseline="same HTML replayed", baseline_value=found["floor"],
                 goal_operator="<=", goal=FLOOR_GOAL))  # fmt: skip
    # What a person sees first: the page's first text or table row painted (no goal of its own).
    emit(row=Row(benchmark="page_load", figure=f"{figure}: first contentful paint",
                 value=found["fcp"], unit="ms", baseline="same HTML replayed",
                 baseline_value=found["fcp_floor"]))  # fmt: skip
    if ceiling_ms is not None:
        emit_limit(benchmark="page_load", figure=f"{figure}: DOMContentLoaded (last round's)",
                   value=found["dcl"], unit="ms", at_most=ceiling_ms)  # fmt: skip
    emit(row=Row(benchmark="page_load", figure=f"{figure}: DOM elements",
                 value=found["elements"], unit="elements"))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--output", type=Path, help="keep the temporary var/ and logs here")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="atlas-page-load-") as scratch:
        var = args.output or Path(scratch)
        var.mkdir(parents=True, exist_ok=True)
        env, log = fresh_env(var=var), var / "server.log"
        examples = prepare(var=var, env=env, log=log)
        port = servers.free_port()
        command = [sys.executable, str(ROOT / "manage.py"), "runserver", "--noreload",
                   f"127.0.0.1:{port}"]  # fmt: skip
        server = servers.start(
            name="make demo", command=command, port=port, env=env, path="/", log=log
        )
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
                found = measure(browser=browser, server=server, path="/", repeat=args.repeat)
                report(figure="catalog /", found=found, ceiling_ms=CATALOG_CEILING_MS)
                for label, path in review_paths(examples=examples):
                    found = measure(browser=browser, server=server, path=path, repeat=args.repeat)
                    report(figure=f"review {label}", found=found, ceiling_ms=None)
                    emit_limit(benchmark="page_load", figure=f"review {label}: HTML",
                               value=found["bytes"] / 1024, unit="KB",
                               at_most=REVIEW_PAGE_CEILING_KB)  # fmt: skip
                browser.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
