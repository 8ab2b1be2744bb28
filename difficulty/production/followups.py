"""``--follow-up KIND --changed KEY=VALUE … --reason TEXT``: the one way to measure outside the
protocol's settings. Each change names a role and what changed —
``large.max_tokens=32768``, ``hosted.model=org/other`` — and the run records exactly those changes
and the reason, as follow-up entries (``followups[]``) for the original report's
``protocol_followups``. With ``--output <run>/difficulty/followups/<name>`` the entries are filed
into ``<run>/difficulty.json`` directly (``file_followups``).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from difficulty.followups import HOSTED_NOTE
from difficulty.production.config import GENERATION_KEYS
from difficulty.production.errors import DifficultyProductionError, UsageError
from difficulty.registry import ROLE_SIZES, Protocol
from difficulty.reports import REPORT_PATH
from difficulty.wilson import wilson_95
from reviews.production.runtime.rundir import json_text, read_json, write_text_file

KINDS = ("generation_setting", "alternate_checkpoint")
CHECKPOINT_KEYS = ("model", "revision")


@dataclass(frozen=True)
class Change:
    size: str
    key: str
    value: Any


@dataclass(frozen=True)
class FollowUp:
    kind: str
    changes: tuple[Change, ...]
    reason: str

    def sizes(self) -> tuple[str, ...]:
        named = {change.size for change in self.changes}
        return tuple(size for size in ROLE_SIZES if size in named)

    def changed_models(self) -> dict[str, str]:
        return {c.size: str(c.value) for c in self.changes if c.key == "model"}

    def parameters(self, *, protocol: Protocol, size: str) -> dict[str, Any]:
        """The protocol's parameters for the role with this follow-up's changes applied."""
        parameters = protocol.applied_parameters(protocol.required_role(size))
        for change in self.changes:
            if change.size != size or change.key in CHECKPOINT_KEYS:
                continue
            target = parameters
            *parents, leaf = change.key.split(".")
            for parent in parents:
                target = target.setdefault(parent, {})
            target[leaf] = copy.deepcopy(change.value)
        return parameters

    def record(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "changes": [{"size": c.size, "key": c.key, "value": c.value} for c in self.changes],
            "reason": self.reason,
        }

    def annotate(
        self,
        *,
        report: dict[str, Any],
        protocol: Protocol,
        report_path: str,
        original_report_path: str | None,
    ) -> dict[str, Any]:
        """The follow-up report: its own numbers plus ``followups[]`` entries (one per measured
        role) shaped as the report's own, to append to the original's ``protocol_followups``."""
        entries = []
        for model in report["models"]:
            size = model["size"]
            changes = [c for c in self.changes if c.size == size]
            entry: dict[str, Any] = {
                "id": f"{self.kind}-{size}-{report['estimated_at']}",
                "state": "complete",
                "kind": self.kind,
                "model": model["model"],
                "provider": model["provider"],
                "model_revision": model["model_revision"],
                "generation_parameters": model["generation_parameters"],
                "reason": self.reason,
                "limitations": [self.reason],
                "report_path": report_path,
                **{key: model[key] for key in ("solved", "verified", "unverified", "attempted")},
                "solve_rate": model["solve_rate"],
                "wilson_95": wilson_95(solved=model["solved"], verified=model["verified"]),
            }
            earlier = protocol.applied_parameters(protocol.required_role(size))
            if original_report_path is not None:
                entry["original_report_path"] = original_report_path
            settings = [
                {"name": c.key, "earlier": _at(earlier, c.key), "new": c.value}
                for c in changes
                if c.key not in CHECKPOINT_KEYS
            ]
            if settings:
                # The Atlas shows one changed parameter; every change is listed beside it.
                entry["changed_parameter"] = settings[0]
                entry["changed_parameters"] = settings
            checkpoint = [c for c in changes if c.key in CHECKPOINT_KEYS]
            if checkpoint:
                role = protocol.required_role(size)
                entry["checkpoint_change"] = {
                    "earlier": role.model,
                    "new": {c.key: c.value for c in checkpoint},
                }
            if self.kind == "alternate_checkpoint":
                entry["limitations"].append(HOSTED_NOTE)
            entries.append(entry)
        return {
            **report,
            "followup": self.record(),
            "followups": entries,
            "limitations": [
                *report["limitations"],
                f"Follow-up measurement ({self.kind}) outside protocol {report['protocol']['id']}: "
                f"{self.reason}",
            ],
        }


def _at(parameters: dict[str, Any], dotted: str) -> Any:
    """The value at a dotted key, None when absent."""
    value: Any = parameters
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def parse_followup(*, kind: str, changed: list[str], reason: str | None) -> FollowUp:
    """Checks the command line: a known kind, at least one ``<role>.<key>=<value>``, a reason."""
    if kind not in KINDS:
        raise UsageError(f"--follow-up must be one of {', '.join(KINDS)}")
    if not changed:
        raise UsageError("--follow-up needs at least one --changed ROLE.KEY=VALUE")
    if not reason or not reason.strip():
        raise UsageError("--follow-up needs --reason saying why the settings change")
    changes = []
    for item in changed:
        name, separator, text = item.partition("=")
        size, dot, key = name.partition(".")
        if not separator or not dot or size not in ROLE_SIZES or not key:
            raise UsageError(
                f"--changed takes ROLE.KEY=VALUE with ROLE small, large or hosted: {item}"
            )
        if key not in CHECKPOINT_KEYS and key.split(".")[0] not in GENERATION_KEYS:
            raise UsageError(f"--changed names no generation setting or checkpoint: {key}")
        try:
            value = json.loads(text)
        except ValueError:
            value = text  # a bare string such as a model id
        changes.append(Change(size=size, key=key, value=value))
    has_checkpoint = any(change.key == "model" for change in changes)
    if kind == "alternate_checkpoint" and not has_checkpoint:
        raise UsageError("An alternate_checkpoint follow-up changes a role's model")
    if kind == "generation_setting" and has_checkpoint:
        raise UsageError("A generation_setting follow-up keeps the protocol's checkpoints")
    return FollowUp(kind=kind, changes=tuple(changes), reason=reason.strip())


def followup_root(output: Path) -> Path | None:
    """The original run a follow-up is filed in: ``--output <run>/difficulty/followups/<name>``
    of a finished ``<run>``. Its evidence paths are then relative to ``<run>`` and its entries
    join that run's ``protocol_followups``, so one ``publish_difficulty`` publishes both."""
    folder = output.parent
    if folder.name != "followups" or folder.parent.name != "difficulty":
        return None
    run = folder.parent.parent
    return run if (run / REPORT_PATH).is_file() else None


def file_followups(*, root: Path, entries: list[dict[str, Any]]) -> None:
    """Add (or replace, by id) the follow-up entries in the original run's report."""
    report = read_json(root / REPORT_PATH)
    if not isinstance(report, dict):
        raise DifficultyProductionError(f"The original report {root / REPORT_PATH} is unreadable")
    ids = {entry["id"] for entry in entries}
    kept = [item for item in report.get("protocol_followups") or [] if item.get("id") not in ids]
    report["protocol_followups"] = [*kept, *entries]
    write_text_file(root / REPORT_PATH, json_text(report))
