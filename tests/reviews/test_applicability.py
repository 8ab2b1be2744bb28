"""Staleness after syncs change a row's revisions and grading bindings."""

import json
from dataclasses import replace

import pytest
from django.utils import timezone

from atlas.contributions import gather_display_contexts
from atlas.models import Source
from atlas.services.display import refresh_display_state, snapshot_of
from reviews.applicability import BindingClaim, RowRevisions, binding_is_valid
from reviews.models import GradingBinding, Review, VerifierIssue
from reviews.services.publication import BINDING_REFUSED, bind_grading_review
from reviews.services.validation import PublicationRejected
from tests.reviews.builders import (
    DATA_REVISION,
    GRADING_REVISION,
    SOURCE_ID,
    VERIFIER_REVISION,
    build_run,
    grading_identity,
    make_row,
    publish,
    source_row,
    sync_rows,
    write_file,
)

pytestmark = pytest.mark.django_db

PROOF_PATH = "publication/grading-equivalence.json"


def shown(row):
    return (row.effective_quality, row.review_applicability, row.review_stale)


def test_dataset_change_makes_the_review_stale_and_back(write_catalog, tmp_path):
    sync_rows(write_catalog, make_row(SOURCE_ID))
    review_id = publish(build_run(tmp_path))["review_id"]
    assert shown(source_row()) == ("good", "current", False)

    sync_rows(write_catalog, make_row(SOURCE_ID, dataset_revision="9" * 40))
    row = source_row()
    assert shown(row) == (None, "stale", True)
    assert row.display_review_id == review_id and row.quality == "good"

    sync_rows(write_catalog, make_row(SOURCE_ID))
    assert shown(source_row()) == ("good", "current", False)


def test_verifier_change_makes_a_legacy_review_stale(write_catalog, tmp_path):
    sync_rows(write_catalog, make_row(SOURCE_ID))
    publish(build_run(tmp_path))
    sync_rows(write_catalog, make_row(SOURCE_ID, verifier_revision="8" * 64))
    row = source_row()
    assert shown(row) == (None, "stale", True) and row.grading_tracking == "legacy"


def test_unrecorded_data_revision_is_unknown_and_keeps_the_rating(write_catalog, tmp_path):
    sync_rows(write_catalog, make_row(SOURCE_ID, dataset_revision=None))
    publish(build_run(tmp_path, dataset_revision=None))
    assert shown(source_row()) == ("good", "unknown", False)


def test_source_specific_tracking_ignores_unrelated_verifier_commits(write_catalog, tmp_path):
    graded = {"grading_revision": GRADING_REVISION}
    sync_rows(write_catalog, make_row(SOURCE_ID, **graded))
    publish(build_run(tmp_path, grading=grading_identity()))
    assert source_row().grading_tracking == "source-specific"

    sync_rows(write_catalog, make_row(SOURCE_ID, verifier_revision="8" * 64, **graded))
    row = source_row()
    assert shown(row) == ("good", "current", False)
    assert row.review_grading_revision == GRADING_REVISION


@pytest.mark.parametrize(
    "changed",
    [
        {"grading_revision": "7" * 64},
        {"grading_revision": GRADING_REVISION, "dataset_revision": "9" * 40},
    ],
)
def test_grading_or_data_change_makes_a_bound_review_stale_after_sync(
    write_catalog, tmp_path, changed
):
    sync_rows(write_catalog, make_row(SOURCE_ID, grading_revision=GRADING_REVISION))
    publish(build_run(tmp_path, grading=grading_identity()))
    sync_rows(write_catalog, make_row(SOURCE_ID, **changed))
    row = source_row()
    assert shown(row) == (None, "stale", True) and row.review_grading_revision is None


