"""A scripted OpenAI-compatible chat-completions server (stdlib HTTP, served from a thread).

``make demo`` runs ``make_review`` and ``make_difficulty`` against it so the example reviews are
what the tools really make; the tests' model server (``tests/model_server.py``) is a layer over
it that adds the behaviours of real servers tests need. It records every request (method, path,
headers, JSON body) and answers ``POST …/chat/completions`` from the responder registered for the
request's ``model`` (several scripted models can share one server), else from a default one;
``GET …/models`` lists the registered models. Subclasses change what is answered (``answer``,
``describe``) or how it is sent (``send``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A request body larger than any prompt a review sends (a judge's evidence is bounded far below).
MAX_BODY_BYTES = 32 * 1024 * 1024
TOO_LARGE = "request body missing a length or over the server's limit"


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
    def user_text(self) -> str:
        """Every user message's content, joined (a solver's task)."""
        return " ".join(str(m.get("content")) for m in self.messages if m.get("role") == "user")

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
    content: str | None,
    *,
    model: str = "scripted-model",
    finish_reason: str = "stop",
    choices: int = 1,
    reasoning: str | None = None,
    request_id: str = "chatcmpl-scripted",
) -> dict[str, Any]:
    """A chat completion in the OpenAI response shape."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return {
        "id": request_id,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {"index": index, "message": dict(message), "finish_reason": finish_reason}
            for index in range(choices)
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


class ChatServer:
    """Serve on 127.0.0.1 at ``port`` (0: a free one); ``base_url`` is what a config's
    ``base_url`` takes."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        default: Responder | None = None,
        port: int = 0,
        keep: int | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        self.port = port
        self.latency = latency
        # How many requests ``requests`` keeps, the newest (None: all, as tests read them; a
        # server left running keeps few, or its memory grows with every body it was sent).
        self.keep = keep
        self.max_body_bytes = max_body_bytes
        self.default = default
        self.models: dict[str, Responder] = {}
        self.requests: list[RecordedRequest] = []
        self.lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- what is answered (override in a subclass) ---

    def answer(self, request: RecordedRequest) -> Reply:
        """A POST: the responder of the request's model, else the default, else 404."""
        if self.latency:
            time.sleep(self.latency)
        responder = self.models.get(request.model or "", self.default)
        if responder is None:
            return Reply(status=404, body={"error": f"unknown model {request.model}"})
        answer = responder(request)
        return answer if isinstance(answer, Reply) else Reply(body=answer)

    def describe(self, path: str) -> Reply:
        """A GET: ``…/models`` lists the registered models, anything else is 404."""
        if path.rstrip("/").endswith("/models"):
            names = sorted(self.models) or ["scripted-model"]
            entries = [{"id": name, "object": "model", "owned_by": "scripted"} for name in names]
            return Reply(body={"object": "list", "data": entries})
        return Reply(status=404, body={"error": f"no route {path}"})

    def send(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        """Write one reply: its status, headers and JSON body."""
        data = json.dumps(reply.body).encode("utf-8")
        handler.send_response(reply.status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in reply.headers.items():
            handler.send_header(key, value)
        handler.end_headers()
        try:
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True  # the client gave up, as it may

    # --- recording ---

    def record(self, request: RecordedRequest) -> None:
        with self.lock:
            self.requests.append(request)
            if self.keep is not None and len(self.requests) > self.keep:
                del self.requests[: len(self.requests) - self.keep]

    def chat_requests(self) -> list[RecordedRequest]:
        with self.lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # --- lifecycle ---

    @property
    def base_url(self) -> str:
        assert self._server is not None, "the server is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> ChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:  # quiet: requests are recorded instead
                pass

            def do_GET(self) -> None:
                request = RecordedRequest(
                    method="GET", path=self.path, headers=dict(self.headers.items()), body=None
                )
                server.record(request)
                server.send(self, server.describe(self.path))

            def do_POST(self) -> None:
                declared = self.headers.get("Content-Length") or "0"
                if not declared.isdigit() or int(declared) > server.max_body_bytes:
                    # Refused unread: the connection is closed rather than drained.
                    self.close_connection = True
                    server.send(self, Reply(status=413, body={"error": TOO_LARGE}))
                    return
                raw = self.rfile.read(int(declared))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                request = RecordedRequest(
                    method="POST", path=self.path, headers=dict(self.headers.items()), body=body
                )
                server.record(request)
                server.send(self, server.answer(request))

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *_exc: Any) -> None:
        self.stop()
