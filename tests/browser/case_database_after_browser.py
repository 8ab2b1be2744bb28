"""Not collected by the suite (its name does not start with ``test_``): the case that
``test_session_teardown.py`` runs in a pytest of its own, in the order a worker can run its
tests — the database first, then a browser test, then the database again while the browser's
session is still open."""

from atlas.models import Source


def test_the_database_first(db):
    assert Source.objects.count() == 0


def test_then_the_browser(browser, db):
    page = browser.new_page()
    page.set_content("<p>open</p>")
    assert page.text_content("p") == "open"
    page.close()
    assert Source.objects.count() == 0


def test_then_the_database_again(db):
    Source.objects.create(id="MarinSkyRL:teardown", origin="MarinSkyRL", payload={})
    assert Source.objects.count() == 1
