"""Every publication check: the exact message, and a refusal that changes nothing."""

import json
import os

import pytest

from reviews.services.validation import PublicationRejected
from tests.reviews.builders import (
    DATA_REVISION,
    GRADING_REVISION,
    SOURCE_ID,
    build_run,
    database_state,
    grading_identity,
    make_row,
    publish,
    review_by_id,
    rewrite_collection,
    source_row,
    sync_rows,
    write_file,
)

pytestmark = pytest.mark.django_db

CURRENT_REVISION = "d" * 40


@pytest.fixture
def source(write_catalog):
    sync_rows(write_catalog, make_row(SOURCE_ID), make_row("MarinSkyRL:other"))
    return source_row()


def refuse(run_dir, message, atlas_id=SOURCE_ID, *, prefix=False):
    before = database_state()
    with pytest.raises(PublicationRejected) as refused:
        publish(run_dir, atlas_id=atlas_id)
    text = str(refused.value)
    assert text.startswith(message) if prefix else text == message
    assert database_state() == before
    assert not (run_dir / "publication" / "grading-applicability.json").exists()
    return text


def test_missing_collection(source, tmp_path):
    run_dir = build_run(tmp_path)
    (run_dir / "quality-reviews.json").unlink()
    refuse(run_dir, "Run directory has no quality-reviews.json")


def test_collection_that_is_not_json(source, tmp_path):
    run_dir = build_run(tmp_path)
    (run_dir / "quality-reviews.json").write_text('{"schema_version": ')
    text = refuse(run_dir, "Review collection is not valid JSON: ", prefix=True)
    assert "Expecting value" in text


def test_schema_missing_top_level_key(source, tmp_path):
    run_dir = build_run(tmp_path)
    rewrite_collection(run_dir, lambda c: c.pop("created_at"))
    refuse(
        run_dir,
        "Review collection does not match quality-review.schema.json at /: "
        "'created_at' is a required property",
    )


def test_schema_format_checking_of_dates(source, tmp_path):
    run_dir = build_run(tmp_path)
    rewrite_collection(run_dir, lambda c: c["reviews"][2].update(reviewed_at="yesterday"))
    refuse(
        run_dir,
        "Review collection does not match quality-review.schema.json at /reviews/2/reviewed_at: "
        "'yesterday' is not a 'date-time'",
    )


def test_schema_is_the_shipped_one_not_the_run_directory_copy(source, tmp_path):
    run_dir = build_run(tmp_path)
    (run_dir / "quality-review.schema.json").write_text('{"type": "object"}')
    rewrite_collection(run_dir, lambda c: c.update(schema_version="9.9.9"))
    refuse(
        run_dir,
        "Review collection does not match quality-review.schema.json at /schema_version: "
        "'0.3.0' was expected",
    )


def test_duplicate_review_identity(source, tmp_path):
    run_dir = build_run(tmp_path)
    rewrite_collection(run_dir, lambda c: c["reviews"][1].update(id=c["reviews"][0]["id"]))
    refuse(run_dir, "Duplicate subject/review identity")


def test_duplicate_subject_identity(source, tmp_path):
    run_dir = build_run(tmp_path)
    rewrite_collection(run_dir, lambda c: c["subjects"].append(dict(c["subjects"][1])))
    refuse(run_dir, "Duplicate subject/review identity")


@pytest.mark.parametrize(
    "mutate",
    [
        lambda c: c["reviews"][0].update(subject_id="missing"),
        lambda c: review_by_id(c, "source-synthesis")["derived_from_review_ids"].append("missing"),
    ],
)
def test_unresolved_review_reference(source, tmp_path, mutate):
    run_dir = build_run(tmp_path)
    rewrite_collection(run_dir, mutate)
    refuse(run_dir, "Unresolved review reference")


def test_evidence_hash_mismatch(source, tmp_path):
    run_dir = build_run(tmp_path)
    (run_dir / "coalescer/parsed.json").write_text("{}\n")
    refuse(run_dir, "Review evidence path/hash mismatch: coalescer/parsed.json")


