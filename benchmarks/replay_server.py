"""A page's floor: the answer a server gave for a page, given again over HTTP without its work.

    python -c "from benchmarks.replay_server import main; main()" --origin 8000 --port 8001 --page /

(a helper of ``page_load.py``, which starts it so; like every helper here it holds no
``__main__`` block, which would make ``benchmarks/run.py`` take it for a benchmark; ``command()``
builds that line.)

At start, the page is asked of the origin once and its answer kept: status, headers (the security
policy and opener policy among them, which change how a browser loads the page) and bytes. Then
``--page`` is answered from memory and any other path (the page's stylesheets and scripts, the
JSON its scripts ask for) is passed to the origin each time, as a browser asks them of it. So a
browser gets the page over the same kind of connection as from the origin — HTTP/1.1 on the
loopback — with the same headers and the same assets, and the difference between the two is what
the origin's work for the page adds.

A document handed to the browser through an interception (Playwright's ``route.fulfill``) is not
that floor: it arrives whole and without the page's headers, and Chromium then parses it to the
end before its first paint on some loads and not on others, which made that floor bimodal (68 ms
in one sample, 195 ms in the next, for the same page) and its first paint later than the served
page's.
"""

from __future__ import annotations

import argparse
import http.client
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Headers that describe the origin's connection or are written again for each answer.
CONNECTION_HEADERS = frozenset(
    {"connection", "content-length", "date", "keep-alive", "server", "transfer-encoding"}
)

Answer = tuple[int, list[tuple[str, str]], bytes]


def ask(*, port: int, path: str) -> Answer:
    """The origin's answer for ``path``: status, the headers worth giving again, body."""
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        client.request("GET", path)
        response = client.getresponse()
        body = response.read()
        headers = [(name, value) for name, value in response.getheaders()
                   if name.lower() not in CONNECTION_HEADERS]  # fmt: skip
        return response.status, headers, body
    finally:
        client.close()


def write_answer(handler: BaseHTTPRequestHandler, answer: Answer) -> None:
    """``answer`` written by ``handler``, its length given (the connection stays open)."""
    status, headers, body = answer
    handler.send_response(status)
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def handler_for(*, origin_port: int, page: str, kept: Answer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the origin (Django's runserver) answers

        def do_GET(self) -> None:
            status, headers, body = (
                kept if self.path == page else ask(port=origin_port, path=self.path)
            )
            write_answer(self, (status, headers, body))

        def log_message(self, format: str, *args: object) -> None:
            return  # quiet: one line per request would be the benchmark's noise

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--origin", type=int, required=True, help="the origin server's port")
    parser.add_argument("--port", type=int, required=True, help="the port to answer on")
    parser.add_argument("--page", required=True, help="the page's path (with its query)")
    args = parser.parse_args()
    kept = ask(port=args.origin, path=args.page)
    if kept[0] != 200:
        parser.exit(1, f"replay_server: {args.page} answered {kept[0]} at the origin\n")
    handler = handler_for(origin_port=args.origin, page=args.page, kept=kept)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    server.daemon_threads = True
    server.serve_forever()


def command(*, origin_port: int, port: int, page: str) -> list[str]:
    """The process that replays ``page`` of the origin on ``port`` (run from the project root)."""
    return [sys.executable, "-c", "from benchmarks.replay_server import main; main()",
            "--origin", str(origin_port), "--port", str(port), "--page", page]  # fmt: skip
