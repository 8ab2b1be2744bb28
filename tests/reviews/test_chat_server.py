"""The scripted OpenAI-compatible server the demo runs make_review against (and the tests' model
server builds on): it records requests, answers each model from its responder and lists them."""

from __future__ import annotations

import json
import socket
import threading

import httpx
import pytest

from atlas.rules.example_notice import EXAMPLE_NOTICE
from reviews.production.examples import serve
from reviews.production.examples.chat_server import ChatServer, RecordedRequest, Reply, completion
from tests.waiting import DEADLINE_SECONDS, wait_until


def test_it_answers_each_model_from_its_responder_and_records_requests():
    def echo(request: RecordedRequest) -> dict:
        return completion(f"echo: {request.user_text}", model=request.model or "")

    with ChatServer(default=lambda request: Reply(status=429, body={"error": "busy"})) as server:
        server.models["demo/solver"] = echo
        with httpx.Client(base_url=server.base_url) as client:
            answered = client.post(
                "/chat/completions",
                json={"model": "demo/solver", "messages": [{"role": "user", "content": "2+2"}]},
                headers={"Authorization": "Bearer k"},
            )
            busy = client.post("/chat/completions", json={"model": "other", "messages": []})
            listed = client.get("/models").json()
            missing = client.get("/nothing")
    assert answered.status_code == 200
    body = answered.json()
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "echo: 2+2"}
    assert body["model"] == "demo/solver" and body["object"] == "chat.completion"
    assert busy.status_code == 429 and busy.json() == {"error": "busy"}
    assert [entry["id"] for entry in listed["data"]] == ["demo/solver"]
    assert missing.status_code == 404
    chats = server.chat_requests()
    assert [r.model for r in chats] == ["demo/solver", "other"]
    assert chats[0].headers["Authorization"] == "Bearer k"
    assert [r.method for r in server.requests] == ["POST", "POST", "GET", "GET"]


def test_an_unknown_model_without_a_default_is_not_found():
    with ChatServer() as server, httpx.Client(base_url=server.base_url) as client:
        refused = client.post("/chat/completions", json={"model": "nope", "messages": []})
    assert refused.status_code == 404 and "nope" in refused.json()["error"]


def test_completion_carries_reasoning_when_given():
    answer = completion("4", model="m", reasoning="adding", finish_reason="length", choices=2)
    assert [c["message"]["reasoning_content"] for c in answer["choices"]] == ["adding", "adding"]
    assert {c["finish_reason"] for c in answer["choices"]} == {"length"}


def test_the_demo_model_is_served_on_the_port_asked_for_until_stopped(capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    stop = threading.Event()
    serving = threading.Thread(
        target=serve.main, args=(["--port", str(port)],), kwargs={"stop": stop}
    )
    serving.start()
    base_url = f"http://127.0.0.1:{port}/v1"
    printed: list[str] = []

    def announced() -> bool:
        printed.append(capsys.readouterr().out)
        return f"Scripted example model at {base_url}" in "".join(printed)

    try:
        wait_until(announced, what="the model served")
        with httpx.Client(base_url=base_url) as client:

            def ask(*messages: dict[str, str]) -> httpx.Response:
                return client.post(
                    "/chat/completions", json={"model": "any", "messages": list(messages)}
                )

            solver = ask({"role": "user", "content": "Compute 1201 + 805. Answer after ####."})
            wrong = ask({"role": "user", "content": "Compute 1204 + 807. Answer after ####."})
            judge = ask(
                {"role": "system", "content": "You are one independent judge of a task."},
                {"role": "user", "content": "{}"},
            )
    finally:
        stop.set()
        serving.join(timeout=DEADLINE_SECONDS)
    assert not serving.is_alive()
    assert solver.json()["choices"][0]["message"]["content"].endswith("#### 2,006")
    assert wrong.json()["choices"][0]["message"]["content"].endswith("#### 2,012")
    opinion = json.loads(judge.json()["choices"][0]["message"]["content"])
    assert opinion["summary"].startswith(EXAMPLE_NOTICE)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{base_url}/models")


def test_what_it_keeps_and_accepts_is_bounded():
    """A server left running (``serve`` keeps nothing) must not grow with every body it was
    sent: it keeps the newest ``keep`` requests and refuses a body over its limit unread."""
    answer = completion("ok", model="m")
    with (
        ChatServer(default=lambda request: answer, keep=2, max_body_bytes=1000) as server,
        httpx.Client(base_url=server.base_url) as client,
    ):
        for n in range(3):
            client.post("/chat/completions", json={"model": f"m{n}", "messages": []})
        refused = client.post("/chat/completions", content=b"x" * 1001)
    assert [r.model for r in server.requests] == ["m1", "m2"]
    assert refused.status_code == 413
    assert refused.json() == {"error": "request body missing a length or over the server's limit"}
