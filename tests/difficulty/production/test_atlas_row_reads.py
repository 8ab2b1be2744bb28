"""make_difficulty's ``source.atlas_url`` read goes through the Atlas client every tool uses: a
deadline for the whole read, a size cap, and one line (never a traceback) for every failure."""

from __future__ import annotations

import pytest

from difficulty.production.errors import DifficultyProductionError
from difficulty.production.qualification import ROW_MAX_BYTES, atlas_row
from tests.model_server import ModelServer, Reply

ATLAS_ID = "MarinSkyRL:gsm8k"
ROW_PATH = "/api/sources/MarinSkyRL%3Agsm8k/"


def read(server: ModelServer | str, **kwargs) -> str:
    base = server if isinstance(server, str) else server.base_url.removesuffix("/v1")
    source = {"source_id": ATLAS_ID, "atlas_url": base}
    with pytest.raises(DifficultyProductionError) as failure:
        atlas_row(source=source, atlas_id=ATLAS_ID, **kwargs)
    return str(failure.value)


def test_a_row_is_read_from_the_api():
    with ModelServer() as server:
        server.routes[ROW_PATH] = Reply(body={"id": ATLAS_ID, "quality": "good"})
        source = {"source_id": ATLAS_ID, "atlas_url": server.base_url.removesuffix("/v1") + "/"}
        assert atlas_row(source=source, atlas_id=ATLAS_ID)["quality"] == "good"


def test_a_trickled_answer_ends_at_the_deadline():
    with ModelServer() as server:
        server.routes[ROW_PATH] = Reply(body={"id": ATLAS_ID, "x": "y" * 100}, trickle_seconds=0.1)
        # The whole answer would take over 10 s: the read ends at its deadline instead.
        message = read(server, timeout=1.0)
        url = f"{server.base_url.removesuffix('/v1')}{ROW_PATH}"
        assert message == (
            f"The Atlas row: Cannot read {url}: no complete answer within the 1 s deadline"
        )


@pytest.mark.parametrize("declared", [True, False])
def test_a_huge_answer_is_refused(declared):
    with ModelServer() as server:
        server.routes[ROW_PATH] = Reply(size_bytes=ROW_MAX_BYTES * 4, declare_length=declared)
        message = read(server)
        assert message.startswith("The Atlas row: Cannot read ")
        assert f"{ROW_MAX_BYTES:,}" in message and "\n" not in message


def test_errors_are_one_line():
    with ModelServer() as server:
        server.routes[ROW_PATH] = Reply(status=503, body={"error": "down"})
        assert read(server).endswith(": HTTP 503")
        server.routes[ROW_PATH] = Reply(body="not a row")
        assert "identifies a different source" in read(server)
        gone = server.base_url.removesuffix("/v1")
    # The server is gone: the connection is refused.
    message = read(gone)
    assert message.startswith("The Atlas row: Cannot read ") and "\n" not in message
    source = {"source_id": ATLAS_ID, "atlas_url": "ftp://atlas.example"}
    with pytest.raises(DifficultyProductionError, match="must be an http"):
        atlas_row(source=source, atlas_id=ATLAS_ID)