@pytest.mark.parametrize("bad_path", ["/etc/passwd", "../outside.json", "tasks/../../outside.json"])
def test_evidence_outside_the_run_directory(source, tmp_path, bad_path):
    run_dir = build_run(tmp_path)
    digest = write_file(tmp_path, "outside.json", b"{}\n")

    def cite(collection):
        evidence = collection["reviews"][0]["evidence"][0]
        evidence.update(snapshot_path=bad_path, sha256=digest)

    rewrite_collection(run_dir, cite)
    refuse(run_dir, f"Review evidence path/hash mismatch: {bad_path}")


def test_evidence_symlink_escaping_the_run_directory(source, tmp_path):
    run_dir = build_run(tmp_path)
    digest = write_file(tmp_path, "outside.json", b"{}\n")
    os.symlink(tmp_path / "outside.json", run_dir / "link.json")
    rewrite_collection(
        run_dir,
        lambda c: c["reviews"][0]["evidence"][0].update(snapshot_path="link.json", sha256=digest),
    )
    refuse(run_dir, "Review evidence path/hash mismatch: link.json")


def test_evidence_symlink_inside_the_run_directory_is_followed(source, tmp_path):
    run_dir = build_run(tmp_path)
    digest = write_file(run_dir, "notes/real.json", b"{}\n")
    os.symlink(run_dir / "notes/real.json", run_dir / "link.json")
    rewrite_collection(
        run_dir,
        lambda c: c["reviews"][0]["evidence"][0].update(snapshot_path="link.json", sha256=digest),
    )
    review_id = publish(run_dir)["review_id"]
    assert source_row().review_id == review_id


@pytest.mark.parametrize(
    "mutate",
    [
        lambda c: c["tag_assignments"][0]["target"].update(kind="finding"),
        lambda c: c["tag_assignments"][0]["target"].update(id="missing"),
        lambda c: c["tag_assignments"][0]["evidence_review_ids"].append("missing"),
    ],
)
def test_unresolved_tag_reference(source, tmp_path, mutate):
    run_dir = build_run(tmp_path)
    rewrite_collection(run_dir, mutate)
    refuse(run_dir, "Unresolved tag reference")


def test_native_review_without_commit(source, tmp_path):
    run_dir = build_run(tmp_path, native=False)
    refuse(run_dir, "Native reviews must record the MSkyRL commit")


def test_reused_evidence_with_inspected_commit_is_accepted_but_not_good(source, tmp_path):
    run_dir = build_run(
        tmp_path, native=False, extra_attributes={"inspected_marinskyrl_commit": "e" * 40}
    )
    rewrite_collection(
        run_dir,
        lambda c: c.update(reviews=[r for r in c["reviews"] if r["method"] != "runtime_execution"]),
    )
    rewrite_collection(
        run_dir,
        lambda c: [r.update(derived_from_review_ids=[]) for r in c["reviews"]],
    )
    assert publish(run_dir)["quality"] == "some_issues"


@pytest.mark.parametrize("atlas_id", ["MarinSkyRL:unknown", "MarinSkyRL:retired"])
def test_absent_or_inactive_source(write_catalog, tmp_path, atlas_id):
    sync_rows(write_catalog, make_row(SOURCE_ID), make_row("MarinSkyRL:retired"))
    sync_rows(write_catalog, make_row(SOURCE_ID))
    run_dir = build_run(tmp_path, source_id=atlas_id)
    refuse(run_dir, "Atlas source is absent or inactive", atlas_id=atlas_id)


def test_subject_identifies_another_source(source, tmp_path):
    run_dir = build_run(tmp_path)
    refuse(
        run_dir,
        "Review subject does not identify the requested Atlas population",
        atlas_id="MarinSkyRL:other",
    )


