"""Random corruptions of review runs, difficulty runs and their uploads (seeded, so a failure
replays): every input is either accepted, with what it carried stored unchanged (read back before
the case is rolled back), or refused with the intake's own refusal — a message a page, a log and
the database can hold — and a refusal writes nothing.

A first run of these found, among others: a date-time whose UTC instant lies outside the calendar
(``9999-12-31T23:59:59-23:59``) crashing the future check; a file name that is not UTF-8 reaching
the database (its lone surrogates cannot be stored); ``run.json`` or an attestation nested
thousands deep raising ``RecursionError``; and paths in a difficulty attestation or report that the
operating system cannot name (a NUL, a lone surrogate, a name too long) raising instead of being
refused."""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import io
import json
import os
import random
import re
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction
from django.test import TestCase

from atlas.models import Source
from difficulty.publication import DifficultyPublicationError, publish_difficulty_run
from difficulty.reports import REPORT_PATH
from reviews.models import GradingBinding, Review, ReviewArtifact, ReviewPublication
from reviews.production.format.evidence_set import COLLECTION_FILE, GRADING_CLAIM_PATH
from reviews.services.validation import PublicationRejected
from reviews.vocabularies import ReviewKind
from tests.difficulty.conftest import ATLAS_ID as DIFFICULTY_ID
from tests.difficulty.conftest import make_source as make_difficulty_source
from tests.difficulty.example_reports import write_example_difficulty
from tests.hostile.conftest import fingerprint
from tests.reviews.builders import (
    GRADING_REVISION,
    SOURCE_ID,
    build_run,
    grading_identity,
    make_row,
    publish,
    sync_rows,
)

pytestmark = pytest.mark.django_db

ODD_STRINGS = [
    "\ud800", "k\udfffz", "\x00", "a\nb", "", " ", "é 😀", "x" * 300, "javascript:alert(1)",
    "0" * 64, "small",
]  # fmt: skip
# Odd values of the same shape where a date-time or a run-relative path was.
ODD_TIMES = [
    "9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+01:00", "9999-12-31T00:00:00Z",
    "2025-13-01T00:00:00Z", "2025-02-29T00:00:00Z", "2025-03-03t12:00:00z",
    "2025-03-03T12:00:00+24:00", "2025-03-03T12:00:00.1234567890Z", "2025-03-03T12:00:00+23:59",
    "2025-03-03T12:00:00-16:00",
]  # fmt: skip
ODD_PATHS = [
    "x" * 300, "a/" * 200 + "b", "d/" + "x" * 256 + "/f.json", "../escape.json", "/etc/passwd",
    "a\\b", ".", "publication/../../x", "difficulty", "difficulty.json/x", "a\x00b", "\udcff/x",
    "\ud800.json", "run.json", "//x",
]  # fmt: skip
ODD_VALUES: list[Any] = [
    2**70, -(2**70), -1, 0, 1.5, float("inf"), True, False, None, [], {}, {"k\udc00": 1},
    ["\ud83d"], [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
    {"\x00": 1}, [None, {}], {"path": "\ud800"},
]  # fmt: skip
ODD_KEYS = ["k\ud800", "\x00", "\n", "", "x" * 300, "id"]
TIME_LIKE = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]")
DEEP = b"[" * 100_000 + b"]" * 100_000


# --- mutation of a JSON document -----------------------------------------------------------------


def places(value: Any, found: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key or index) of a document, containers and scalars alike."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        found.append((value, key))
        if isinstance(item, (dict, list)):
            places(item, found)
    return found


def odd_value(generator: random.Random, current: Any) -> Any:
    """An odd value, more often one of the same shape (an odd date-time where a date-time was, an
    odd path where a path was), so formats, enumerations and paths meet odd text, not only the
    type check."""
    if isinstance(current, str) and generator.random() < 0.8:
        if TIME_LIKE.match(current):
            return generator.choice(ODD_TIMES)
        if "/" in current or current.endswith((".json", ".jsonl", ".txt")):
            return generator.choice(ODD_PATHS)
        return generator.choice(ODD_STRINGS)
    return copy.deepcopy(generator.choice([*ODD_VALUES, *ODD_STRINGS, *ODD_PATHS, *ODD_TIMES]))


