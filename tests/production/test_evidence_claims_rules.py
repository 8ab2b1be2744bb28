"""The evidence-claims rule on its own (``format/evidence_claims``): the cases a real run never
produces, held without Django or a verifier."""

from __future__ import annotations

import pytest

from reviews.production.format.evidence_claims import ClaimContradicted, check_runtime_reviews


def runtime_review(**attributes: object) -> dict[str, object]:
    return {
        "id": "r-1",
        "method": "runtime_execution",
        "status": "verified",
        "tests_executed": True,
        "attributes": {"verification": {"status": "verified"}, **attributes},
        "evidence": [],
    }


def test_a_verified_claim_naming_no_native_run_is_refused_in_one_line():
    with pytest.raises(ClaimContradicted) as refused:
        check_runtime_reviews(collection={"reviews": [runtime_review()]}, archive={})
    message = str(refused.value)
    assert "\n" not in message
    assert "review r-1 attributes.execution_path verification.status" in message
    assert message.endswith('review r-1 says "verified"')


def test_an_unverified_claim_naming_no_native_run_claims_nothing_to_check():
    review = runtime_review()
    review["attributes"] = {"verification": {"status": "error"}}
    check_runtime_reviews(collection={"reviews": [review]}, archive={})