def test_binding_validity_follows_the_payload_being_displayed(write_catalog, tmp_path):
    sync_rows(write_catalog, make_row(SOURCE_ID, grading_revision=GRADING_REVISION))
    publish(build_run(tmp_path, grading=grading_identity()))
    changed = make_row(SOURCE_ID, grading_revision="7" * 64)
    assert contexts_for(source_ids=[SOURCE_ID])[SOURCE_ID].valid_grading_binding
    snapshot = replace(snapshot_of(Source.objects.get(id=SOURCE_ID)), payload=changed)
    context = gather_display_contexts(sources=[snapshot])[SOURCE_ID]
    assert context.has_grading_binding and not context.valid_grading_binding
    refresh_display_state(source_ids=[SOURCE_ID])
    assert source_row().grading_tracking == "source-specific"


def test_contexts_count_open_issues_and_bindings(write_catalog, tmp_path):
    sync_rows(
        write_catalog,
        make_row(SOURCE_ID, grading_revision=GRADING_REVISION),
        make_row("MarinSkyRL:plain"),
    )
    review_id = publish(build_run(tmp_path, grading=grading_identity()))["review_id"]
    now = timezone.now()
    for number in (1, 2):
        VerifierIssue.objects.create(
            source_id=SOURCE_ID,
            issue_url=f"https://github.com/o/r/issues/{number}",
            review_id=review_id,
            created_at=now,
            updated_at=now,
        )
    contexts = contexts_for(source_ids=[SOURCE_ID, "MarinSkyRL:plain"])
    assert contexts[SOURCE_ID].open_issue_count == 2
    assert contexts[SOURCE_ID].has_grading_binding and contexts[SOURCE_ID].valid_grading_binding
    plain = contexts["MarinSkyRL:plain"]
    assert (plain.open_issue_count, plain.has_grading_binding, plain.valid_grading_binding) == (
        0,
        False,
        False,
    )


def test_a_forced_sync_keeps_a_current_state_with_issues_unwritten(write_catalog, tmp_path):
    """A forced sync reads the stored display state back (open issues as JSON included) and
    finds it equal to the one it recomputes: nothing is written; a stale column is repaired."""
    from atlas.models import RefreshRun

    rows = [make_row(SOURCE_ID, grading_revision=GRADING_REVISION), make_row("MarinSkyRL:plain")]
    sync_rows(write_catalog, *rows)
    review_id = publish(build_run(tmp_path, grading=grading_identity()))["review_id"]
    now = timezone.now()
    VerifierIssue.objects.create(
        source_id=SOURCE_ID,
        issue_url="https://github.com/o/r/issues/1",
        review_id=review_id,
        created_at=now,
        updated_at=now,
    )
    refresh_display_state(source_ids=[SOURCE_ID])
    stored = source_row()
    assert stored.open_issue_count == 1 and len(stored.open_issues) == 1
    result = sync_rows(write_catalog, *rows)
    assert RefreshRun.objects.get(id=result["run"]).rows_written == 0
    Source.objects.filter(id=SOURCE_ID).update(open_issues=[])
    result = sync_rows(write_catalog, *rows)
    assert RefreshRun.objects.get(id=result["run"]).rows_written == 1
    assert source_row().open_issues == stored.open_issues


def contexts_for(*, source_ids: list[str]) -> dict:
    sources = Source.objects.filter(id__in=source_ids).order_by("id")
    return gather_display_contexts(sources=[snapshot_of(source) for source in sources])


# --- the validity rule on its own ---

ROW = RowRevisions(
    source_id=SOURCE_ID,
    review_id="r" * 64,
    review_source_revision=DATA_REVISION,
    review_verifier_revision=VERIFIER_REVISION,
    current_data_revision=DATA_REVISION,
    grading_revision=GRADING_REVISION,
)


def proof(**overrides):
    document = {
        "schema_version": 1,
        "equivalent": True,
        "source_id": SOURCE_ID,
        "review_id": "r" * 64,
        "source_revision": DATA_REVISION,
        "captured_verifier_revision": VERIFIER_REVISION,
        "grading_revision": GRADING_REVISION,
        "evidence_kind": "equivalence_audit",
    }
    document.update(overrides)
    return json.dumps(document)