def mutate(document: Any, generator: random.Random) -> None:
    for _ in range(generator.randint(1, 2)):
        found = places(document, [])
        if generator.random() < 0.5:  # strings hold the formats, enumerations and paths
            found = [place for place in found if isinstance(place[0][place[1]], str)] or found
        container, key = generator.choice(found)
        step = generator.random()
        if step < 0.7:
            container[key] = odd_value(generator, container[key])
        elif step < 0.85 and isinstance(container, dict):
            container[generator.choice(ODD_KEYS)] = container.pop(key)
        elif step < 0.9 and isinstance(container, dict):
            container[generator.choice(ODD_KEYS)] = odd_value(generator, None)
        else:
            del container[key]


def json_bytes(document: Any) -> bytes:
    """The document as JSON with its odd values written as escapes; infinity as ``1e999``."""
    return json.dumps(document, indent=1).replace("Infinity", "1e999").encode("ascii")


def corrupt_bytes(data: bytes, generator: random.Random) -> bytes:
    changed = bytearray(data)
    odd = [b"{", b"}", b"]", b",", b'"', b"\\ud800", b"\\u0000", b"\xff", b"\xc3", b"1e999",
           b"NaN", b"-", b"\n"]  # fmt: skip
    for _ in range(generator.randint(1, 3)):
        at = generator.randrange(len(changed))
        if generator.random() < 0.5:
            del changed[at : at + generator.randint(1, 4)]
        else:
            changed[at:at] = generator.choice(odd)
    return bytes(changed)


# --- what every outcome must be ------------------------------------------------------------------


Check = Callable[[dict[str, Any], list[ReviewArtifact]], None]


def refused_or_accepted(
    publish_once: Callable[[], Any], refusal: type[Exception], replay: str, *, as_given: Check
) -> str | None:
    """Run one intake in a savepoint that is always rolled back (each case starts from the same
    tables); returns the refusal message, None when accepted. A refusal must leave every table
    as it was and carry a message (``assert_precise``); an acceptance must have stored what the
    intake was given: ``as_given`` reads it back, before the rollback, with the result and the
    artifacts this intake wrote or changed."""
    before = fingerprint()
    digests = artifact_digests()
    message = None
    try:
        with transaction.atomic():
            try:
                result = publish_once()
            except refusal as exc:
                message = str(exc)
                assert fingerprint() == before, f"a refusal wrote ({replay}): {message}"
            else:
                assert_stored_as_given(as_given, result, digests, replay)
            raise _RolledBack
    except _RolledBack:
        pass
    except AssertionError:
        raise
    except Exception as exc:
        raise AssertionError(f"not a refusal ({replay}): {type(exc).__name__}: {exc!r}") from exc
    if message is not None:
        assert_precise(message, replay)
    return message


class _RolledBack(Exception):
    pass


def assert_precise(message: str, replay: str) -> None:
    """A refusal a page, a log and the database can hold, saying what is wrong: UTF-8 text that
    is not blank, not an exception's name or a traceback."""
    message.encode("utf-8")
    assert message.strip(), f"{replay}: {message!r}"
    assert "Traceback" not in message, f"{replay}: {message!r}"
    assert not re.match(r"^[A-Za-z]+(Error|Exception)\b", message), f"{replay}: {message!r}"


# --- what an acceptance must have stored ---------------------------------------------------------


def artifact_digests() -> dict[int, str]:
    return dict(ReviewArtifact.objects.values_list("pk", "sha256"))


def assert_stored_as_given(
    as_given: Check, result: dict[str, Any], digests: dict[int, str], replay: str
) -> None:
    """``as_given`` on the intake's result and the artifacts written or changed since
    ``digests`` were taken."""
    written = [
        artifact
        for artifact in ReviewArtifact.objects.order_by("pk")
        if digests.get(artifact.pk) != artifact.sha256
    ]
    try:
        as_given(result, written)
    except AssertionError as exc:
        raise AssertionError(f"accepted, stored otherwise ({replay}): {exc}") from exc


