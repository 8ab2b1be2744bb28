"""The live server's in-flight requests that browser tests' teardown waits on."""

from __future__ import annotations

import threading
import urllib.request

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_started

from tests.live_requests import InFlight


@pytest.fixture
def tracker():
    counted = InFlight()
    request_started.connect(counted.started, weak=False, dispatch_uid="test-in-flight")
    yield counted
    request_started.disconnect(dispatch_uid="test-in-flight")


def test_the_wait_holds_until_the_answering_thread_ends(tracker):
    release = threading.Event()
    started = threading.Event()

    def serve() -> None:
        tracker.started(sender=WSGIHandler)
        started.set()
        release.wait()

    server = threading.Thread(target=serve)
    server.start()
    started.wait()
    with pytest.raises(AssertionError, match="still answered 1 request"):
        tracker.wait_until_quiet(seconds=0)
    release.set()
    tracker.wait_until_quiet()
    assert not server.is_alive()


def test_the_live_servers_requests_are_tracked_and_the_test_clients_are_not(
    tracker, client, live_server
):
    assert client.get("/").status_code == 200  # the test client answers in this thread
    assert tracker.tracked() == 0
    with urllib.request.urlopen(live_server.url + "/") as response:
        assert response.status == 200
    assert tracker.tracked() == 1
    tracker.wait_until_quiet()
    assert tracker.tracked() == 0
