"""The replay endpoint: how a saved or supplied answer reaches the unchanged native worker.

A native worker asks its solver for each turn at ``<base_url>/chat/completions``. To re-run a
saved native input without any model, the curators' tools point the worker at this loopback
endpoint, which answers each case's calls, in order, with that case's assistant messages — the
saved responses byte for byte, or the answer a curator supplied — and with HTTP 410 once they
run out. The worker, its interpreter, the checkout and the environment are the ones a review runs;
only the source of the answers differs, and every served answer is recorded with the execution.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from reviews.production.examples.chat_server import ChatServer, RecordedRequest, Reply

REPLAY_MODEL = "saved-answer-replay"
PATH_PREFIX = "/replay/"
EXHAUSTED = (
    "The replay holds no further answer: the environment asked for more solver turns than the "
    "case supplies"
)


@dataclass
class _Case:
    answers: list[dict[str, Any]]
    served: int = 0
    requests: list[Any] = field(default_factory=list)


class ReplayServer(ChatServer):
    """The project's chat server (loopback only) answering by case token instead of by model:
    ``with ReplayServer() as replay: replay.endpoint(answers=…)``."""

    def __init__(self) -> None:
        super().__init__()
        self._cases: dict[str, _Case] = {}

    def endpoint(self, *, answers: list[dict[str, Any]]) -> tuple[str, str]:
        """A base URL serving ``answers`` (chat completions) in order, and its token."""
        token = secrets.token_hex(8)
        with self.lock:
            self._cases[token] = _Case(answers=list(answers))
        root = self.base_url.removesuffix("/v1")
        return f"{root}{PATH_PREFIX}{token}/v1", token

    def record_of(self, token: str) -> dict[str, Any]:
        """What the case's endpoint answered: the replay record saved beside the execution."""
        with self.lock:
            case = self._cases[token]
            return {
                "replayed_by": REPLAY_MODEL,
                "model_called": False,
                "answers_supplied": len(case.answers),
                "answers_served": case.served,
                "requests_received": len(case.requests),
                "exhausted": len(case.requests) > case.served,
                "answers": case.answers,
            }

    def answer(self, request: RecordedRequest) -> Reply:
        path = request.path
        token = path[len(PATH_PREFIX) :].split("/", 1)[0] if path.startswith(PATH_PREFIX) else ""
        with self.lock:
            case = self._cases.get(token)
            if case is None or not path.endswith("/chat/completions"):
                return Reply(status=404, body={"error": {"message": "Unknown replay endpoint"}})
            case.requests.append(request.body)
            if case.served >= len(case.answers):
                return Reply(status=410, body={"error": {"message": EXHAUSTED}})
            case.served += 1
            return Reply(body=case.answers[case.served - 1])