def given_files(run_dir: Path, extra: tuple[tuple[str, bytes], ...] = ()) -> dict[str, bytes]:
    """Every regular file of a run by run-relative path (a name that is not UTF-8 with surrogate
    escapes), read before the intake, and ``extra`` files an upload adds."""
    found: dict[str, bytes] = {}
    for folder, _, names in os.walk(run_dir):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                found[os.path.relpath(path, run_dir).replace(os.sep, "/")] = Path(path).read_bytes()
    found.update(extra)
    return found


def moment(text: str) -> dt.datetime:
    """An RFC 3339 date-time as the standard library reads it (fractions kept to microseconds)."""
    return dt.datetime.fromisoformat(text.upper().replace("Z", "+00:00"))


def same_json(stored: Any, given: Any) -> bool:
    """Equal as JSON, types included (``True`` is not ``1``, ``1.0`` is not ``1``)."""
    return json.dumps(stored, sort_keys=True) == json.dumps(given, sort_keys=True)


def assert_files_as_given(artifacts: list[ReviewArtifact], given: dict[str, bytes]) -> None:
    for artifact in artifacts:
        assert artifact.path in given, f"stored a file it was not given: {artifact.path!r}"
        data = given[artifact.path]
        assert artifact.content.encode("utf-8") == data, artifact.path
        assert (artifact.sha256, artifact.size) == (hashlib.sha256(data).hexdigest(), len(data))


def review_as_given(
    run_dir: Path, atlas_id: str = SOURCE_ID, extra: tuple[tuple[str, bytes], ...] = ()
) -> Check:
    """An accepted review run: the collection stored is the bytes given (its id their SHA-256)
    and the document they hold, every artifact of the review is a file of the run byte for byte,
    and every file the collection cites is there with the digest it cites."""
    given = given_files(run_dir, extra)

    def check(result: dict[str, Any], written: list[ReviewArtifact]) -> None:
        raw = given[COLLECTION_FILE]
        review = Review.objects.get(id=result["review_id"])
        assert review.id == hashlib.sha256(raw).hexdigest()
        assert review.source_id == result["atlas_id"] == atlas_id
        collection = json.loads(raw)
        assert same_json(review.collection, collection), "the collection stored differs"
        judged = [item["reviewed_at"] for item in collection["reviews"] if item["reviewed_at"]]
        assert review.updated_at == max(map(moment, judged), default=None)
        artifacts = {artifact.path: artifact for artifact in review.artifacts.all()}
        claim = artifacts.pop(GRADING_CLAIM_PATH, None)  # the publisher's own proof
        if claim is not None:
            assert GradingBinding.objects.filter(
                review=review, evidence_path=GRADING_CLAIM_PATH, evidence_sha256=claim.sha256
            ).exists()
        assert_files_as_given(list(artifacts.values()), given)
        assert {artifact.path for artifact in written} <= {*artifacts, GRADING_CLAIM_PATH}
        assert COLLECTION_FILE in artifacts
        for item in collection["reviews"]:
            for evidence in item["evidence"]:
                if evidence.get("snapshot_path") is not None:
                    cited = artifacts.get(evidence["snapshot_path"])
                    assert cited is not None, f"cited, not stored: {evidence['snapshot_path']!r}"
                    assert cited.sha256 == evidence["sha256"], evidence["snapshot_path"]
        if result["kind"] == ReviewKind.RATING:
            source = Source.objects.get(id=atlas_id)
            assert (source.review_id, source.review_date) == (review.id, review.updated_at)
            assert source.traces == sum(
                1 for item in collection["reviews"] if item["method"] == "runtime_execution"
            )

    return check


def difficulty_as_given(run_dir: Path, extra: tuple[tuple[str, bytes], ...] = ()) -> Check:
    """An accepted difficulty run: the source's current review holds the report given, byte for
    byte, every artifact this intake wrote is a file of the run byte for byte, and every file at
    or below a path the report names for its evidence is stored."""
    given = given_files(run_dir, extra)

    def check(result: dict[str, Any], written: list[ReviewArtifact]) -> None:
        source = Source.objects.get(id=DIFFICULTY_ID)
        assert result["review_id"] == source.review_id
        assert source.difficulty == result["difficulty"]
        stored = {
            artifact.path: artifact
            for artifact in ReviewArtifact.objects.filter(review_id=source.review_id)
        }
        assert REPORT_PATH in stored
        assert_files_as_given([stored[REPORT_PATH], *written], given)
        report = json.loads(given[REPORT_PATH])
        for named in evidence_paths(report):
            below = [path for path in given if path == named or path.startswith(f"{named}/")]
            missing = [path for path in below if path not in stored]
            assert not missing, f"named {named!r}, not stored: {missing[0]!r}"

    return check


