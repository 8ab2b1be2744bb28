"""Credentials never reach a file. A config that holds one anywhere — by its key's
name, in a URL's user name or query, or as a value shaped like a key — is refused before any work,
with a message that names where it is and never the value; and a key the endpoint echoes back is
redacted before anything is written (every file of the run is scanned)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviews.production.runtime.config import load_config
from reviews.production.runtime.credentials import CREDENTIALS_MESSAGE, redacted
from reviews.production.runtime.errors import ReviewProductionError
from tests.model_server import Reply
from tests.production.conftest import (  # noqa: F401 - the production fixtures
    API_KEY,
    api_key,
    checkout,
    model_server,
    session_checkout,
    write_config,
)
from tests.production.helpers import make_review, review_fails
from tests.production.review_model import ReviewModel, request_kind
from tests.production.test_config_and_inputs import config_file

# Generated once for these tests; no service knows them.
RANDOM_KEY = "Xk7qTz3RwP9vLm2NcB8hJd4FgY6sQt1W"
OPENAI_SHAPED = "sk-proj-4fQ9zXk2LmN8pR7tV3wY6bC1"


def refused(path: Path) -> str:
    with pytest.raises(ReviewProductionError) as failure:
        load_config(path=path)
    return str(failure.value)


@pytest.mark.parametrize(
    ("sections", "where"),
    [
        ({"model": {"secret_key": "x"}}, "model.secret_key"),
        (
            {"model": {"parameters": {"extra_headers": {"X-Api-Key": "x"}}}},
            "model.parameters.extra_headers.X-Api-Key",
        ),
        (
            {"model": {"review_parameters": {"access_token": "x"}}},
            "model.review_parameters.access_token",
        ),
        (
            {"runtime": {"gym_config": {"gsm8k": {"hf_token": "x"}}}},
            "runtime.gym_config.gsm8k.hf_token",
        ),
        (
            {"runtime": {"harbor_environment": {"kwargs": {"db": [{"Passwd": "x"}]}}}},
            "runtime.harbor_environment.kwargs.db[0].Passwd",
        ),
        ({"source": {"clientSecret": "x"}}, "source.clientSecret"),
        ({"source": {"credentials": {"user": "me"}}}, "source.credentials"),
        ({"model": {"openaiApiKey": "x"}}, "model.openaiApiKey"),
    ],
)
def test_keys_named_like_credentials_are_refused_naming_the_field(tmp_path, sections, where):
    """The field is named (never its value), so the curator finds it in a long config."""
    message = refused(config_file(tmp_path, **sections))
    assert message == f"{CREDENTIALS_MESSAGE}: {where} is named like a credential"


@pytest.mark.parametrize(
    ("sections", "where"),
    [
        ({"model": {"base_url": f"http://reviewer:{OPENAI_SHAPED}@127.0.0.1:1/v1"}},
         "model.base_url holds a URL with a user name or password"),
        ({"model": {"base_url": "https://user@models.example/v1"}},
         "model.base_url holds a URL with a user name or password"),
        ({"model": {"base_url": "https://models.example/v1?api_key=abc"}},
         "model.base_url holds a URL whose query names a credential"),
        ({"model": {"revision": OPENAI_SHAPED}},
         "model.revision holds a value shaped like an API key"),
        ({"runtime": {"harbor_environment": {"env": [f"OPENAI_API_KEY={OPENAI_SHAPED}"]}}},
         "runtime.harbor_environment.env[0] holds a value shaped like an API key"),
        ({"model": {"parameters": {"user": "Bearer abcdefghijklmnop"}}},
         "model.parameters.user holds a value shaped like an API key"),
        ({"source": {"repository": "hf_" + "a1B2c3D4" * 5}},
         "source.repository holds a value shaped like an API key"),
        ({"runtime": {"gym_config": {"gsm8k": {"note": f"use {RANDOM_KEY}"}}}},
         "runtime.gym_config.gsm8k.note holds a long random-looking string (a key?)"),
        ({"model": {"name": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz"}},
         "model.name holds a value shaped like an API key"),
    ],
)  # fmt: skip
def test_values_that_hold_credentials_are_refused_without_echoing_them(tmp_path, sections, where):
    message = refused(config_file(tmp_path, **sections))
    assert message == f"{CREDENTIALS_MESSAGE}: {where}"
    for secret in (OPENAI_SHAPED, RANDOM_KEY, "abcdefghijklmnop", "a1B2c3D4"):
        assert secret not in message


@pytest.mark.parametrize(
    "sections",
    [
        {"model": {"parameters": {"max_tokens": 64, "stop_token_ids": [2], "eos_token": "</s>"}}},
        {"model": {"name": "DeepSeek-R1-Distill-Qwen-32B-Instruct-AWQ"}},
        {"runtime": {"model_info": {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0}}},
        {"model": {"name": "ThisIsALongCamelCaseIdentifierName42"}},
        {"model": {"revision": "740312add88f781978c0658806c59bc2815b9866"}},
        {"model": {"base_url": "http://127.0.0.1:8000/v1", "context_tokens": 8192}},
        {"source": {"repository": "nvidia/Llama-3_3-Nemotron-Super-49B-v1_5"}},
        {"source": {"source_id": "MarinSkyRL_gsm8k_SmolLM2-135M-Instruct_v1"}},
        {"runtime": {"gym_config": {"gsm8k": {"uuid": "123e4567-e89b-12d3-a456-426614174000"}}}},
    ],
)
def test_what_only_looks_technical_is_not_a_credential(tmp_path, sections, monkeypatch):
    monkeypatch.setenv("ATLAS_REVIEW_KEY", "x")
    sections.setdefault("model", {})["api_key_env"] = "ATLAS_REVIEW_KEY"
    load_config(path=config_file(tmp_path, **sections))


def test_make_review_refuses_before_any_work(request, tmp_path):
    writer = request.getfixturevalue("write_config")
    config = writer(model={"base_url": "http://reviewer:hunter2@127.0.0.1:1/v1"})
    output = tmp_path / "run"
    message = review_fails("--config", str(config), "--n", "1", "--output", str(output))
    assert (
        message == f"{CREDENTIALS_MESSAGE}: model.base_url holds a URL with a user name or password"
    )
    assert "hunter2" not in message
    assert not output.exists()


def test_redaction_covers_every_form_of_the_key():
    key = 'sk-a/b"c'
    data = json.dumps({"echo": f"Bearer {key}", "q": "sk-a%2Fb%22c", "raw": key}).encode()
    cleaned = redacted(data + key.encode(), [key])
    assert b"sk-a" not in cleaned
    assert cleaned.count(b"[REDACTED]") == 4


class EchoingModel:
    """An endpoint that repeats the caller's Authorization header in everything it says: an
    error body first, then every answer's extra fields and the text of every message."""

    def __init__(self) -> None:
        self.inner = ReviewModel()
        self.errored = False

    def __call__(self, request):
        header = request.headers.get("Authorization", "")
        if request_kind(request) == "judge" and not self.errored:
            self.errored = True
            return Reply(status=500, body={"error": {"message": f"upstream refused {header}"}})
        answer = self.inner(request)
        answer["echo"] = {"authorization": header, "key": header.removeprefix("Bearer ")}
        message = answer["choices"][0]["message"]
        if request_kind(request) == "solver":
            message["content"] = f"{message['content']}\n(sent with {header})"
        elif request_kind(request) == "judge":
            opinion = json.loads(message["content"])
            opinion["summary"] = f"The caller authenticated as {header} for this judgment."
            message["content"] = json.dumps(opinion)
        return answer


@pytest.mark.slow
def test_an_echoed_bearer_key_is_in_no_file_of_the_run(request, tmp_path):
    server = request.getfixturevalue("model_server")
    writer = request.getfixturevalue("write_config")
    server.default = EchoingModel()
    output = tmp_path / "run"
    stdout, stderr = make_review("--config", str(writer()), "--n", "1", "--output", str(output))
    assert stdout.startswith("Saved 6 reviews")
    assert server.requests[0].headers["Authorization"] == f"Bearer {API_KEY}"
    files = [path for path in output.rglob("*") if path.is_file()]
    assert len(files) > 20
    holding = [
        str(path.relative_to(output)) for path in files if API_KEY.encode() in path.read_bytes()
    ]
    assert holding == []
    assert API_KEY not in stdout + stderr
    # The echo was redacted, not lost: the judge's summary says where it was.
    judged = json.loads((output / "tasks/0000/judges/1/parsed.json").read_text())
    assert judged["summary"] == "The caller authenticated as Bearer [REDACTED] for this judgment."
    errors = [path.read_text() for path in output.rglob("http-error.txt")]
    assert errors and all("[REDACTED]" in text for text in errors)