def check(text, *, row=ROW, artifact_sha=None, **binding_overrides):
    import hashlib

    digest = hashlib.sha256(text.encode()).hexdigest() if text is not None else None
    fields = {
        "source_id": SOURCE_ID,
        "review_id": "r" * 64,
        "source_revision": DATA_REVISION,
        "captured_verifier_revision": VERIFIER_REVISION,
        "grading_revision": GRADING_REVISION,
        "evidence_sha256": digest or "",
    }
    fields.update(binding_overrides)
    return binding_is_valid(
        row=row,
        binding=BindingClaim(**fields),
        artifact_sha256=artifact_sha or digest,
        proof_text=text,
    )


def test_valid_binding():
    assert check(proof())


@pytest.mark.parametrize(
    "text",
    [
        proof(equivalent=False),
        proof(schema_version=2),
        proof(captured_verifier_revision="x"),
        proof(source_revision="9" * 40),
        proof(review_id="s" * 64),
        "not json",
        "[1, 2]",
        None,
    ],
)
def test_invalid_proof(text):
    assert not check(text)


def test_binding_columns_must_match_the_row():
    assert not check(proof(), review_id="s" * 64)
    assert not check(proof(), grading_revision="e" * 64)
    assert not check(proof(), evidence_sha256="0" * 64)
    assert not check(proof(), artifact_sha="0" * 64)


def test_row_without_grading_revision_has_no_valid_binding():
    row = RowRevisions(**{**ROW.__dict__, "grading_revision": None})
    assert not check(proof(grading_revision=None), row=row, grading_revision=None)


# --- the curator's "Bind grading review" ---


@pytest.fixture
def review_with_proof(write_catalog, tmp_path):
    """A legacy-published review; the catalog then gains a grading revision."""
    sync_rows(write_catalog, make_row(SOURCE_ID))
    run_dir = build_run(tmp_path)
    review_id = publish(run_dir)["review_id"]
    review = Review.objects.get(id=review_id)
    return review, run_dir


def _publish_proof(run_dir, review_id, **overrides):
    document = json.loads(proof(review_id=review_id, **overrides))
    write_file(run_dir, PROOF_PATH, json.dumps(document, indent=2).encode())
    publish(run_dir)


def test_curator_binding_enrols_the_source(review_with_proof, write_catalog):
    review, run_dir = review_with_proof
    _publish_proof(run_dir, review.id)
    sync_rows(
        write_catalog,
        make_row(SOURCE_ID, grading_revision=GRADING_REVISION, verifier_revision="8" * 64),
    )
    assert shown(source_row()) == (None, "stale", True)

    binding = bind_grading_review(review=review, evidence_path=PROOF_PATH)

    stored = GradingBinding.objects.get(pk=binding.pk)
    proof = review.artifacts.get(path=PROOF_PATH)
    assert (stored.evidence_sha256, stored.grading_revision) == (proof.sha256, GRADING_REVISION)
    row = source_row()
    assert row.grading_tracking == "source-specific"
    assert shown(row) == ("good", "current", False)


@pytest.mark.parametrize(
    "overrides",
    [{"equivalent": False}, {"grading_revision": "e" * 64}, {"source_id": "MarinSkyRL:other"}],
)
def test_curator_binding_refused_when_the_proof_does_not_hold(
    review_with_proof, write_catalog, overrides
):
    review, run_dir = review_with_proof
    _publish_proof(run_dir, review.id, **overrides)
    sync_rows(write_catalog, make_row(SOURCE_ID, grading_revision=GRADING_REVISION))
    with pytest.raises(PublicationRejected) as refused:
        bind_grading_review(review=review, evidence_path=PROOF_PATH)
    assert str(refused.value) == BINDING_REFUSED
    assert not GradingBinding.objects.exists()
    assert source_row().grading_tracking == "legacy"


def test_curator_binding_needs_an_artifact(review_with_proof, write_catalog):
    review, _ = review_with_proof
    sync_rows(write_catalog, make_row(SOURCE_ID, grading_revision=GRADING_REVISION))
    with pytest.raises(PublicationRejected):
        bind_grading_review(review=review, evidence_path="publication/missing.json")
    assert not GradingBinding.objects.exists()
