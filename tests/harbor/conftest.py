"""The real-container tier: real Harbor trials in a real engine (``-m harbor`` selects it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reviews.production.examples.marinskyrl import build_checkout
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


@pytest.fixture(scope="session")
def marinskyrl_checkout(tmp_path_factory) -> Path:
    """The MarinSkyRL-shaped checkout make_review requires for every native route."""
    return build_checkout(tmp_path_factory.mktemp("native") / "MarinSkyRL")
