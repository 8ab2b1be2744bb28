"""The protocol registry: TOML data, validated and exposed as typed entries."""

from __future__ import annotations

import copy
import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

DEFAULT_PATH = Path(__file__).resolve().parent / "protocols.toml"
ROLE_SIZES = ("small", "large", "hosted")
DEFAULT_HISTORICAL_NOTE = (
    "Earlier model identities or generation budgets; retained as historical evidence."
)
LIMIT_KEYS = ("context_window", "max_input_tokens", "max_output_tokens")


class RegistryError(Exception):
    """The registry file cannot be used; ``problems`` lists every reason."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Requirement:
    key: str
    equals: Any
    message: str


@dataclass(frozen=True)
class VerifierRequirement:
    key: str
    equals: dict[str, Any]
    across_arms: bool
    message: str
    note: str


@dataclass(frozen=True)
class Role:
    size: str
    title: str
    model: str
    short_name: str
    reasoning_setting: str
    colour: str
    provider: str | None
    provider_message: str
    generation_parameters: dict[str, Any]
    requirements: tuple[Requirement, ...]


@dataclass(frozen=True)
class Protocol:
    id: str
    label: str
    status: str
    note: str
    limits: dict[str, int] = field(default_factory=dict)
    generation_parameters: dict[str, Any] = field(default_factory=dict)
    roles: tuple[Role, ...] = ()
    verifier_requirements: tuple[VerifierRequirement, ...] = ()

    def role(self, size: str) -> Role | None:
        return next((role for role in self.roles if role.size == size), None)

    def required_role(self, size: str) -> Role:
        """The role of ``size``; the current protocol defines every one of ``ROLE_SIZES``."""
        role = self.role(size)
        if role is None:
            raise LookupError(f"Protocol {self.id} defines no {size} role.")
        return role

    def required_parameters(self, role: Role) -> dict[str, Any]:
        return {**self.generation_parameters, **role.generation_parameters}

    def applied_parameters(self, role: Role) -> dict[str, Any]:
        """What the role's model is run with: the required parameters plus each role requirement
        (its reasoning control, e.g. ``chat_template_kwargs.enable_thinking``) set at its dotted
        key, so a run made with them classifies as current."""
        parameters = copy.deepcopy(self.required_parameters(role))
        for requirement in role.requirements:
            target = parameters
            *parents, leaf = requirement.key.split(".")
            for parent in parents:
                target = target.setdefault(parent, {})
            target[leaf] = copy.deepcopy(requirement.equals)
        return parameters


@dataclass(frozen=True)
class Registry:
    protocols: tuple[Protocol, ...]

    @property
    def current(self) -> Protocol:
        return next(entry for entry in self.protocols if entry.status == "current")

    def get(self, protocol_id: Any) -> Protocol | None:
        return next((entry for entry in self.protocols if entry.id == protocol_id), None)

    def historical_note(self, protocol_id: Any) -> str:
        entry = self.get(protocol_id)
        return entry.note if entry is not None and entry.note else DEFAULT_HISTORICAL_NOTE

    def role_for_model(self, model_id: Any) -> Role | None:
        return next((role for role in self.current.roles if role.model == model_id), None)


def registry_path() -> Path:
    return Path(getattr(settings, "ATLAS_DIFFICULTY_PROTOCOLS", DEFAULT_PATH))


def problems_in(*, data: dict[str, Any]) -> list[str]:
    """Every reason the parsed registry document is unusable (empty when valid)."""
    entries = data.get("protocols")
    if not isinstance(entries, list) or not entries:
        return ["The registry defines no [[protocols]] entries."]
    problems: list[str] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            problems.append(f"Protocol entry {index} is not a table.")
            continue
        for key in ("id", "label", "status", "note"):
            if not isinstance(entry.get(key), str) or not entry.get(key):
                problems.append(f"Protocol entry {index} lacks a non-empty {key}.")
        if entry.get("status") not in ("current", "historical"):
            problems.append(
                f"Protocol entry {index} has a status other than current or historical."
            )
        protocol_id = entry.get("id")
        if isinstance(protocol_id, str):
            if protocol_id in seen:
                problems.append(f"Protocol id {protocol_id} is not unique.")
            seen.add(protocol_id)
    current = [e for e in entries if isinstance(e, dict) and e.get("status") == "current"]
    if len(current) != 1:
        problems.append(f"Exactly one protocol must be current; found {len(current)}.")
    for entry in current:
        problems.extend(_problems_in_current(entry=entry))
    return problems


def _problems_in_current(*, entry: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    limits = entry.get("limits")
    if not isinstance(limits, dict) or any(type(limits.get(key)) is not int for key in LIMIT_KEYS):
        problems.append("The current protocol's limits must be exact integers.")
    if not isinstance(entry.get("generation_parameters", {}), dict):
        problems.append("The current protocol's generation_parameters must be a table.")
    roles = entry.get("roles")
    roles = roles if isinstance(roles, list) else []
    sizes = [role.get("size") for role in roles if isinstance(role, dict)]
    # key=str: a missing or non-text size is reported below instead of failing the sort.
    if sorted(sizes, key=str) != sorted(ROLE_SIZES) or len(sizes) != len(roles):
        problems.append(
            "The current protocol must define exactly the roles small, large and hosted."
        )
    for role in roles:
        if not isinstance(role, dict):
            continue
        for key in ("title", "model", "short_name", "reasoning_setting", "colour"):
            if not isinstance(role.get(key), str) or not role.get(key):
                problems.append(f"Role {role.get('size')} lacks a non-empty {key}.")
        if role.get("provider") and not role.get("provider_message"):
            problems.append(
                f"Role {role.get('size')} requires a provider without a provider_message."
            )
        for requirement in role.get("requirements") or []:
            if not _names_message(requirement):
                problems.append(f"A requirement of role {role.get('size')} names no message.")
    for requirement in entry.get("verifier_requirements") or []:
        if not _names_message(requirement):
            problems.append("A verifier requirement names no message.")
        elif not isinstance(requirement.get("equals"), dict):
            problems.append("A verifier requirement's equals must be a table.")
    return problems


def _names_message(requirement: Any) -> bool:
    return (
        isinstance(requirement, dict)
        and isinstance(requirement.get("key"), str)
        and isinstance(requirement.get("message"), str)
        and bool(requirement["message"].strip())
    )


def parse_registry(*, data: dict[str, Any]) -> Registry:
    problems = problems_in(data=data)
    if problems:
        raise RegistryError(problems)
    return Registry(protocols=tuple(_protocol(entry) for entry in data["protocols"]))


def _protocol(entry: dict[str, Any]) -> Protocol:
    if entry["status"] != "current":
        return Protocol(
            id=entry["id"], label=entry["label"], status=entry["status"], note=entry["note"]
        )
    return Protocol(
        id=entry["id"],
        label=entry["label"],
        status=entry["status"],
        note=entry["note"],
        limits={key: entry["limits"][key] for key in LIMIT_KEYS},
        generation_parameters=dict(entry.get("generation_parameters") or {}),
        roles=tuple(_role(role) for role in entry["roles"]),
        verifier_requirements=tuple(
            VerifierRequirement(
                key=item["key"],
                equals=dict(item["equals"]),
                across_arms=bool(item.get("across_arms", False)),
                message=item["message"],
                note=item.get("note", ""),
            )
            for item in entry.get("verifier_requirements") or []
        ),
    )


def _role(role: dict[str, Any]) -> Role:
    return Role(
        size=role["size"],
        title=role["title"],
        model=role["model"],
        short_name=role["short_name"],
        reasoning_setting=role["reasoning_setting"],
        colour=role["colour"],
        provider=role.get("provider") or None,
        provider_message=role.get("provider_message", ""),
        generation_parameters=dict(role.get("generation_parameters") or {}),
        requirements=tuple(
            Requirement(key=item["key"], equals=item.get("equals"), message=item["message"])
            for item in role.get("requirements") or []
        ),
    )


def read_registry(*, path: Path) -> Registry:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise RegistryError([f"Cannot read the protocol registry {path}: {error}"]) from error
    return parse_registry(data=data)


@functools.lru_cache(maxsize=8)
def _cached(path_text: str, modified: float) -> Registry:
    return read_registry(path=Path(path_text))


def get_registry() -> Registry:
    path = registry_path()
    try:
        modified = path.stat().st_mtime
    except OSError:
        modified = 0.0
    return _cached(str(path), modified)


def current_protocol() -> Protocol:
    return get_registry().current


def model_name(model_id: Any) -> str:
    """The last path segment of a model id ("Qwen/Qwen3.5-122B-A10B" → "Qwen3.5-122B-A10B")."""
    return str(model_id).rstrip("/").rsplit("/", 1)[-1] if model_id else ""


def field_guide_intro() -> str:
    """The field-guide intro generated from the current protocol."""
    protocol = current_protocol()
    models = ", ".join(f"{role.title} = {model_name(role.model)}" for role in protocol.roles)
    limits = protocol.limits
    return (
        "Quality describes data reliability; red highlights identify technical issues. "
        f"Current difficulty models: {models}. "
        f"Shared limits: {limits['context_window']:,} context / {limits['max_input_tokens']:,} "
        f"input / {limits['max_output_tokens']:,} output tokens. "
        "Earlier measurements are Historical."
    )
