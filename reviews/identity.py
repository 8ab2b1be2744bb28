"""Whether a review is current for a row by identity: what executed against what the row pins.

A review is current only when the native code it executed is the code the row pins: the
MarinSkyRL commit (or a native-revision attestation from the executed commit to the pinned one,
verified here, not merely present), the verifyit mode and revision, the Harbor revision of a
Harbor route. (The dataset revision is held by publication's own check, bridged by a
dataset-revision attestation as before.) Anything else publishes as covering what it executed:
publication records the executed MarinSkyRL commit as the reviewed verifier revision, so the
catalog treats it as a changed revision (rating hidden, review linked), and the review page and
API say which pin differs and how to attest it — all from ``identity_differences``.

Pure: callers hand in the row's payload, the collection and the texts of its archived
native-revision attestations.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reviews.production.format.attestations import (
    native_attestation_bridges,
    native_attestation_path,
)

HARBOR_ROUTE = "harbor"
MARINSKYRL_TREE = re.compile(
    r"^https://github\.com/marin-community/MarinSkyRL/(?:tree|blob)/([0-9a-f]{40})(?:/|$)"
)


@dataclass(frozen=True)
class Pins:
    """The native identity a catalog row pins (exported from its definition)."""

    marinskyrl: str | None
    mode: str | None
    verifyit: str | None
    harbor: str | None
    verifier_url: str | None

    @classmethod
    def of(cls, payload: Mapping[str, Any] | None) -> Pins:
        payload = payload or {}
        scope = payload.get("grading_scope")
        scope = scope if isinstance(scope, dict) else {}
        url = payload.get("verifier_url") if isinstance(payload.get("verifier_url"), str) else None
        match = MARINSKYRL_TREE.match(url or "")
        return cls(
            marinskyrl=scope.get("marinskyrl_revision") or (match.group(1) if match else None),
            mode=scope.get("mode"),
            verifyit=scope.get("verifyit_revision"),
            harbor=scope.get("harbor_revision"),
            verifier_url=url,
        )


@dataclass(frozen=True)
class Difference:
    pin: str  # what differs, in words
    pinned: Any
    executed: Any
    attest: str  # how to make the review current

    def as_dict(self) -> dict[str, Any]:
        return {
            "pin": self.pin,
            "pinned": self.pinned,
            "executed": self.executed,
            "attest": self.attest,
        }


def executed_commit(collection: Mapping[str, Any]) -> str | None:
    """The MarinSkyRL commit the collection executed (for reused evidence, the one inspected)."""
    provenance = collection.get("execution_provenance")
    if isinstance(provenance, dict):
        return provenance.get("marinskyrl_commit")
    for review in collection.get("reviews") or []:
        commit = (review.get("attributes") or {}).get("inspected_marinskyrl_commit")
        if isinstance(commit, str):
            return commit
    return None


def identity_differences(
    *,
    payload: Mapping[str, Any] | None,
    collection: Mapping[str, Any],
    attestations: Mapping[str, str],
) -> list[Difference]:
    """What executed and differs from what the row pins; empty when the review is current.
    ``attestations``: archived ``publication/native-revision-attestation-*.json`` texts by path.
    A row that pins no MarinSkyRL commit has nothing to compare."""
    pins = Pins.of(payload)
    if pins.marinskyrl is None:
        return []
    differences = []
    commit = executed_commit(collection)
    if commit != pins.marinskyrl and not native_attestation_bridges(
        text=attestations.get(native_attestation_path(pins.marinskyrl)),
        executed_commit=commit,
        pinned_commit=pins.marinskyrl,
        verifier_url=pins.verifier_url,
    ):
        differences.append(
            Difference(
                pin="MarinSkyRL commit",
                pinned=pins.marinskyrl,
                executed=commit,
                attest=(
                    f"run make_review --output RUN --attest-native-revision {pins.marinskyrl} "
                    "--atlas-row ROW.json on the machine that executed the review, then publish "
                    "the run again; or review at the pinned commit"
                ),
            )
        )
    runtime = [
        review
        for review in collection.get("reviews") or []
        if isinstance(review, dict) and review.get("method") == "runtime_execution"
    ]
    routes = {(review.get("attributes") or {}).get("route") for review in runtime}
    gym_modes = {
        (review.get("attributes") or {}).get("verifyit_enabled")
        for review in runtime
        if (review.get("attributes") or {}).get("route") != HARBOR_ROUTE
    }
    if pins.mode in ("verifyit", "legacy") and gym_modes:
        wanted = pins.mode == "verifyit"
        if gym_modes != {wanted}:
            differences.append(
                Difference(
                    pin="verifyit mode",
                    pinned=pins.mode,
                    executed=_modes(gym_modes),
                    attest=(
                        "review again with gym_config.<environment>.verifyit_enabled = "
                        f"{'true' if wanted else 'false'} (a mode cannot be attested)"
                    ),
                )
            )
    provenance = collection.get("execution_provenance")
    provenance = provenance if isinstance(provenance, dict) else {}
    if pins.mode == "verifyit" and pins.verifyit is not None:
        verifyit = provenance.get("verifyit")
        differences += _revision_difference(
            pin="verifyit revision",
            pinned=pins.verifyit,
            executed=verifyit.get("source_commit") if isinstance(verifyit, dict) else None,
            attest=f"review again at a MarinSkyRL checkout that pins verifyit {pins.verifyit}",
        )
    if HARBOR_ROUTE in routes and pins.harbor is not None:
        differences += _revision_difference(
            pin="Harbor verifier revision",
            pinned=pins.harbor,
            executed=provenance.get("harbor_commit"),
            attest=f"review again with Harbor at {pins.harbor}",
        )
    return differences


def _revision_difference(*, pin: str, pinned: str, executed: Any, attest: str) -> list[Difference]:
    """The one difference of a revision the execution provenance records, or none."""
    if executed == pinned:
        return []
    return [Difference(pin=pin, pinned=pinned, executed=executed, attest=attest)]


def _modes(values: set[Any]) -> str:
    words = sorted("verifyit" if value else "legacy" for value in values)
    return " and ".join(dict.fromkeys(words))