def test_two_source_subjects(source, tmp_path):
    run_dir = build_run(tmp_path)
    rewrite_collection(
        run_dir, lambda c: c["subjects"].append({**c["subjects"][0], "id": "source:again"})
    )
    refuse(run_dir, "Review subject does not identify the requested Atlas population")


def test_imported_collection_without_confirmed_mapping(source, tmp_path):
    run_dir = build_run(tmp_path, native=False)

    def map_unresolved(collection):
        collection["source_mappings"] = [
            {
                "id": "m1",
                "subject_id": collection["subjects"][0]["id"],
                "atlas_source_ids": [],
                "status": "unresolved",
                "applicability": "unknown",
                "evidence": [],
                "note": None,
            }
        ]

    rewrite_collection(run_dir, map_unresolved)
    refuse(run_dir, "Imported review has no confirmed mapping to the requested Atlas population")


@pytest.fixture
def graded_source(write_catalog):
    sync_rows(write_catalog, make_row(SOURCE_ID, grading_revision=GRADING_REVISION))
    return source_row()


@pytest.mark.parametrize(
    "grading",
    [None, grading_identity(source_id="MarinSkyRL:other")],
)
def test_native_review_lacking_grading_identity(graded_source, tmp_path, grading):
    run_dir = build_run(tmp_path, grading=grading)
    refuse(run_dir, "Native review lacks its source-specific executed grading identity")


def test_native_review_with_different_grading_revision(graded_source, tmp_path):
    run_dir = build_run(tmp_path, grading=grading_identity(revision="e" * 64))
    refuse(run_dir, "Executed grading identity differs from the current Atlas source")


def test_reviewed_data_revision_differs(write_catalog, tmp_path):
    sync_rows(write_catalog, make_row(SOURCE_ID, dataset_revision=CURRENT_REVISION))
    refuse(build_run(tmp_path), "Reviewed data revision differs from the current Atlas source")


def _attest(run_dir, **overrides):
    document = {
        "file_path": "data/train.parquet",
        "executed_revision": DATA_REVISION,
        "current_revision": CURRENT_REVISION,
        "component_selector": None,
        "population_count": 100,
        "file_sha256": "f" * 64,
    }
    document.update(overrides)
    name = f"publication/dataset-revision-attestation-{CURRENT_REVISION}.json"
    write_file(run_dir, name, json.dumps(document).encode())


@pytest.mark.parametrize(
    "overrides",
    [
        {"executed_revision": "9" * 40},
        {"current_revision": "8" * 40},
        {"population_count": 99},
        {"file_sha256": "not-a-hash"},
    ],
)
def test_attestation_that_does_not_bridge(write_catalog, tmp_path, overrides):
    sync_rows(write_catalog, make_row(SOURCE_ID, dataset_revision=CURRENT_REVISION))
    run_dir = build_run(tmp_path)
    _attest(run_dir, **overrides)
    refuse(
        run_dir,
        "Dataset revision attestation does not bridge the reviewed and current data revisions",
    )


def test_attestation_bridges_to_the_current_revision(write_catalog, tmp_path):
    sync_rows(write_catalog, make_row(SOURCE_ID, dataset_revision=CURRENT_REVISION))
    run_dir = build_run(tmp_path, population_count=100)
    _attest(run_dir)
    result = publish(run_dir)
    row = source_row()
    assert row.review_source_revision == CURRENT_REVISION
    assert (row.effective_quality, row.review_applicability) == ("good", "current")
    paths = set(row.reviews.get(id=result["review_id"]).artifacts.values_list("path", flat=True))
    assert f"publication/dataset-revision-attestation-{CURRENT_REVISION}.json" in paths


def test_two_source_syntheses(source, tmp_path):
    run_dir = build_run(tmp_path)

    def duplicate(collection):
        extra = dict(review_by_id(collection, "source-synthesis"), id="source-synthesis-2")
        collection["reviews"].append(extra)

    rewrite_collection(run_dir, duplicate)
    refuse(run_dir, "Publish one Atlas source population per review collection")


