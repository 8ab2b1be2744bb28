"""axe-core in the browser tests. The engine is the axe.min.js shipped by the PyPI package
axe-playwright-python (a dev dependency in uv.lock): installed with the environment, never fetched
when the tests run."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

BLOCKING = ("serious", "critical")


@cache
def axe_source() -> str:
    return resources.files("axe_playwright_python").joinpath("axe.min.js").read_text("utf-8")


def violations(page, *, impacts: tuple[str, ...] = BLOCKING) -> list[dict[str, Any]]:
    """axe's violations of the current page with the given impacts (serious and critical)."""
    if page.evaluate("typeof window.axe") != "object":
        # Evaluated through the DevTools protocol, so the page's CSP (no inline scripts) stays on.
        page.evaluate(axe_source())
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [item for item in result["violations"] if item["impact"] in impacts]


def describe(found: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"{item['id']} ({item['impact']}): {item['help']} — "
        + "; ".join(node["target"][0] if node["target"] else "?" for node in item["nodes"][:5])
        for item in found
    )
