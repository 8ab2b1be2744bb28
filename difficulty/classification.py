"""Classifying a report as current, historical or invalid."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from atlas.rules.vocabularies import MeasurementStatus
from difficulty.eligibility import Standing, historical_note
from difficulty.registry import ROLE_SIZES, Protocol, Registry, VerifierRequirement, get_registry
from difficulty.reports import (
    INCONSISTENT_COUNTS,
    REPORT_PATH,
    models_of,
    protocol_of,
    report_counts_consistent,
)

CURRENT = MeasurementStatus.CURRENT.value
HISTORICAL = MeasurementStatus.HISTORICAL.value
INVALID = MeasurementStatus.INVALID.value
ARCHIVED_NOTE = (
    "An archived report; original model identities, settings and evidence are preserved."
)
LIMITS_MISMATCH = "The recorded context or output limits do not match the current protocol."
ROLES_MISMATCH = "The current comparison requires one Small, Large and Hosted model."
MODEL_MISMATCH = "A model identity does not match its designated comparison role."
PARAMETERS_MISMATCH = "A model's generation parameters do not match the current protocol."


@dataclass(frozen=True)
class Classification:
    status: str
    note: str


def classify_report(
    *, report: dict[str, Any], path: str = REPORT_PATH, registry: Registry | None = None
) -> Classification:
    """The report's own status, before any display context."""
    registry = registry or get_registry()
    if path != REPORT_PATH:
        return Classification(HISTORICAL, ARCHIVED_NOTE)
    protocol = registry.current
    recorded_id = protocol_of(report).get("id")
    if recorded_id != protocol.id:
        return Classification(HISTORICAL, registry.historical_note(recorded_id))
    failure = _first_protocol_failure(report=report, protocol=protocol)
    if failure:
        return Classification(INVALID, failure)
    if not report_counts_consistent(report=report):
        return Classification(INVALID, INCONSISTENT_COUNTS)
    notes = [
        requirement.note
        for requirement in protocol.verifier_requirements
        if _records_key(models_of(report), requirement.key)
    ]
    return Classification(CURRENT, protocol.note + "".join(notes))


def apply_source_context(
    *, classification: Classification, standing: Standing | None
) -> Classification:
    """Current becomes historical when the source cannot hold a current estimate."""
    if standing is None or classification.status != CURRENT:
        return classification
    note = historical_note(standing)
    return classification if note is None else Classification(HISTORICAL, note)


def _first_protocol_failure(*, report: dict[str, Any], protocol: Protocol) -> str | None:
    recorded = protocol_of(report)
    if any(not _same_value(recorded.get(key), value) for key, value in protocol.limits.items()):
        return LIMITS_MISMATCH
    models = models_of(report)
    sizes = sorted(str(m.get("size")) for m in models)
    if len(report.get("models", [])) != 3 or sizes != sorted(ROLE_SIZES):
        return ROLES_MISMATCH
    by_size = {model["size"]: model for model in models}
    roles = [protocol.required_role(size) for size in ROLE_SIZES]
    if any(by_size[role.size].get("model") != role.model for role in roles):
        return MODEL_MISMATCH
    for role in roles:
        provider = by_size[role.size].get("provider")
        if role.provider and (
            not isinstance(provider, str) or provider.casefold() != role.provider.casefold()
        ):
            return role.provider_message
    for role in roles:
        recorded_parameters = by_size[role.size].get("generation_parameters")
        recorded_parameters = recorded_parameters if isinstance(recorded_parameters, dict) else {}
        for key, value in protocol.required_parameters(role).items():
            if key not in recorded_parameters or not _same_value(recorded_parameters[key], value):
                return PARAMETERS_MISMATCH
    for role in roles:
        parameters = by_size[role.size].get("generation_parameters") or {}
        for requirement in role.requirements:
            found, value = _dotted(parameters, requirement.key)
            if not found or not _same_value(value, requirement.equals):
                return requirement.message
    for verifier_requirement in protocol.verifier_requirements:
        if _records_key(models, verifier_requirement.key) and not _verifier_requirement_met(
            models=models, requirement=verifier_requirement
        ):
            return verifier_requirement.message
    return None


def _verifier_requirement_met(
    *, models: list[dict[str, Any]], requirement: VerifierRequirement
) -> bool:
    equals = requirement.equals
    recorded = []
    for model in models:
        found, value = _dotted(model.get("verifier_configuration") or {}, requirement.key)
        if not found and not requirement.across_arms:
            continue
        if not isinstance(value, dict):
            return False
        if any(
            name not in value or not _same_value(value[name], want) for name, want in equals.items()
        ):
            return False
        recorded.append({name: value[name] for name in equals})
    return all(item == recorded[0] for item in recorded)


def _records_key(models: list[dict[str, Any]], key: str) -> bool:
    return any(_dotted(model.get("verifier_configuration") or {}, key)[0] for model in models)


def _dotted(container: Any, key: str) -> tuple[bool, Any]:
    value = container
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same_value(recorded: Any, required: Any) -> bool:
    """Numbers compare numerically (1 equals 1.0); strings and booleans exactly."""
    if _is_number(required) or _is_number(recorded):
        return _is_number(required) and _is_number(recorded) and recorded == required
    if isinstance(required, dict):
        return (
            isinstance(recorded, dict)
            and recorded.keys() == required.keys()
            and all(_same_value(recorded[k], v) for k, v in required.items())
        )
    return type(recorded) is type(required) and recorded == required
