from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import tomli_w

from difficulty.checks import check_protocol_registry
from difficulty.registry import (
    DEFAULT_HISTORICAL_NOTE,
    DEFAULT_PATH,
    field_guide_intro,
    get_registry,
    problems_in,
)


def current(data: dict) -> dict:
    return data["protocols"][0]


def shipped() -> dict:
    return tomllib.loads(DEFAULT_PATH.read_text(encoding="utf-8"))


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "protocols.toml"
    path.write_bytes(tomli_w.dumps(data).encode())
    return path


def test_shipped_current_protocol_matches_the_product_description():
    protocol = get_registry().current
    assert protocol.id == "atlas-difficulty-v2-65k16k"
    assert protocol.limits == {
        "context_window": 65536,
        "max_input_tokens": 49152,
        "max_output_tokens": 16384,
    }
    assert protocol.generation_parameters == {
        "temperature": 0.7, "top_p": 0.95, "top_k": 20, "min_p": 0, "repetition_penalty": 1,
        "presence_penalty": 0, "frequency_penalty": 0, "max_tokens": 16384,
    }  # fmt: skip
    assert [(r.size, r.model, r.short_name, r.colour) for r in protocol.roles] == [
        ("small", "Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen 30B", "blue"),
        ("large", "Qwen/Qwen3.5-122B-A10B", "Qwen 122B", "purple"),
        ("hosted", "zai-org/GLM-5.3", "GLM 5.3", "amber"),
    ]
    assert protocol.role("hosted").provider == "Together"
    assert protocol.note == (
        "Matched Small, Large and Hosted models at 65,536 context and 16,384 output tokens."
    )


def test_variant_protocols_are_historical_with_the_default_note():
    registry = get_registry()
    for protocol_id in (
        "atlas-difficulty-v3-65k16k-qwen-recommended-nonthinking",
        "atlas-difficulty-v4-judge-verifier-nonthinking",
        "atlas-difficulty-v4-checklist-judge",
    ):
        assert registry.get(protocol_id).status == "historical"
    assert registry.historical_note("unknown-protocol") == DEFAULT_HISTORICAL_NOTE


def test_shipped_registry_passes_the_system_check():
    assert check_protocol_registry() == []


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d["protocols"].append(dict(d["protocols"][1])), "is not unique"),
        (lambda d: d["protocols"][1].update(status="current"), "Exactly one protocol"),
        (lambda d: d["protocols"][0].update(status="historical"), "found 0"),
        (lambda d: d["protocols"][0]["roles"].pop(), "exactly the roles small, large and hosted"),
        (lambda d: current(d)["roles"][1]["requirements"][0].pop("message"), "names no message"),
        (lambda d: current(d)["verifier_requirements"][0].update(message=""), "names no message"),
        (lambda d: d["protocols"][2].pop("note"), "lacks a non-empty note"),
        (lambda d: d["protocols"][0]["limits"].update(context_window=65536.0), "exact integers"),
    ],
)  # fmt: skip
def test_registry_errors_are_system_check_errors(tmp_path, settings, mutate, expected):
    data = shipped()
    mutate(data)
    assert any(expected in problem for problem in problems_in(data=data))
    settings.ATLAS_DIFFICULTY_PROTOCOLS = write(tmp_path, data)
    errors = check_protocol_registry()
    assert errors and all(error.id == "difficulty.E001" for error in errors)
    assert any(expected in error.msg for error in errors)


def test_unreadable_registry_is_an_error(tmp_path, settings):
    path = tmp_path / "broken.toml"
    path.write_text("protocols = [", encoding="utf-8")
    settings.ATLAS_DIFFICULTY_PROTOCOLS = path
    assert "Cannot read the protocol registry" in check_protocol_registry()[0].msg


def test_moving_current_is_a_data_change(tmp_path, settings):
    data = shipped()
    new = dict(data["protocols"][0], id="atlas-difficulty-v9-test")
    data["protocols"][0] = dict(data["protocols"][0], status="historical")
    data["protocols"].append(new)
    settings.ATLAS_DIFFICULTY_PROTOCOLS = write(tmp_path, data)
    assert get_registry().current.id == "atlas-difficulty-v9-test"


def test_field_guide_intro_is_generated_from_the_current_protocol():
    assert field_guide_intro() == (
        "Quality describes data reliability; red highlights identify technical issues. Current "
        "difficulty models: Small = Qwen3-Coder-30B-A3B-Instruct, Large = Qwen3.5-122B-A10B, "
        "Hosted = GLM-5.3. Shared limits: 65,536 context / 49,152 input / 16,384 output tokens. "
        "Earlier measurements are Historical."
    )