def evidence_paths(report: dict[str, Any]) -> list[str]:
    """The run-relative paths a report names for its evidence: protocol artifacts, run identities
    and attempts."""

    def items(container: Any, key: str) -> list[dict[str, Any]]:
        found = container.get(key) if isinstance(container, dict) else None
        return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []

    protocol = report.get("protocol")
    paths = [item.get("path") for item in items(protocol, "artifacts")]
    paths += [item.get("run_identity_path") for item in items(protocol, "run_identities")]
    for model in items(report, "models"):
        paths += [outcome.get("execution_path") for outcome in items(model, "task_outcomes")]
    return [path for path in paths if isinstance(path, str) and path]


def odd_values(data: bytes, generator: random.Random) -> bytes:
    """The JSON document ``data`` with one or two of its values, keys or members made odd."""
    document = json.loads(data)
    mutate(document, generator)
    return json_bytes(document)


def fuzzed(
    path: Path,
    *,
    changed: Callable[[bytes, random.Random], bytes],
    seed: int,
    cases: int,
    publish_once: Callable[[], Any],
    refusal: type[Exception],
    as_given: Callable[[], Check],
) -> None:
    """``cases`` seeded changes (``changed``: ``odd_values`` or ``corrupt_bytes``) of the file at
    ``path``, each published once; ``as_given`` reads what each case gives the intake."""
    generator = random.Random(seed)
    original = path.read_bytes()
    for case in range(cases):
        path.write_bytes(changed(original, generator))
        refused_or_accepted(publish_once, refusal, f"case {case}", as_given=as_given())


@pytest.fixture
def review_run(write_catalog, tmp_path) -> Path:
    sync_rows(write_catalog, make_row(SOURCE_ID))
    return build_run(tmp_path, "pristine")


def test_odd_values_in_a_review_collection(review_run):
    fuzzed(
        review_run / "quality-reviews.json",
        changed=odd_values,
        seed=1,
        cases=200,
        publish_once=lambda: publish(review_run),
        refusal=PublicationRejected,
        as_given=lambda: review_as_given(review_run),
    )


def test_corrupted_review_collection_bytes(review_run):
    fuzzed(
        review_run / "quality-reviews.json",
        changed=corrupt_bytes,
        seed=5,
        cases=80,
        publish_once=lambda: publish(review_run),
        refusal=PublicationRejected,
        as_given=lambda: review_as_given(review_run),
    )


def odd_name(generator: random.Random) -> bytes:
    return generator.choice(
        [b"\xff.json", b"a\xc3(.json", b"\xed\xa0\x80.json", b"new\nline.json", b"x" * 250,
         b"caf\xc3\xa9.json", b" .json"]
    )  # fmt: skip


def odd_file_bytes(generator: random.Random) -> bytes:
    return generator.choice(
        [DEEP, b"{}", b"\xff\xfe", b'{"a": NaN}', b'{"\\ud800": 1}', b"\x00", b"",
         b'{"grading": ' + DEEP + b"}", b'{"grading": {"source_id": "\\ud800"}}']
    )  # fmt: skip


