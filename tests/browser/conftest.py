"""The browser tests' screenshot helper (PNGs under test-artifacts/); the Chromium session and the
page fixtures live in tests/browser/session.py, registered by the root conftest."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture
def screenshot() -> Callable[..., Path]:
    def save(page, name: str, *, full_page: bool = False) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return save
