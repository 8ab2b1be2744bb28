"""The API documentation (/api/docs/) in the system Chromium: a language, no link inside an
operation's toggle, colours and names axe accepts (no serious or critical violation) as it opens
and with an operation opened, tried out and the sign-in dialog shown; the catalog page's own data
endpoints are listed beside the API."""

from __future__ import annotations

import pytest

from tests.browser import axe

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_api_docs_are_accessible_as_they_open_and_when_used(live_server, page):
    page.goto(f"{live_server.url}/api/docs/")
    page.locator(".opblock").first.wait_for()
    assert page.locator("html").get_attribute("lang") == "en"
    assert page.locator(".opblock-summary-control a[href]").count() == 0  # no link in a button
    found = axe.violations(page)
    assert found == [], axe.describe(found)
    for operation in ("catalog_export_csv", "catalog_facet_counts"):
        assert page.locator(f"[id$='-{operation}']").count() == 1, operation
    sources = page.locator("[id$='-sources_list']")
    sources.locator(".opblock-summary-control").click()
    sources.locator(".try-out__btn").click()
    sources.locator(".execute").click()
    sources.locator(".responses-table .response-col_status", has_text="200").first.wait_for()
    page.locator(".btn.authorize").first.click()
    page.locator(".modal-ux").wait_for()
    found = axe.violations(page)
    assert found == [], axe.describe(found)