def test_odd_files_in_a_review_run(write_catalog, tmp_path):
    """Files the publisher reads or archives beside the collection: run.json (read for a native
    run's grading identity), dataset-revision attestations (read when the revisions differ),
    publication/ and execution files with odd names and contents."""
    generator = random.Random(11)
    sync_rows(
        write_catalog,
        make_row(SOURCE_ID, grading_revision=GRADING_REVISION),
        make_row("MarinSkyRL:moved", dataset_revision="e" * 40),
    )
    pristine = {
        SOURCE_ID: build_run(tmp_path, "graded", grading=grading_identity()),
        "MarinSkyRL:moved": build_run(tmp_path, "moved", source_id="MarinSkyRL:moved"),
    }
    for case in range(40):
        atlas_id = generator.choice(sorted(pristine))
        run_dir = tmp_path / f"case-{case}"
        shutil.copytree(pristine[atlas_id], run_dir)
        for _ in range(generator.randint(1, 3)):
            folder = generator.choice(
                [b"publication", b"tasks/0001/execution-001",
                 b"tasks/0001/execution-001/solver/turn-\xff"]
            )  # fmt: skip
            choice = generator.random()
            if choice < 0.3:
                name = b"run.json"
                folder = b""
            elif choice < 0.55:
                name = b"dataset-revision-attestation-" + b"e" * 40 + b".json"
                folder = b"publication"
            elif choice < 0.8:
                name = odd_name(generator)
            else:
                name = generator.choice([b"input.json", b"response.json", b"attempt.json"])
            target = os.path.join(os.fsencode(run_dir), folder, name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(odd_file_bytes(generator))
        refused_or_accepted(
            lambda run_dir=run_dir, atlas_id=atlas_id: publish(run_dir, atlas_id=atlas_id),
            PublicationRejected,
            f"case {case}",
            as_given=review_as_given(run_dir, atlas_id),
        )
        shutil.rmtree(run_dir)


# --- difficulty reports --------------------------------------------------------------------------


@pytest.fixture
def difficulty_run(tmp_path) -> Path:
    make_difficulty_source()
    run_dir = tmp_path / "difficulty-run"
    run_dir.mkdir()
    write_example_difficulty(run_dir=run_dir, atlas_id=DIFFICULTY_ID, source_revision=None)
    return run_dir


def publish_difficulty(run_dir: Path) -> Callable[[], Any]:
    return lambda: publish_difficulty_run(run_dir=run_dir, atlas_id=DIFFICULTY_ID)


def test_odd_values_in_a_difficulty_report(difficulty_run):
    fuzzed(
        difficulty_run / "difficulty.json",
        changed=odd_values,
        seed=23,
        cases=150,
        publish_once=publish_difficulty(difficulty_run),
        refusal=DifficultyPublicationError,
        as_given=lambda: difficulty_as_given(difficulty_run),
    )


def test_corrupted_difficulty_report_bytes(difficulty_run):
    fuzzed(
        difficulty_run / "difficulty.json",
        changed=corrupt_bytes,
        seed=8,
        cases=100,
        publish_once=publish_difficulty(difficulty_run),
        refusal=DifficultyPublicationError,
        as_given=lambda: difficulty_as_given(difficulty_run),
    )


def attestation(generator: random.Random) -> bytes:
    """An execution-implementation attestation, differing or matching, with odd values."""
    matching = generator.random() < 0.5
    document: dict[str, Any] = {
        "schema_version": 1,
        "original": {"definitions_sha256": "a" * 64},
        "executed": {"definitions_sha256": "a" * 64 if matching else "b" * 64},
        "definitions": [{"name": "f", "original_sha256": "c", "executed_sha256": "c"}],
        "matching": matching,
        "changed_code_validation": [
            {"path": "difficulty/context.json"},
            {"url": "https://example.org/validation", "path": "difficulty/context.json"},
        ],
    }
    mutate(document, generator)
    return json_bytes(document) if generator.random() < 0.9 else DEEP


def test_odd_attestations_and_files_in_a_difficulty_run(difficulty_run, tmp_path):
    generator = random.Random(17)
    for case in range(60):
        run_dir = tmp_path / f"case-{case}"
        shutil.copytree(difficulty_run, run_dir)
        if generator.random() < 0.6:
            (run_dir / "publication-execution-implementation-attestation.json").write_bytes(
                attestation(generator)
            )
        if generator.random() < 0.5:
            folder = generator.choice([b"difficulty", b"difficulty/\xff", b"difficulty/history"])
            target = os.path.join(os.fsencode(run_dir), folder, odd_name(generator))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(odd_file_bytes(generator))
        refused_or_accepted(
            publish_difficulty(run_dir),
            DifficultyPublicationError,
            f"case {case}",
            as_given=difficulty_as_given(run_dir),
        )
        shutil.rmtree(run_dir)


# --- uploads through the API ---------------------------------------------------------------------


def tar_of(run_dir: Path, extra: list[tuple[str, bytes]]) -> io.BytesIO:
    """The run as a .tar.gz; ``extra`` members are named with surrogate escapes for raw bytes."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.GNU_FORMAT) as bundle:
        for path in sorted(run_dir.rglob("*")):
            if path.is_file():
                bundle.add(path, arcname=path.relative_to(run_dir).as_posix())
        for name, data in extra:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    buffer.name = "run.tar.gz"
    return buffer


def test_odd_member_names_in_uploads(review_run, difficulty_run):
    """A member name that is not UTF-8 (or is unsafe, or both) fails the job with a message the
    job row can store, or is left out of a publication that stores the rest as given; the job's
    state is always readable."""
    from tests.reviews.test_api_publications import URL, client_for

    generator = random.Random(3)
    publisher = client_for(permitted=True)
    names = ["publication/\udcff.json", "tasks/0001/execution-001/\udcc3(.json",
             "../\udcff", "/\udcff", "publication/x\udcff/../../../y", "difficulty/\udcff.json",
             "publication/\udced\udca0\udc80.json"]  # fmt: skip
    for case in range(12):
        kind = generator.choice(["review", "difficulty"])
        run_dir, atlas_id = (
            (review_run, SOURCE_ID) if kind == "review" else (difficulty_run, DIFFICULTY_ID)
        )
        extra = [(generator.choice(names), odd_file_bytes(generator)[:64])]
        before = fingerprint(skip=("review_publications",))
        digests = artifact_digests()
        as_given = (review_as_given if kind == "review" else difficulty_as_given)(
            run_dir, extra=tuple(extra)
        )
        with TestCase.captureOnCommitCallbacks(execute=True):
            response = publisher.post(
                URL,
                {"atlas_id": atlas_id, "type": kind, "archive": tar_of(run_dir, extra)},
                format="multipart",
            )
        assert response.status_code == 202, (case, response.content)
        state = publisher.get(response.json()["url"])
        assert state.status_code == 200, (case, state.content)
        body = state.json()
        replay = f"case {case}: {extra[0][0]!r}"
        assert body["status"] in {"published", "failed"}, replay
        if body["status"] == "failed":
            assert_precise(body["error"], replay)
            assert not body["error"].startswith("Publication import failed"), replay
            assert fingerprint(skip=("review_publications",)) == before, replay
        else:
            assert_stored_as_given(as_given, body["result"], digests, replay)
        ReviewPublication.objects.all().delete()


# --- the inputs these found, replayed exactly ----------------------------------------------------


def test_a_judgment_time_beyond_the_calendar_in_utc(review_run):
    collection = json.loads((review_run / "quality-reviews.json").read_bytes())
    collection["reviews"][0]["reviewed_at"] = "9999-12-31T23:59:59-23:59"
    (review_run / "quality-reviews.json").write_bytes(json_bytes(collection))
    message = refused_or_accepted(
        lambda: publish(review_run),
        PublicationRejected,
        "time",
        as_given=review_as_given(review_run),
    )
    assert message == (
        "Review collection does not match quality-review.schema.json at /reviews/0/reviewed_at: "
        "'9999-12-31T23:59:59-23:59' is not a 'date-time'"
    )


@pytest.mark.parametrize("offset", ["+23:59", "-16:00"])
def test_a_judgment_time_with_an_offset_the_database_cannot_store(review_run, offset, tables):
    collection = json.loads((review_run / "quality-reviews.json").read_bytes())
    moment = f"2025-03-03T12:00:00{offset}"
    collection["reviews"][0]["reviewed_at"] = moment
    (review_run / "quality-reviews.json").write_bytes(json_bytes(collection))
    tables.before()
    with pytest.raises(PublicationRejected) as refused:
        publish(review_run)
    assert str(refused.value) == (
        "Review collection does not match quality-review.schema.json at /reviews/0/reviewed_at: "
        f"'{moment}' is not a 'date-time'"
    )
    tables.assert_unchanged()


def test_a_review_run_file_named_with_bytes_that_are_not_utf8(review_run):
    (review_run / "publication").mkdir(exist_ok=True)
    with open(os.path.join(os.fsencode(review_run), b"publication", b"\xff.json"), "wb") as file:
        file.write(b"{}")
    # Published with the file left out, as an uncited file that is not text would be.
    review_id = publish(review_run)["review_id"]
    paths = ReviewArtifact.objects.filter(review_id=review_id).values_list("path", flat=True)
    assert "quality-reviews.json" in paths and not any("\udcff" in path for path in paths)


@pytest.mark.parametrize("folder", ["graded", "moved"])
def test_run_files_nested_too_deeply(write_catalog, tmp_path, folder):
    sync_rows(
        write_catalog,
        make_row(SOURCE_ID, grading_revision=GRADING_REVISION),
        make_row("MarinSkyRL:moved", dataset_revision="e" * 40),
    )
    if folder == "graded":
        run_dir, atlas_id = build_run(tmp_path, grading=grading_identity()), SOURCE_ID
        (run_dir / "run.json").write_bytes(DEEP)
        expected = "Native review lacks its source-specific executed grading identity"
    else:
        run_dir, atlas_id = build_run(tmp_path, source_id="MarinSkyRL:moved"), "MarinSkyRL:moved"
        name = f"dataset-revision-attestation-{'e' * 40}.json"
        (run_dir / "publication").mkdir(exist_ok=True)
        (run_dir / "publication" / name).write_bytes(DEEP)
        expected = (
            "Dataset revision attestation does not bridge the reviewed and current data revisions"
        )
    message = refused_or_accepted(
        lambda: publish(run_dir, atlas_id=atlas_id),
        PublicationRejected,
        "",
        as_given=review_as_given(run_dir, atlas_id),
    )
    assert message == expected


def test_a_difficulty_path_too_long_to_name(difficulty_run):
    path = difficulty_run / "difficulty.json"
    report = json.loads(path.read_bytes())
    report["protocol"].setdefault("artifacts", []).append({"path": "x" * 300})
    report["models"][0]["task_outcomes"][0]["execution_path"] = "y" * 300
    path.write_bytes(json_bytes(report))
    message = refused_or_accepted(
        publish_difficulty(difficulty_run),
        DifficultyPublicationError,
        "",
        as_given=difficulty_as_given(difficulty_run),
    )
    assert message == f"Difficulty evidence missing: {'y' * 300}"


@pytest.mark.parametrize(
    ("validation", "message"),
    [
        ({"path": "a\x00b"}, "Execution implementation differs from the original run; "
         "publish validation of the changed execution code"),
        ({"path": "\ud800"}, "Execution implementation differs from the original run; "
         "publish validation of the changed execution code"),
        ({"path": "x" * 300}, "Execution implementation differs from the original run; "
         "publish validation of the changed execution code"),
        ({"url": "https://example.org/v", "path": "\ud800"}, None),
        ({"url": "https://example.org/v", "path": "x" * 300}, None),
        (None, "Execution implementation attestation is inconsistent"),
    ],
    ids=["nul", "lone-surrogate", "too-long", "url-and-surrogate", "url-and-too-long", "deep"],
)  # fmt: skip
def test_difficulty_attestation_paths_the_system_cannot_name(difficulty_run, validation, message):
    document = {
        "schema_version": 1,
        "original": {"definitions_sha256": "a" * 64},
        "executed": {"definitions_sha256": "b" * 64},
        "definitions": [],
        "matching": False,
        "changed_code_validation": [validation],
    }
    target = difficulty_run / "publication-execution-implementation-attestation.json"
    target.write_bytes(DEEP if validation is None else json_bytes(document))
    outcome = refused_or_accepted(
        publish_difficulty(difficulty_run),
        DifficultyPublicationError,
        "",
        as_given=difficulty_as_given(difficulty_run),
    )
    assert outcome == message


def test_a_difficulty_file_named_with_bytes_that_are_not_utf8(difficulty_run):
    with open(os.path.join(os.fsencode(difficulty_run), b"difficulty", b"\xff.json"), "wb") as file:
        file.write(b"{}")
    review_id = publish_difficulty(difficulty_run)()["review_id"]
    paths = ReviewArtifact.objects.filter(review_id=review_id).values_list("path", flat=True)
    assert "difficulty.json" in paths and not any("\udcff" in path for path in paths)