def test_older_review_than_the_current_one(source, tmp_path):
    import datetime as dt

    publish(build_run(tmp_path, "newer", started_at=dt.datetime(2025, 6, 1, tzinfo=dt.UTC)))
    refuse(build_run(tmp_path, "older"), "A newer review is already current for this source")


def test_cited_evidence_must_be_utf8(source, tmp_path):
    run_dir = build_run(tmp_path)
    digest = write_file(run_dir, "notes/binary.bin", b"\xff\xfe\x00binary")
    rewrite_collection(
        run_dir,
        lambda c: c["reviews"][0]["evidence"].append(
            {
                **c["reviews"][0]["evidence"][0],
                "snapshot_path": "notes/binary.bin",
                "sha256": digest,
            }
        ),
    )
    refuse(run_dir, "Review evidence must be UTF-8 text: notes/binary.bin")


def test_uncited_binary_files_are_skipped(source, tmp_path):
    run_dir = build_run(tmp_path)
    write_file(run_dir, "publication/blob.bin", b"\xff\xfe\x00binary")
    result = publish(run_dir)
    paths = set(
        source_row().reviews.get(id=result["review_id"]).artifacts.values_list("path", flat=True)
    )
    assert "publication/blob.bin" not in paths


def test_evidence_above_the_size_limit(source, tmp_path, settings):
    settings.ATLAS_MAX_ARTIFACT_BYTES = 100_000
    run_dir = build_run(tmp_path)
    write_file(run_dir, "publication/notes.txt", b"x" * 100_001)
    refuse(run_dir, "Review evidence exceeds 100000 bytes: publication/notes.txt")


def test_existing_artifact_with_different_content(source, tmp_path):
    run_dir = build_run(tmp_path)
    publish(run_dir)
    (run_dir / "tasks/0000/execution-000/verifier.stderr").write_text("changed\n")
    refuse(
        run_dir,
        "Artifact tasks/0000/execution-000/verifier.stderr already exists with different content",
    )


def test_checks_run_in_order(source, tmp_path):
    """A collection failing checks 5 and 8 reports the earlier one."""
    run_dir = build_run(tmp_path, source_id="MarinSkyRL:unknown")
    (run_dir / "coalescer/parsed.json").write_text("{}\n")
    refuse(
        run_dir,
        "Review evidence path/hash mismatch: coalescer/parsed.json",
        atlas_id="MarinSkyRL:unknown",
    )


def test_globbed_files_linking_outside_are_not_archived(source, tmp_path):
    run_dir = build_run(tmp_path)
    write_file(tmp_path, "secret.txt", b"outside the run\n")
    stdout = run_dir / "tasks/0000/execution-000/verifier.stdout"
    stdout.unlink()
    os.symlink(tmp_path / "secret.txt", stdout)
    result = publish(run_dir)
    paths = set(
        source_row().reviews.get(id=result["review_id"]).artifacts.values_list("path", flat=True)
    )
    assert "tasks/0000/execution-000/verifier.stdout" not in paths
    assert "tasks/0001/execution-000/verifier.stdout" in paths


@pytest.mark.parametrize(("bad_path", "shown"), [("a\nb.json", "a\\nb.json"), ("a\tb", "a\\tb")])
def test_a_cited_path_no_message_could_print_is_named_escaped(source, tmp_path, bad_path, shown):
    run_dir = build_run(tmp_path)

    def cite(collection):
        collection["reviews"][0]["evidence"][0].update(snapshot_path=bad_path)

    rewrite_collection(run_dir, cite)
    refuse(run_dir, f"Review evidence path/hash mismatch: {shown}")


def test_a_json_pointer_names_a_key_no_message_could_print_escaped():
    from reviews.production.format.collection_checks import json_pointer

    assert json_pointer(["a/b", "k~\ud800", 0]) == "/a~1b/k~0\\ud800/0"
    assert json_pointer([]) == "/"
