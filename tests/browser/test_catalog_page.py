"""The catalog page in the system Chromium, on the real packaged inventory."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User

from atlas.models import RefreshRun, Source
from atlas.services.sync import sync_catalog

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def inventory(packaged_catalog, settings, transactional_db):
    settings.ATLAS_CATALOG_PATH = packaged_catalog
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    return Source.objects.filter(active=True)


def matching(page) -> int:
    return int(page.locator("#result-count").get_attribute("data-matching"))


def row_ids(page) -> list[str]:
    return page.locator("tbody tr[data-source-id]").evaluate_all(
        "rows => rows.map(r => r.dataset.sourceId)"
    )


def wait_for_matching(page, count: int) -> None:
    page.wait_for_function(
        "n => document.getElementById('result-count').dataset.matching === String(n)", arg=count
    )


def wait_for_url(page, pattern: str) -> None:
    page.wait_for_url(re.compile(pattern))
    page.wait_for_load_state("networkidle")


def test_loads_searches_and_switches_tabs(live_server, page, inventory, screenshot):
    page.goto(live_server.url + "/")
    available = inventory.filter(status="Available").count()
    assert page.locator("#metric-sources").inner_text() == str(available)
    assert page.locator("#metric-status").inner_text() == "Saved snapshot"
    assert matching(page) == available and len(row_ids(page)) == 100
    screenshot(page, "catalog-public", full_page=False)

    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "search"
    page.keyboard.type("gsm8k")
    wait_for_url(page, r"/\?q=gsm8k$")
    expected = inventory.filter(search_text__contains="gsm8k").exclude(status="Excluded").count()
    assert matching(page) == expected and expected > 0
    assert page.locator("#live-count").inner_text().startswith(f"{expected} of ")

    page.get_by_role("link", name=re.compile(r"^Task Trove \d+")).click()
    wait_for_url(page, r"/\?q=gsm8k&origin=Task\+Trove$")
    current = page.locator('.tabs a[aria-current="page"]')
    assert current.inner_text().startswith("Task Trove")
    page.go_back()
    wait_for_url(page, r"/\?q=gsm8k$")
    wait_for_matching(page, expected)
    assert not page.locator('.tabs a[aria-current="page"]').inner_text().startswith("Task")
    assert page.locator("#search").input_value() == "gsm8k"


def test_filters_toggles_sorting_and_reset(live_server, page, inventory):
    page.goto(live_server.url + "/")
    page.select_option("#filter-type", "Agentic")
    wait_for_url(page, r"/\?type=Agentic$")
    agentic = inventory.filter(type="Agentic").exclude(status="Excluded").count()
    assert matching(page) == agentic

    page.check("#show-excluded")
    wait_for_url(page, r"/\?type=Agentic&show_excluded=1$")
    assert matching(page) == inventory.filter(type="Agentic").count()
    assert (
        page.locator("#export").get_attribute("href") == "/export.csv?type=Agentic&show_excluded=1"
    )

    page.select_option("#filter-quality", "bad")
    wait_for_url(page, r"quality=bad&show_bad=1")
    assert page.is_checked("#show-bad")
    page.uncheck("#show-bad")
    wait_for_url(page, r"/\?type=Agentic&show_excluded=1$")
    assert page.locator("#filter-quality").input_value() == ""

    page.locator("th a.sort-link", has_text="Input rows").click()
    wait_for_url(page, r"sort=rows$")
    assert page.locator("th", has_text="Input rows").get_attribute("aria-sort") == "ascending"
    page.locator("th a.sort-link", has_text="Input rows").click()
    wait_for_url(page, r"sort=-rows$")
    counts = [s.task_count for s in inventory.filter(type="Agentic") if s.task_count is not None]
    first = page.locator("tbody tr").first.locator("td.num").inner_text()
    assert first == f"{max(counts):,}"

    page.get_by_role("link", name="Reset").click()
    page.wait_for_url(live_server.url + "/")
    assert page.locator("#filter-type").input_value() == ""
    assert not page.is_checked("#show-excluded")


def test_drawer_opens_and_closes_with_the_keyboard(live_server, page, inventory, screenshot):
    page.goto(live_server.url + "/")
    first_id = row_ids(page)[0]
    source = inventory.get(pk=first_id)
    button = page.get_by_role("link", name=f"Details for {source.display_name}")
    button.focus()
    page.keyboard.press("Enter")
    dialog = page.locator("#details-drawer")
    dialog.wait_for(state="visible")
    page.locator("#drawer-title").wait_for()
    assert "SOURCE DETAILS" in dialog.inner_text()
    assert source.id in dialog.inner_text()
    assert page.evaluate("document.activeElement.id") == "drawer-close"
    screenshot(page, "catalog-drawer")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") != "search"
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == (
        f"Details for {source.display_name}"
    )


def test_export_downloads_the_current_view(live_server, page, inventory):
    page.goto(live_server.url + "/?origin=MarinSkyRL&sort=-rows&page_size=25")
    with page.expect_download() as download_info:
        page.click("#export")
    download = download_info.value
    assert download.suggested_filename == "rl-data-atlas_origin-MarinSkyRL.csv"
    content = Path(download.path()).read_bytes()
    rows = list(csv.reader(io.StringIO(content.decode("utf-8"), newline="")))
    assert rows[0][:3] == ["Source name", "Catalog", "Dataset"]
    assert len(rows) - 1 == matching(page) > 25
    assert {row[1] for row in rows[1:]} == {"MarinSkyRL"}
    on_page = [inventory.get(pk=pk).display_name for pk in row_ids(page)]
    assert [row[0].lstrip("'") for row in rows[1:26]] == on_page


def test_works_without_javascript(live_server, browser, inventory):
    context = browser.new_context(java_script_enabled=False)
    tab = context.new_page()
    tab.goto(live_server.url + "/")
    tab.fill("#search", "math")
    tab.click("#apply")
    tab.wait_for_load_state()
    assert "q=math" in tab.url
    assert "math" in tab.locator("#search").input_value()
    assert tab.locator("tbody tr[data-source-id]").count() == int(
        tab.locator("#result-count").get_attribute("data-matching")
    )
    # Without the script the details control opens the source page (never the JSON API).
    href = tab.locator("a.info").first.get_attribute("href")
    assert href.startswith("/sources/")
    tab.locator("a.info").first.click()
    tab.wait_for_load_state()
    assert "/sources/" in tab.url and tab.locator("h1").count() == 1
    context.close()


def test_curator_signs_in_and_refreshes(live_server, page, inventory, screenshot):
    user = User.objects.create_user("curator", password="browser-pass-1", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="refresh_catalog"))
    page.goto(live_server.url + "/")
    page.get_by_role("link", name="Curator sign in").click()
    page.fill("#id_username", "curator")
    page.fill("#id_password", "browser-pass-1")
    page.get_by_role("button", name=re.compile("Log in|Sign in")).click()
    page.wait_for_url(live_server.url + "/")
    assert "Signed in as curator" in page.locator(".masthead").inner_text()
    # Signed in, the curator's tools are one click away.
    tools = page.get_by_role("navigation", name="Curator tools")
    assert tools.get_by_role("link", name="Admin").get_attribute("href") == "/admin/"
    queue = tools.get_by_role("link", name="Work queue")
    assert queue.get_attribute("href") == "/admin/reviews/review/queue/"
    banner = page.locator("#sync-banner")
    page.wait_for_function(
        "() => document.getElementById('sync-banner').textContent"
        ".endsWith('Packaged task-curation catalog loaded.')"
    )
    assert page.locator("#metric-status").inner_text() == "Up to date"
    page_open = RefreshRun.objects.order_by("-id").first()
    assert page_open.trigger == "page_open" and page_open.outcome == "unchanged"

    page.click("#refresh")
    page.wait_for_function(
        "() => !document.getElementById('refresh').disabled && "
        "document.getElementById('sync-banner').textContent.endsWith('catalog loaded.')"
    )
    runs = list(RefreshRun.objects.order_by("id").values_list("trigger", "forced"))
    assert runs[-1] == ("button", True)
    # The forced sync of an unchanged catalog says so, in words.
    assert banner.inner_text() == (
        "MarinSkyRL: unchanged  ·  Task Trove: unchanged  ·  Packaged task-curation catalog loaded."
    )
    screenshot(page, "catalog-curator")

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(live_server.url + "/")
    assert page.get_by_role("link", name="Curator sign in").is_visible()
