"""What a dataset or a model endpoint hands in — a task id, a server's reason — is
shown on the reviewer's terminal, never obeyed: control characters, ANSI and OSC escapes, carriage
returns and bidirectional overrides come out as visible escapes, in progress lines and refusals."""

from __future__ import annotations

import json
import unicodedata

import pytest

from reviews.production.runtime.terminal import shown
from tests.model_server import Reply
from tests.production.conftest import (  # noqa: F401 - the production fixtures
    api_key,
    checkout,
    gsm8k_rows,
    model_server,
    session_checkout,
    write_config,
    write_parquet,
)
from tests.production.helpers import make_review, review_fails
from tests.production.review_model import ReviewModel, request_kind

CLEAR_AND_RETITLE = "\x1b[2J\x1b]0;owned\x07"
HOSTILE = [
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("over\rwrite", "over\\x0dwrite"),
    ("\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\", None),
    ("report\u202etxt.exe", "report\\u202etxt.exe"),
    ("zero\u200bwidth", "zero\\u200bwidth"),
    ("csi\x9b2J", "csi\\x9b2J"),
    ("bell\x07del\x7f", "bell\\x07del\\x7f"),
    ("line\u2028break", "line\\u2028break"),
    ("<b>markup</b> [red]x[/red]", "<b>markup</b> [red]x[/red]"),
    ("café 中文 ✓", "café 中文 ✓"),
]


def hidden(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) in {"Cc", "Cf", "Zl", "Zp"}]


@pytest.mark.parametrize(("text", "expected"), HOSTILE)
def test_hidden_characters_are_shown_as_escapes(text, expected):
    result = shown(text)
    assert hidden(result) == []
    if expected is not None:
        assert result == expected


def test_a_refusal_quoting_a_hostile_task_id_is_escaped(request, tmp_path):
    """A sampled task whose folder holds a special file is refused naming the task's id."""
    writer = request.getfixturevalue("write_config")
    data = tmp_path / "hostile"
    task = data / "tasks" / "tb-1"
    (task / "tests").mkdir(parents=True)
    (task / "zero").symlink_to("/dev/zero")
    row = {**gsm8k_rows(1)[0], "env_class": "harbor", "task_dir": "tasks/tb-1"}
    identifier = f"tb-1{CLEAR_AND_RETITLE}\u202e"
    row["extra_info"]["nemotron_ultra"] = {"route": "terminal_bench", "uuid": identifier}
    (data / "rows.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    config = writer(tasks_path=data / "rows.jsonl")
    message = review_fails("--config", str(config), "--n", "1", "--output", str(tmp_path / "run"))
    assert hidden(message) == []
    assert message.startswith('task "tb-1')
    assert "\\u202e" in message


@pytest.mark.slow
def test_a_servers_reason_is_escaped_in_progress_and_in_the_refusal(request, tmp_path):
    server = request.getfixturevalue("model_server")
    writer = request.getfixturevalue("write_config")
    said = f"{CLEAR_AND_RETITLE}\x1b[31mupstream busy\x1b[0m\r"
    failed: list[str] = []

    def hostile(call):
        kind = request_kind(call)
        if kind == "judge" and not failed:
            failed.append(kind)
            return Reply(status=503, body={"error": {"message": said}})
        if kind == "coalescer":
            return Reply(status=400, body={"error": {"message": f"bad request {said}"}})
        return ReviewModel()(call)

    server.default = hostile
    config = writer()
    output = tmp_path / "run"
    args = ("--config", str(config), "--n", "1", "--output", str(output))
    message = review_fails(*args)
    assert message.startswith("coalescer: the model endpoint answered HTTP 400: bad request")
    assert hidden(message) == []
    assert "\\x1b[31mupstream busy\\x1b[0m" in message
    server.default = ReviewModel()
    _, stderr = make_review(*args, "--resume")
    assert hidden(stderr.replace("\n", "")) == []


@pytest.mark.slow
def test_progress_notes_are_escaped(request, tmp_path):
    server = request.getfixturevalue("model_server")
    writer = request.getfixturevalue("write_config")
    failed: list[str] = []

    def hostile(call):
        if request_kind(call) == "judge" and not failed:
            failed.append("once")
            return Reply(status=503, body={"error": {"message": f"busy{CLEAR_AND_RETITLE}\r"}})
        return ReviewModel()(call)

    server.default = hostile
    stdout, stderr = make_review(
        "--config", str(writer()), "--n", "1", "--output", str(tmp_path / "run")
    )
    assert stdout.startswith("Saved 6 reviews")
    notes = [line for line in stderr.splitlines() if "retrying" in line]
    assert notes and "busy\\x1b[2J\\x1b]0;owned\\x07" in notes[0]
    assert hidden(stderr.replace("\n", "")) == []
