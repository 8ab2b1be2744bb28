"""One OpenAI-compatible chat-completions server for tests and benchmarks (stdlib HTTP in a thread).

The remote model is the one part of production that tests replace. The server records every
request (path, headers, JSON body), answers from a queue of scripted replies first and otherwise
from the responder registered for the request's ``model`` field (several scripted models can share
one server), can fail the first k calls with 429/500 and can add a fixed latency to every call.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", []) if isinstance(self.body, dict) else []

    @property
    def system(self) -> str:
        first = self.messages[0] if self.messages else {}
        return first.get("content", "") if first.get("role") == "system" else ""

    @property
    def user_payload(self) -> Any:
        """The last user message parsed as JSON (judge and coalescer inputs), else None."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                try:
                    return json.loads(message.get("content") or "")
                except ValueError:
                    return None
        return None


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


Responder = Callable[[RecordedRequest], "Reply | dict[str, Any]"]


def completion(
    content: str, *, model: str = "test-model", finish_reason: str = "stop", choices: int = 1
) -> dict[str, Any]:
    """A chat completion in the OpenAI response shape."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": index,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
            for index in range(choices)
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


class ModelServer:
    def __init__(self, *, latency: float = 0.0, default: Responder | None = None) -> None:
        self.latency = latency
        self.default = default
        self.models: dict[str, Responder] = {}
        self.requests: list[RecordedRequest] = []
        self._queue: list[Reply] = []
        self._fail_remaining = 0
        self._fail_status = 500
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting ---

    def enqueue(self, *replies: Reply | dict[str, Any]) -> None:
        """Replies served, in order, before any responder."""
        with self._lock:
            self._queue.extend(r if isinstance(r, Reply) else Reply(body=r) for r in replies)

    def fail_first(self, count: int, *, status: int = 500) -> None:
        with self._lock:
            self._fail_remaining = count
            self._fail_status = status

    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # --- lifecycle ---

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ModelServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:  # quiet test output
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                request = RecordedRequest(
                    method="POST", path=self.path, headers=dict(self.headers.items()), body=body
                )
                reply = server._answer(request)
                data = json.dumps(reply.body).encode("utf-8")
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *_exc: Any) -> None:
        self.stop()

    def _answer(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._fail_remaining > 0:
                self._fail_remaining -= 1
                failure = Reply(status=self._fail_status, body={"error": "scripted failure"})
            else:
                failure = None
            queued = self._queue.pop(0) if failure is None and self._queue else None
        if self.latency:
            time.sleep(self.latency)
        if failure is not None:
            return failure
        if queued is not None:
            return queued
        responder = self.models.get(request.model or "", self.default)
        if responder is None:
            return Reply(status=404, body={"error": f"unknown model {request.model}"})
        answer = responder(request)
        return answer if isinstance(answer, Reply) else Reply(body=answer)
