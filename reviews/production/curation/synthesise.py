"""``synthesise_source``: one source synthesis from the
reviews a source already has — no solver run, no three-judge panel.

The pool (imported audits, earlier reviews and their syntheses) is read from the Atlas API or from
``fetch_review`` copies. The configured model is asked once, through make_review's coalescer (the
same client, retries, validation and placeholder guard), for the source's synthesis; the tool sets
what the model must not: ``derived_from_review_ids`` (the pool reviews the synthesis was given,
copied into the collection so they resolve), the applicability of each pool collection to the
current release (from its mappings and reviewed revision; an unknown date or revision stays
unknown), and the inspected MarinSkyRL reference commit, recorded apart from execution provenance
(which is null: nothing was executed).

Copied into the collection, with their original ids and content under ``attributes.copied_from``:
the pool's reviews except native runtime and judge reviews, pool-role reviews and source-level
syntheses (a rating collection holds one source synthesis, and native evidence at another revision
must not make a synthesis Good). Those are still shown to the model and cited as evidence.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from reviews.production.curation import records
from reviews.production.curation.atlas_row import read_atlas_row
from reviews.production.curation.saved_runs import SavedRun
from reviews.production.format.path_safety import relative_form, resolves_inside
from reviews.production.format.synthesis_selection import is_source_synthesis
from reviews.production.make_review import records as production_records
from reviews.production.make_review.opinions import AnswersRefused, budget_advice
from reviews.production.make_review.synthesis import ask_coalescer, coalescer_payload
from reviews.production.runtime.atlas_client import AtlasClient
from reviews.production.runtime.config import load_config
from reviews.production.runtime.errors import CurationRefused, UsageError
from reviews.production.runtime.identity import git
from reviews.production.runtime.model_client import ModelClient
from reviews.production.runtime.rundir import (
    COLLECTION_FILE,
    StagedOutput,
    checked_new,
    finish,
    write_json_file,
)

TOOL = "synthesise_source"
POOL_DIR = "pool"
POOL_FILE = "pool.json"
COMMIT = 40
NOT_COPIED_METHODS = frozenset({"runtime_execution", "model_judgment"})
APPLICABILITY_INSTRUCTION = (
    "This is a synthesis of an existing review pool: no new task was run and no new judge was "
    "asked. Judge the source at its current release (see current_release) from these reviews; "
    "state in the summary how far each finding applies to the current release (exact revision, "
    "historical, or unknown); keep conflicting findings as separate findings instead of merging "
    "them; never invent a date or a revision that a review does not record."
)


@dataclass(frozen=True)
class SynthesiseOptions:
    atlas_id: str
    config: Path
    output: Path
    atlas: str | None = None
    atlas_row: Path | None = None
    pool: tuple[Path, ...] = ()
    inspected_commit: str | None = None


@dataclass
class PoolCollection:
    review_id: str
    kind: str | None
    root: Path  # its copy, inside the output
    collection: dict[str, Any]
    url: str | None

    @property
    def prefix(self) -> str:
        return f"{POOL_DIR}/{self.review_id}/"

    @property
    def reviewed_revision(self) -> str | None:
        sources = [s for s in self.collection["subjects"] if s.get("level") == "source"]
        return sources[0].get("dataset_revision") if len(sources) == 1 else None


@dataclass
class SynthesisResult:
    output: Path
    source_id: str
    collections: list[PoolCollection] = field(default_factory=list)

    @property
    def collection_path(self) -> Path:
        return self.output / COLLECTION_FILE


def synthesise_source(
    *, options: SynthesiseOptions, stderr: TextIO | None = None
) -> SynthesisResult:
    if not options.pool and not options.atlas:
        raise UsageError("Name the review pool: --atlas URL, or --pool DIR for each saved review")
    checked_new(options.output)
    config = load_config(path=options.config)
    if config.source.get("source_id") != options.atlas_id:
        raise CurationRefused(
            f"The config's source.source_id is {config.source.get('source_id')}, not "
            f"{options.atlas_id}"
        )
    row = _row(options)
    current = row.get("dataset_revision")
    if not current:
        raise CurationRefused(
            f"{options.atlas_id} has no current dataset revision to state applicability to"
        )
    inspected = _inspected_commit(options, config.runtime)
    listed = _pool_listing(options) if not options.pool else []
    nothing = f"The review pool of {options.atlas_id} holds no review to synthesise"
    if not options.pool and not listed:
        raise CurationRefused(nothing)
    with StagedOutput(options.output, command=TOOL) as stage:
        output = stage.path
        pool = _gather(options=options, listed=listed, output=output)
        usable = [p for p in pool if _usable(p, current=current)]
        if not usable:
            raise CurationRefused(nothing)
        _progress(
            stderr, f"{len(usable)} of {len(pool)} pool collection(s) apply; asking the model"
        )
        source = production_records.source_subject(
            repository=config.source["repository"],
            dataset_revision=current,
            source_id=options.atlas_id,
            snapshot="",
        )
        applicability = _applicability(pool, current=current, row=row)
        write_json_file(output / POOL_FILE, applicability)
        records.write_run_file(
            output,
            {
                "tool": TOOL,
                "source_id": options.atlas_id,
                "model": config.resolved["model"],
                "inspected_marinskyrl_commit": inspected,
                "pool": [{"review_id": p.review_id, "kind": p.kind} for p in pool],
            },
        )
        subjects, copied = _copied(usable, source=source)
        offered = _offered(usable, copied=copied)
        payload = coalescer_payload(subjects=[source], provenance={}, reviews=offered)
        payload["collection"]["execution_provenance"] = None
        payload["current_release"] = {
            "source_id": options.atlas_id,
            "dataset_revision": current,
            "verifier_revision": row.get("verifier_revision"),
            "inspected_marinskyrl_commit": inspected,
            "pool_applicability": applicability["collections"],
        }
        payload["instruction"] = f"{payload['instruction']} {APPLICABILITY_INSTRUCTION}"
        client = ModelClient(model=config.model, stop=threading.Event(), connections=1)
        client.next_step = "run synthesise_source again (it keeps nothing, so it has no --resume)"
        try:
            opinion = ask_coalescer(client=client, run_dir=output, payload=payload)[source["id"]]
        except AnswersRefused as exc:
            raise CurationRefused(_refused_synthesis(exc, client=client)) from None
        finally:
            client.close()
        evidence = production_records.EvidenceWriter(output, url_root=stage.output)
        imported_at = records.now_stamp()
        actor = production_records.model_actor(config.model.name)
        synthesis_id = f"{source['id']}/synthesis"
        synthesis = production_records.review(
            review_id=synthesis_id,
            subject_id=source["id"],
            reviewer=actor,
            reviewed_at=evidence.reviewed_at("coalescer/parsed.json"),
            imported_at=imported_at,
            method="synthesis",
            tests_executed=False,
            coverage={
                "scope": "unknown",
                "sample_count": None,
                "population_count": None,
                "sampling_method": "Existing review pool; no new sample was drawn",
                "seed": None,
                "samples": [],
            },
            evidence=[
                evidence.item("coalescer/parsed.json"),
                evidence.item(POOL_FILE),
                *(_collection_evidence(p, evidence) for p in pool),
            ],
            derived_from=[review["id"] for review in copied],
            attributes={
                "inspected_marinskyrl_commit": inspected,
                "applicability": {
                    "dataset_revision": current,
                    "verifier_revision": row.get("verifier_revision"),
                    "collections": applicability["collections"],
                },
                "review_pool": [p.review_id for p in pool],
            },
            **production_records.opinion_fields(opinion),
        )
        tags = production_records.tag_assignments(
            review_id=synthesis_id, tags=opinion["tags"], assigned_by=actor, assigned_at=imported_at
        )
        finish(
            output=output,
            collection={
                "schema_version": production_records.SCHEMA_VERSION,
                "execution_provenance": None,
                "created_at": imported_at,
                "subjects": subjects,
                "reviews": [*copied, synthesis],
                "tag_assignments": tags,
                "source_mappings": [],
            },
        )
        result = SynthesisResult(output=output, source_id=options.atlas_id, collections=pool)
        result.output = stage.publish()
    return result


def _refused_synthesis(exc: AnswersRefused, *, client: ModelClient) -> str:
    """The model's answers were refused: what was wrong with the last and how to go on (this
    tool keeps nothing and has no --resume: running it again asks again)."""
    advice = "run synthesise_source again to ask again"
    if exc.truncated:
        advice = (
            f"every answer ran out of its output budget: {budget_advice(client)}, then {advice}"
        )
    return (
        f"The model's synthesis was refused ({exc.refusals[-1].reason}; {len(exc.refusals)} of "
        f"{exc.asks} answers refused); nothing was kept — {advice}"
    )


def _progress(stream: TextIO | None, text: str) -> None:
    if stream is not None:
        stream.write(f"{TOOL}: {text}\n")
        stream.flush()


def _row(options: SynthesiseOptions) -> dict[str, Any]:
    return read_atlas_row(
        source_id=options.atlas_id,
        saved=options.atlas_row,
        atlas=options.atlas,
        missing="Pass --atlas URL or --atlas-row PATH for the source's current revisions",
    )


def _inspected_commit(options: SynthesiseOptions, runtime: dict[str, Any]) -> str:
    """The MarinSkyRL reference commit the curator inspected (default: the configured
    checkout's HEAD) — provenance of reused evidence, never of an execution."""
    commit = options.inspected_commit
    if commit is None and runtime.get("marinskyrl_checkout"):
        commit = git(checkout=Path(runtime["marinskyrl_checkout"]), args=["rev-parse", "HEAD"])
    commit = (commit or "").strip()
    if len(commit) != COMMIT or any(ch not in "0123456789abcdef" for ch in commit):
        raise UsageError(
            "Name the inspected MarinSkyRL reference commit (40 lowercase hex) with "
            "--inspected-commit, or configure runtime.marinskyrl_checkout"
        )
    return commit


def _pool_listing(options: SynthesiseOptions) -> list[dict[str, Any]]:
    assert options.atlas
    with AtlasClient(options.atlas) as atlas:
        return atlas.review_pool(options.atlas_id)


def pool_folder(output: Path, review_id: object) -> Path:
    """``output/pool/<review id>/``, refused unless the id the pool (an Atlas's answer or a
    fetched copy) names is one folder name that stays there once links are followed."""
    relative = relative_form(review_id)
    root = output / POOL_DIR
    if (
        not isinstance(review_id, str)
        or relative != review_id
        or "/" in relative
        or relative == "."
        or not resolves_inside(root / relative, root.resolve())
    ):
        raise CurationRefused(
            f"The review pool names a review id that is no folder name: {review_id!r}"
        )
    return root / relative


def _gather(
    *, options: SynthesiseOptions, listed: list[dict[str, Any]], output: Path
) -> list[PoolCollection]:
    """Every pool collection copied into ``output/pool/<review id>/``."""
    import shutil

    pool: list[PoolCollection] = []
    if options.pool:
        for directory in options.pool:
            saved = SavedRun(directory)
            review_id = saved.review_id
            if review_id is None:
                raise CurationRefused(
                    f"{directory} names no published review (fetch it with fetch_review)"
                )
            target = pool_folder(output, review_id)
            shutil.copytree(saved.root, target)
            pool.append(
                PoolCollection(
                    review_id=review_id,
                    kind=(saved.atlas or {}).get("kind"),
                    root=target,
                    collection=saved.collection,
                    url=(saved.atlas or {}).get("url"),
                )
            )
        return pool
    assert options.atlas
    targets = [pool_folder(output, entry.get("id")) for entry in listed]
    with AtlasClient(options.atlas) as atlas:
        for entry, target in zip(listed, targets, strict=True):
            record = atlas.fetch_review(review_id=entry["id"], output=target)
            pool.append(
                PoolCollection(
                    review_id=entry["id"],
                    kind=entry.get("kind"),
                    root=target,
                    collection=SavedRun(target).collection,
                    url=record["url"],
                )
            )
    return pool


def _usable(collection: PoolCollection, *, current: str) -> bool:
    """Imported audits always (their applicability is stated); Atlas collections only at the
    current dataset revision."""
    return collection.kind == "imported" or collection.reviewed_revision == current


def _applicability(
    pool: list[PoolCollection], *, current: str, row: dict[str, Any]
) -> dict[str, Any]:
    entries = []
    for item in pool:
        mappings = [
            {
                "status": m.get("status"),
                "applicability": m.get("applicability"),
                "note": m.get("note"),
            }
            for m in item.collection.get("source_mappings") or []
            if row["id"] in (m.get("atlas_source_ids") or [])
        ]
        revision = item.reviewed_revision
        if item.kind == "imported":
            stated = next((m["applicability"] for m in mappings if m["applicability"]), "unknown")
        elif revision is None:
            stated = "unknown"
        else:
            stated = "exact_revision" if revision == current else "historical"
        dates = [r.get("reviewed_at") for r in item.collection.get("reviews") or []]
        known = sorted(d for d in dates if d)
        entries.append(
            {
                "review_id": item.review_id,
                "kind": item.kind,
                "reviewed_dataset_revision": revision,
                "latest_reviewed_at": known[-1] if known else None,
                "applicability": stated,
                "mappings": mappings,
                "used": _usable(item, current=current),
            }
        )
    return {"current_dataset_revision": current, "collections": entries}


def _copied(
    usable: list[PoolCollection], *, source: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The new collection's subjects and the pool reviews copied into it (see the module doc)."""
    subjects = [source]
    copied: list[dict[str, Any]] = []
    for item in usable:
        by_id = {s["id"]: s for s in item.collection["subjects"]}
        kept = [r for r in item.collection["reviews"] if _copyable(r, by_id)]
        renamed = {r["id"]: f"{item.prefix}{r['id']}" for r in kept}
        for review in kept:
            subject = by_id[review["subject_id"]]
            if subject["level"] == "source":
                subject_id = source["id"]
            else:
                subject_id = f"{item.prefix}{subject['id']}"
                if all(s["id"] != subject_id for s in subjects):
                    subjects.append({**subject, "id": subject_id})
            copied.append(_copy_review(review, item=item, renamed=renamed, subject_id=subject_id))
    return subjects, copied


def _copyable(review: dict[str, Any], subjects: dict[str, dict[str, Any]]) -> bool:
    attributes = review.get("attributes") or {}
    subject = subjects.get(str(review.get("subject_id")))
    return (
        review.get("method") not in NOT_COPIED_METHODS
        and not attributes.get("review_pool_role")
        and not is_source_synthesis(review, subject)
        and (subject or {}).get("level") is not None
    )


def _copy_review(
    review: dict[str, Any], *, item: PoolCollection, renamed: dict[str, str], subject_id: str
) -> dict[str, Any]:
    moved = copy.deepcopy(review)
    new_id = renamed[review["id"]]
    moved["id"] = new_id
    moved["subject_id"] = subject_id
    for number, finding in enumerate(moved["findings"]):
        finding["id"] = f"{new_id}/finding/{number}"
    for evidence in moved["evidence"]:
        evidence["snapshot_path"] = item.prefix + evidence["snapshot_path"]
    moved["derived_from_review_ids"] = [
        renamed[i] for i in review["derived_from_review_ids"] if i in renamed
    ]
    supersedes = review.get("supersedes_review_id")
    moved["supersedes_review_id"] = renamed.get(supersedes) if supersedes else None
    moved["attributes"] = {
        **(review.get("attributes") or {}),
        "copied_from": {
            "review_collection_id": item.review_id,
            "collection_kind": item.kind,
            "review_id": review["id"],
            "subject": next(
                (s for s in item.collection["subjects"] if s["id"] == review["subject_id"]), None
            ),
            "derived_from_review_ids": review["derived_from_review_ids"],
            "supersedes_review_id": supersedes,
        },
    }
    return moved


def _offered(usable: list[PoolCollection], *, copied: list[dict[str, Any]]) -> list[dict]:
    """What the model reads: the copied reviews under their new ids, and the native and
    pool-role reviews (not copied) under their collection-qualified ids."""
    copied_ids = {r["id"] for r in copied}
    offered = list(copied)
    for item in usable:
        for review in item.collection["reviews"]:
            qualified = f"{item.prefix}{review['id']}"
            if qualified not in copied_ids:
                offered.append({**review, "id": qualified})
    return offered


def _collection_evidence(item: PoolCollection, evidence: production_records.EvidenceWriter):
    entry = evidence.item(f"{item.prefix}quality-reviews.json")
    if item.url:
        entry["url"] = item.url
    return entry
