"""Validity of a grading binding for a source row.

Pure functions: callers gather the row's revisions, the binding and its proof artifact (in bulk for
the display state, singly for publication and the admin) and ask whether the binding holds.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

PROOF_CLAIM_KEYS = (
    "source_id", "review_id", "source_revision", "captured_verifier_revision", "grading_revision",
)  # fmt: skip


@dataclass(frozen=True)
class RowRevisions:
    """What compares against: the row's current review and revisions."""

    source_id: str
    review_id: str | None
    review_source_revision: str | None
    review_verifier_revision: str | None
    current_data_revision: str | None
    grading_revision: str | None

    @classmethod
    def of(cls, source: Any, payload: dict[str, Any] | None = None) -> RowRevisions:
        """The row's revisions; ``payload`` replaces the stored one when given."""
        payload = (source.payload if payload is None else payload) or {}
        return cls(
            source_id=source.id,
            review_id=source.review_id,
            review_source_revision=source.review_source_revision,
            review_verifier_revision=source.review_verifier_revision,
            current_data_revision=payload.get("dataset_revision"),
            grading_revision=payload.get("grading_revision"),
        )


@dataclass(frozen=True)
class BindingClaim:
    source_id: str
    review_id: str
    source_revision: str | None
    captured_verifier_revision: str | None
    grading_revision: str | None
    evidence_sha256: str


def expected_claims(row: RowRevisions) -> dict[str, Any]:
    """The values binding and proof must both carry for the row."""
    return {
        "source_id": row.source_id,
        "review_id": row.review_id,
        "source_revision": row.current_data_revision,
        "captured_verifier_revision": row.review_verifier_revision,
        "grading_revision": row.grading_revision,
    }


def proof_document(proof_text: str | None) -> dict[str, Any] | None:
    """The proof as a JSON object with schema_version 1 and equivalent true, else None."""
    if proof_text is None:
        return None
    try:
        document = json.loads(proof_text)
    except (ValueError, RecursionError):  # nested thousands deep: not a proof either
        return None
    if not isinstance(document, dict):
        return None
    if document.get("schema_version") != 1 or document.get("equivalent") is not True:
        return None
    return document


def binding_is_valid(
    *,
    row: RowRevisions,
    binding: BindingClaim,
    artifact_sha256: str | None,
    proof_text: str | None,
) -> bool:
    if not row.grading_revision or row.review_id is None:
        return False
    if (
        binding.source_id != row.source_id
        or binding.review_id != row.review_id
        or binding.source_revision != row.review_source_revision
        or binding.grading_revision != row.grading_revision
    ):
        return False
    if artifact_sha256 is None or proof_text is None:
        return False
    proof_sha256 = hashlib.sha256(proof_text.encode("utf-8")).hexdigest()
    if not proof_sha256 == artifact_sha256 == binding.evidence_sha256:
        return False
    proof = proof_document(proof_text)
    if proof is None:
        return False
    expected = expected_claims(row)
    binding_values = {key: getattr(binding, key) for key in PROOF_CLAIM_KEYS}
    return all(
        key in proof and proof[key] == value and binding_values[key] == value
        for key, value in expected.items()
    )


def grading_claim_text(
    *,
    source_id: str,
    review_id: str,
    source_revision: str | None,
    captured_verifier_revision: str | None,
    grading_revision: str,
    execution_grading: dict[str, Any],
) -> str:
    """Publication/grading-applicability.json of a native publication."""
    claim = {
        "schema_version": 1,
        "equivalent": True,
        "source_id": source_id,
        "review_id": review_id,
        "source_revision": source_revision,
        "captured_verifier_revision": captured_verifier_revision,
        "grading_revision": grading_revision,
        "evidence_kind": "current_native_execution",
        "execution_grading": execution_grading,
    }
    return json.dumps(claim, sort_keys=True, indent=2) + "\n"
