"""Trace viewers: the Python renderer, and the JavaScript renderer producing the
same markup for the same artifacts (run under Node with a minimal document stand-in)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from reviews.pages.trace_viewers import (
    RENDER_DEPTH,
    TRUNCATION_BYTES,
    TRUNCATION_NOTE,
    render_artifact,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "static" / "reviews" / "trace_viewers.js"

CHAT_RESPONSE = {
    "id": "chatcmpl-1",
    "model": "solver-large",
    "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    "choices": [
        {
            "finish_reason": "length",
            "message": {
                "role": "assistant",
                "reasoning_content": "Think <carefully> & check.",
                "content": "",
                "tool_calls": [
                    {"id": "call-1", "function": {"name": "python", "arguments": '{"code": "1+1"}'}}
                ],
            },
        }
    ],
}
CHAT_REQUEST = {
    "model": "solver-large",
    "temperature": 0.6,
    "messages": [
        {"role": "system", "content": "Solve."},
        {"role": "tool", "content": "42", "tool_call_id": "call-1"},
        {"role": "user", "content": [{"type": "text", "text": "What is 40 + 2?"}]},
    ],
}
NESTED = {
    "tasks": [{"task_id": "t-1", "ok": True}, {"task_id": 2, "ok": False}],
    "events": [{"event": "start"}, {"type": "stop", "errors": []}],
    "rows": [{"a": None}, [1, 2]],
    "issues": ["wrong key"],
    "error_message": "boom",
    "Failures": 0,
    "empty": [],
    "nothing": {},
    "embedded": '{"inner": [1, 2.5]}',
    "multiline": "line 1\nline 2",
    "numbers": [1.0, 0.1, -0.0, 1e21, 1e-7, 123456789012345678901234, 1.5e300, 2**53 + 1, 1e16],
    "ordered": {"b": 1, "2": 2, "1": 3, "01": 4},
}

CASES = [
    ("tasks/0000/execution-000/solver/turn-000/response.json", json.dumps(CHAT_RESPONSE)),
    ("tasks/0000/execution-000/solver/turn-000/request.json", json.dumps(CHAT_REQUEST)),
    ("r/response.json", json.dumps({"id": "x", "choices": []})),
    (
        "r/response.json",
        json.dumps({"choices": [{"finish_reason": "stop", "message": {"content": "Done."}}]}),
    ),
    ("r/response.json", json.dumps({"choices": "none"})),
    ("report.json", json.dumps(NESTED)),
    ("scalar.json", "3.0"),
    ("not-json.json", "NaN"),
    ("verifier-trace.jsonl", '{"event": "a"}\r\n\nnot json\n[1]\n{"task_id": "t"}\n'),
    ("empty.jsonl", "\n\n"),
    ("verifier.stdout", "score=1 <b>bold</b> & more\n"),
    ("verifier.stderr", '  {"error": "parsed from text"}  '),
    ("notes.md", "[not json"),
    # Model text holding brackets: nested past the viewers' depth, shown as text at any depth.
    ("a/response.json", json.dumps({"choices": [], "usage": {"text": "[" * 750 + "]" * 750}})),
    ("deep.json", json.dumps({"t": "[" * 31 + "1" + "]" * 31})),
    ("deep.json", json.dumps({"t": "[" * 33 + "1" + "]" * 33})),
    ("deep.json", json.dumps(json.dumps(json.dumps([[["x"]]])))),
    ("brackets.log", "{" * 5000),
    ("brackets.log", "[" * 900 + "]" * 900),
]


def test_json_renders_nested_lists_with_the_exact_labels():
    html = render_artifact(path="report.json", content=json.dumps(NESTED))
    assert html.startswith('<div class="trace-viewer"><dl class="tv-object">')
    for label in ("Task 1 · t-1", "Task 2 · 2", "Event 1 · start", "Event 2 · stop", "Entry 1"):
        assert f"<summary>{label}</summary>" in html
    assert '<span class="tv-bool">Yes</span>' in html and '<span class="tv-bool">No</span>' in html
    assert '<span class="tv-null">Not recorded</span>' in html
    assert html.count('<span class="tv-empty">None recorded</span>') == 3  # [], {}, errors: []
    for key in ("issues", "error_message", "Failures", "errors"):
        assert f'<dt class="tv-key tv-alert">{key}</dt>' in html
    assert '<dt class="tv-key">tasks</dt>' in html
    assert '<dt class="tv-key">inner</dt>' in html  # strings holding JSON render as JSON
    assert '<pre class="tv-text">line 1\nline 2</pre>' in html


def test_numbers_follow_javascript_formatting_and_key_order():
    html = render_artifact(path="report.json", content=json.dumps(NESTED))
    numbers = [
        "1", "0.1", "0", "1e+21", "1e-7", "1.2345678901234569e+23", "1.5e+300",
        "9007199254740992", "10000000000000000",
    ]  # fmt: skip
    for number in numbers:
        assert f'<span class="tv-number">{number}</span>' in html
    ordered = html[html.index(">ordered<") :]
    assert (
        ordered.index(">1<") < ordered.index(">2<") < ordered.index(">b<") < ordered.index(">01<")
    )


def test_chat_response_viewer():
    html = render_artifact(path="a/response.json", content=json.dumps(CHAT_RESPONSE))
    assert '<dt class="tv-key">Model</dt><dd>solver-large</dd>' in html
    assert '<dt class="tv-key">Request id</dt><dd>chatcmpl-1</dd>' in html
    assert "<summary>Token usage</summary>" in html
    assert '<p class="tv-finish tv-alert">Finish reason: length</p>' in html
    assert '<summary>Thinking</summary><pre class="tv-text">Think &lt;carefully&gt; &amp;' in html
    assert '<p class="tv-empty">No final text returned</p>' in html
    assert "<summary>Tool calls (1)</summary>" in html
    assert '<dt class="tv-key">code</dt>' in html  # tool arguments parsed


def test_chat_response_with_text_and_normal_finish():
    content = json.dumps({"choices": [{"finish_reason": "stop", "message": {"content": "Done."}}]})
    html = render_artifact(path="x/response.json", content=content)
    assert '<p class="tv-finish">Finish reason: stop</p>' in html
    assert '<h4>Assistant response</h4><pre class="tv-text">Done.</pre>' in html
    assert "Thinking" not in html and "Tool calls" not in html
    assert '<dt class="tv-key">Model</dt><dd>Not recorded</dd>' in html


def test_chat_request_viewer_lists_messages_and_generation_parameters():
    html = render_artifact(path="a/request.json", content=json.dumps(CHAT_REQUEST))
    assert "<h4>Messages (3)</h4>" in html
    assert '<p class="tv-role">system</p><pre class="tv-text">Solve.</pre>' in html
    assert '<dt class="tv-key">tool_call_id</dt>' in html
    assert "<h4>Generation parameters</h4>" in html
    parameters = html[html.index("Generation parameters") :]
    assert '<dt class="tv-key">temperature</dt><dd><span class="tv-number">0.6</span>' in parameters
    assert "messages" not in parameters


def test_a_response_json_that_is_not_a_chat_completion_renders_as_json():
    html = render_artifact(path="a/response.json", content=json.dumps({"status": "ok"}))
    assert "Finish reason" not in html and '<dt class="tv-key">status</dt>' in html


def test_jsonl_renders_line_by_line_and_keeps_unparsable_lines_as_text():
    html = render_artifact(path="v.jsonl", content='{"event": "a"}\r\n\nnot json\n[1]\n')
    assert '<div class="tv-jsonl">' in html
    assert "<summary>Event 1 · a</summary>" in html
    assert '<summary>Line 3</summary><pre class="tv-text">not json</pre>' in html
    assert "<summary>Entry 4</summary>" in html
    assert "Line 2" not in html


def test_other_text_is_preformatted_and_escaped():
    html = render_artifact(path="verifier.stdout", content="a <b> & c\n")
    assert (
        html == '<div class="trace-viewer"><pre class="tv-text">a &lt;b&gt; &amp; c\n</pre></div>'
    )


def test_text_files_holding_json_objects_render_as_json_but_scalars_stay_text():
    assert '<dt class="tv-key tv-alert">error</dt>' in render_artifact(
        path="verifier.stderr", content='{"error": "x"}'
    )
    assert '<pre class="tv-text">42</pre>' in render_artifact(path="out.txt", content="42")
    assert '<span class="tv-number">42</span>' in render_artifact(path="out.json", content="42")
    assert '<pre class="tv-text">NaN</pre>' in render_artifact(path="out.json", content="NaN")


def test_files_above_two_mib_show_the_first_two_mib_with_a_note():
    content = "a" * (TRUNCATION_BYTES - 1) + "é" + "tail"
    html = render_artifact(path="big.log", content=content)
    assert html.startswith(f'<div class="trace-viewer"><p class="tv-note">{TRUNCATION_NOTE}</p>')
    assert "é" not in html and "tail" not in html
    assert html.count("a") >= TRUNCATION_BYTES - 1
    exact = render_artifact(path="small.log", content="a" * TRUNCATION_BYTES)
    assert TRUNCATION_NOTE not in exact


@pytest.mark.parametrize("depth", [30, 31, 32, 33, 400, 750, 5000, 200_000])
def test_any_nesting_renders_and_past_the_depth_as_text(depth):
    brackets = "[" * depth + "]" * depth
    for path, content in [
        ("a/response.json", json.dumps({"choices": [{"message": {"content": brackets}}]})),
        ("report.json", json.dumps({"nested": {"deeper": brackets}})),
        ("model.txt", brackets),
    ]:
        html = render_artifact(path=path, content=content)
        assert html.count("<ol") + html.count('<div class="tv-entries') <= RENDER_DEPTH + 1
        if depth > RENDER_DEPTH + 2:  # the innermost [] is empty, the rest is text
            assert brackets in html


# --- the JavaScript renderer emits the same markup --------------------------------------------

HARNESS = r"""
const escapeText = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const escapeAttr = (s) => escapeText(s).replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
class Node {
  constructor(tag) { this.tag = tag; this.attrs = []; this.children = []; }
  setAttribute(name, value) { this.attrs.push([name, String(value)]); }
  appendChild(child) { this.children.push(child); return child; }
  get outerHTML() {
    const attrs = this.attrs.map(([n, v]) => ` ${n}="${escapeAttr(v)}"`).join("");
    const inner = this.children
      .map((c) => (c instanceof Node ? c.outerHTML : escapeText(c.text))).join("");
    return `<${this.tag}${attrs}>${inner}</${this.tag}>`;
  }
}
globalThis.document = {
  createElement: (tag) => new Node(tag),
  createTextNode: (text) => ({ text }),
};
require(process.argv[2]);
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(cases.map(([path, content]) =>
  globalThis.AtlasTraceViewers.renderArtifact(path, content).outerHTML)));
"""


def run_javascript(cases: list[tuple[str, str]], tmp_path: Path) -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed; the browser tests compare the renderers instead")
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS, encoding="utf-8")
    completed = subprocess.run(
        [node, str(harness), str(SCRIPT)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(completed.stdout)


@pytest.mark.slow
def test_javascript_renderer_matches_python_renderer(tmp_path):
    rendered = run_javascript(CASES, tmp_path)
    for (path, content), javascript in zip(CASES, rendered, strict=True):
        assert javascript == str(render_artifact(path=path, content=content)), path


@pytest.mark.slow
def test_javascript_renderer_truncates_like_python(tmp_path):
    cases = [
        ("big.log", "a" * (TRUNCATION_BYTES - 1) + "é" + "tail"),
        ("big.jsonl", ('{"event": "' + "é" * 2000 + '"}\n') * (TRUNCATION_BYTES // 4000 + 2)),
    ]
    rendered = run_javascript(cases, tmp_path)
    for (path, content), javascript in zip(cases, rendered, strict=True):
        assert javascript == str(render_artifact(path=path, content=content)), path
