"""The real-container tier: real Harbor trials in a real engine (``-m harbor`` selects it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harbor.machinery import Machinery, load, unavailable_reason
from tests.model_server import ModelServer


@pytest.fixture(scope="session")
def machinery() -> Machinery:
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    return load()


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server
