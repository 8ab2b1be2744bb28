"""The identity rule on its own (``reviews.identity``): which pins a rating review's executed
identity differs from, and when a native-revision attestation bridges the commits. The end-to-end
walks on the real gsm8k verifier are in ``tests/curation/test_current_identity.py``."""

from __future__ import annotations

import json

import pytest

from reviews.identity import identity_differences
from reviews.production.format.attestations import (
    NATIVE_REQUIRED_PATHS,
    NATIVE_SCOPE,
    native_attestation_path,
)

PIN = "a" * 40
RAN = "b" * 40
VERIFYIT = "c" * 40
HARBOR = "d" * 40
VERIFIER_URL = f"https://github.com/marin-community/MarinSkyRL/tree/{PIN}/skyrl-gym/envs/gsm8k"


def row(**scope) -> dict:
    return {"verifier_url": VERIFIER_URL, "grading_scope": {"mode": "legacy", **scope}}


def collection(*, commit: str = PIN, route: str = "skyrl_gym", verifyit: bool = False,
               provenance: dict | None = None) -> dict:  # fmt: skip
    attributes = {"route": route, "verifyit_enabled": verifyit}
    return {
        "execution_provenance": {"marinskyrl_commit": commit, **(provenance or {})},
        "reviews": [{"method": "runtime_execution", "attributes": attributes}],
    }


def pins_of(differences) -> list[str]:
    return [difference.pin for difference in differences]


def attestation(**changes) -> dict[str, str]:
    paths = [*NATIVE_REQUIRED_PATHS, "skyrl-gym/envs/gsm8k"]
    document = {
        "reviewed_commit": RAN,
        "registry_commit": PIN,
        "objects": [
            {"path": p, "reviewed_object": "1" * 40, "registry_object": "1" * 40} for p in paths
        ],
        "scope": NATIVE_SCOPE,
        **changes,
    }
    return {native_attestation_path(PIN): json.dumps(document)}


def test_a_row_that_pins_nothing_has_nothing_to_compare():
    assert (
        identity_differences(payload={}, collection=collection(commit=RAN), attestations={}) == []
    )


def test_the_verifier_url_commit_is_the_pin_without_a_grading_scope():
    payload = {"verifier_url": VERIFIER_URL}
    differences = identity_differences(payload=payload, collection=collection(commit=RAN),
                                       attestations={})  # fmt: skip
    assert [(d.pin, d.pinned, d.executed) for d in differences] == [("MarinSkyRL commit", PIN, RAN)]


def test_the_verifyit_mode_and_revision_are_pins():
    payload = row(mode="verifyit", marinskyrl_revision=PIN, verifyit_revision=VERIFYIT)
    off = identity_differences(payload=payload, collection=collection(), attestations={})
    assert pins_of(off) == ["verifyit mode", "verifyit revision"]
    other = collection(verifyit=True, provenance={"verifyit": {"source_commit": RAN}})
    assert pins_of(identity_differences(payload=payload, collection=other, attestations={})) == [
        "verifyit revision"
    ]
    same = collection(verifyit=True, provenance={"verifyit": {"source_commit": VERIFYIT}})
    assert identity_differences(payload=payload, collection=same, attestations={}) == []


def test_a_harbor_route_is_held_to_the_harbor_pin():
    payload = row(mode="harbor", marinskyrl_revision=PIN, harbor_revision=HARBOR)
    ran = collection(route="harbor", provenance={"harbor_commit": None})
    (difference,) = identity_differences(payload=payload, collection=ran, attestations={})
    assert (difference.pin, difference.pinned, difference.executed) == (
        "Harbor verifier revision", HARBOR, None,
    )  # fmt: skip


def test_a_valid_attestation_bridges_the_commits():
    payload = row(marinskyrl_revision=PIN)
    ran = collection(commit=RAN)
    assert identity_differences(payload=payload, collection=ran, attestations=attestation()) == []


@pytest.mark.parametrize(
    "changes",
    [
        {"reviewed_commit": "e" * 40},  # attests another run's commit
        {"registry_commit": "e" * 40},  # to another pin
        {"scope": "Only the registry."},
        {"objects": [{"path": p, "reviewed_object": "1", "registry_object": "1"}
                     for p in NATIVE_REQUIRED_PATHS]},  # the verifier path not compared
        {"objects": [{"path": p, "reviewed_object": "1", "registry_object": "2"}
                     for p in [*NATIVE_REQUIRED_PATHS, "skyrl-gym/envs/gsm8k"]]},  # changed
    ],
    ids=["reviewed", "registry", "scope", "verifier-path", "changed-object"],
)  # fmt: skip
def test_an_attestation_that_does_not_bridge_is_not_taken_on_trust(changes):
    payload = row(marinskyrl_revision=PIN)
    differences = identity_differences(
        payload=payload, collection=collection(commit=RAN), attestations=attestation(**changes)
    )
    assert pins_of(differences) == ["MarinSkyRL commit"]
