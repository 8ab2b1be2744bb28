"""What the catalog's browser tests share: the real packaged inventory with one measured source,
a page at each size people use (1440×900 and 390×844) and the checks they repeat."""

from __future__ import annotations

import pytest

from atlas.models import Source
from atlas.services.sync import sync_catalog
from tests.browser.axe import describe, violations

DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
SIZES = [pytest.param(DESKTOP, id="1440x900"), pytest.param(PHONE, id="390x844")]
MEASURED = "MarinSkyRL:gsm8k"


@pytest.fixture
def inventory(packaged_catalog, settings, transactional_db):
    settings.ATLAS_CATALOG_PATH = packaged_catalog
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    # One measured source whose Small model solved nothing: its bar must still show.
    summary = {
        "status": "current",
        "text": "Current: a 0/4 solved",
        "models": [
            {"size": "small", "model": "Qwen/Qwen3-Coder-30B-A3B-Instruct", "solved": 0,
             "verified": 4, "measurement_status": "current"},
            {"size": "large", "model": "Qwen/Qwen3.5-122B-A10B", "solved": 2, "verified": 4,
             "measurement_status": "current"},
        ],
    }  # fmt: skip
    Source.objects.filter(id=MEASURED).update(
        effective_quality="good", display_review_id="c" * 64, difficulty_summary=summary,
        difficulty_status="current", display_review_is_example=True,
    )  # fmt: skip
    return Source.objects.filter(active=True)


@pytest.fixture(params=SIZES)
def sized(request, browser):
    context = browser.new_context(viewport=request.param)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.script_errors = errors
    tab.viewport = request.param
    yield tab
    context.close()


def matching(page) -> int:
    return int(page.locator("#result-count").get_attribute("data-matching"))


def no_blocking_violations(page) -> None:
    found = violations(page)
    assert found == [], describe(found)


def open_filters(page) -> None:
    """Below 768 px the filters fold into a disclosure: open it as a person would."""
    if page.locator("#filter-summary").is_visible() and not page.evaluate(
        "document.getElementById('filter-panel').open"
    ):
        page.locator("#filter-summary").click()
