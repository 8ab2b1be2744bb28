"""Hostile Atlas answers, from a local test server: a body dripped a byte at a time, listings
whose pages loop or never end, answers too large one by one and all together, redirects to
another origin, and names that would lead out of the output (review ids, artifact paths). The
one Atlas client every tool uses refuses each in one line, and nothing is written outside."""

# The fixtures are imported by name, so each test's parameters redefine them.
# ruff: noqa: F811

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.management import CommandError, call_command

from reviews.production.runtime.atlas_client import AtlasClient
from reviews.production.runtime.errors import ReviewProductionError
from tests.production.conftest import (  # noqa: F401 - fixtures used by name
    SOURCE_ID,
    _native_bytecode_cache,
    api_key,
    bytecode_cache,
    checkout,
    model_server,
    session_checkout,
    write_config,
)

REVIEW_ID = "a" * 64
Route = Callable[[BaseHTTPRequestHandler], None]


class HostileAtlas:
    """A server answering each path (query included) with its route; ``asked`` lists every
    request; ``release`` ends any answer held open."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.asked: list[str] = []
        self.release = threading.Event()
        atlas = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                atlas.asked.append(self.path)
                route = atlas.routes.get(self.path)
                if route is None:
                    self.send_error(404)
                else:
                    route(self)

            def log_message(self, *_args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> HostileAtlas:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_exc) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def body(data: bytes, *, status: int = 200, headers: dict[str, str] | None = None) -> Route:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        for name, value in {"Content-Length": str(len(data)), **(headers or {})}.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    return answer


def as_json(value) -> Route:
    return body(json.dumps(value).encode(), headers={"Content-Type": "application/json"})


@pytest.fixture
def atlas() -> Iterator[HostileAtlas]:
    with HostileAtlas() as server:
        yield server


def refusal(call: Callable[[], object]) -> str:
    with pytest.raises(ReviewProductionError) as refused:
        call()
    assert "\n" not in str(refused.value)
    return str(refused.value)


def test_a_dripped_answer_ends_at_the_deadline(atlas):
    def drip(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        handler.wfile.write(b"{")
        handler.wfile.flush()
        atlas.release.wait()  # the rest never comes while the client waits

    atlas.routes[f"/api/reviews/{REVIEW_ID}/"] = drip
    with AtlasClient(atlas.url, timeout=1) as client:
        assert refusal(lambda: client.review(REVIEW_ID)) == (
            f"Cannot read {atlas.url}/api/reviews/{REVIEW_ID}/: no complete answer within the "
            "1 s deadline"
        )


def test_listing_pages_that_loop_or_never_end_are_refused(atlas):
    first = "/api/reviews/?source=S"
    atlas.routes[first] = as_json({"results": [], "next": f"{atlas.url}/api/reviews/?source=S&p=1"})
    atlas.routes["/api/reviews/?source=S&p=1"] = as_json({"results": [], "next": atlas.url + first})
    with AtlasClient(atlas.url) as client:
        assert refusal(lambda: client.review_pool("S")) == (
            f"Cannot read {atlas.url}{first}: its pages lead back to {atlas.url}{first}"
        )
    for page in range(1, 10):
        following = f"/api/reviews/?source=S&p={page + 1}"
        atlas.routes[f"/api/reviews/?source=S&p={page}"] = as_json(
            {"results": [{"id": str(page)}], "next": atlas.url + following}
        )
    atlas.routes[first] = as_json({"results": [], "next": "/api/reviews/?source=S&p=1"})
    with AtlasClient(atlas.url, max_pages=5) as client:
        assert refusal(lambda: client.review_pool("S")) == (
            f"Cannot read {atlas.url}{first}: more than 5 pages"
        )
    assert len(atlas.asked) == 2 + 5


def review_with(atlas: HostileAtlas, artifacts: dict[str, bytes]) -> None:
    atlas.routes[f"/api/reviews/{REVIEW_ID}/"] = as_json(
        {
            "id": REVIEW_ID,
            "artifacts": [
                {"path": path, "sha256": hashlib.sha256(data).hexdigest()}
                for path, data in artifacts.items()
            ],
        }
    )
    for path, data in artifacts.items():
        atlas.routes[f"/api/reviews/{REVIEW_ID}/artifacts/{path}"] = body(data)


def test_answers_too_large_one_by_one_or_all_together_are_refused(atlas, tmp_path):
    review_with(atlas, {"big.bin": b"x" * 2001})
    with AtlasClient(atlas.url, max_bytes=2000) as client:
        assert refusal(lambda: client.fetch_review(review_id=REVIEW_ID, output=tmp_path / "a")) == (
            f"Cannot read {atlas.url}/api/reviews/{REVIEW_ID}/artifacts/big.bin: the answer "
            "declares 2,001 bytes, more than the 2,000 allowed"
        )
    review_with(atlas, {f"part-{n}.bin": b"x" * 1500 for n in range(4)})
    with AtlasClient(atlas.url, max_bytes=2000, max_total_bytes=4000) as client:
        assert refusal(lambda: client.fetch_review(review_id=REVIEW_ID, output=tmp_path / "b")) == (
            f"Cannot read {atlas.url}/api/reviews/{REVIEW_ID}/artifacts/part-2.bin: the Atlas's "
            "answers passed 4,000 bytes in all, more than any review holds"
        )


def test_redirects_are_followed_on_the_atlas_only(atlas):
    with HostileAtlas() as elsewhere:
        elsewhere.routes[f"/api/reviews/{REVIEW_ID}/"] = as_json({"id": REVIEW_ID})
        atlas.routes[f"/api/reviews/{REVIEW_ID}/"] = body(
            b"", status=302, headers={"Location": f"{elsewhere.url}/api/reviews/{REVIEW_ID}/"}
        )
        with AtlasClient(atlas.url) as client:
            assert refusal(lambda: client.review(REVIEW_ID)) == (
                f"Cannot read {atlas.url}/api/reviews/{REVIEW_ID}/: the Atlas redirected to "
                f"another origin (http://127.0.0.1:{elsewhere.server.server_port}), which is "
                "not followed"
            )
        assert elsewhere.asked == []
    # On its own origin a redirect is followed.
    atlas.routes[f"/api/reviews/{REVIEW_ID}/"] = body(
        b"", status=301, headers={"Location": f"/moved/{REVIEW_ID}/"}
    )
    atlas.routes[f"/moved/{REVIEW_ID}/"] = as_json({"id": REVIEW_ID})
    with AtlasClient(atlas.url) as client:
        assert client.review(REVIEW_ID) == {"id": REVIEW_ID}


def fetch(atlas: HostileAtlas, output: Path) -> str:
    with pytest.raises(CommandError) as refused:
        call_command(
            "fetch_review", "--atlas", atlas.url, "--review-id", REVIEW_ID,
            "--output", str(output), stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    return str(refused.value)


@pytest.mark.parametrize(
    ("artifacts", "message"),
    [
        (
            {"a": b"1", "a/b": b"2"},
            "The Atlas lists artifact a twice, or as a file and a folder",
        ),
        (
            {"n" * 300: b"1"},
            "The Atlas lists an artifact path too long for a file system: " + "n" * 80 + "…",
        ),
        (
            {"../escaped": b"1"},
            "The Atlas lists an unsafe artifact path: {'path': '../escaped', 'sha256': "
            f"'{hashlib.sha256(b'1').hexdigest()}'}}",
        ),
    ],
    ids=["colliding", "over-long", "traversal"],
)
def test_fetch_review_refuses_artifact_names_in_one_line(atlas, tmp_path, artifacts, message):
    review_with(atlas, artifacts)
    output = tmp_path / "fetched" / "copy"
    output.parent.mkdir()
    assert fetch(atlas, output) == message
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["fetched"]
    assert not [path for path in atlas.asked if "/artifacts/" in path]


@pytest.mark.slow
def test_a_pool_review_id_that_leads_out_of_the_output_is_refused(atlas, tmp_path, write_config):
    """``synthesise_source --atlas`` against a pool listing ``../../escaped-pool``: refused
    before anything is fetched, nothing written anywhere."""
    escaped = "../../escaped-pool"
    quoted = "..%2F..%2Fescaped-pool"
    source = quote(SOURCE_ID, safe="")
    atlas.routes[f"/api/sources/{source}/"] = as_json({"id": SOURCE_ID, "dataset_revision": "r1"})
    atlas.routes[f"/api/reviews/?source={source}"] = as_json(
        {"results": [{"id": escaped, "kind": "rating"}], "next": None}
    )
    atlas.routes[f"/api/reviews/{quoted}/"] = as_json({"id": escaped, "artifacts": []})
    config = write_config()
    work = tmp_path / "work" / "deep"
    work.mkdir(parents=True)
    output = work / "synthesis"
    with pytest.raises(CommandError) as refused:
        call_command(
            "synthesise_source", "--atlas-id", SOURCE_ID, "--config", str(config), "--atlas",
            atlas.url, "--output", str(output), stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    assert str(refused.value) == (
        f"The review pool names a review id that is no folder name: {escaped!r}"
    )
    assert list((tmp_path / "work").rglob("*")) == [work]
    assert f"/api/reviews/{quoted}/" not in atlas.asked
