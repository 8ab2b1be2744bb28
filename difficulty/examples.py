"""The example reviews of ``make demo``, made by the shipped tools.

Nothing here writes a collection or a report by hand. A MarinSkyRL-shaped checkout is built from
the installed ``skyrl_gym`` (``reviews.production.examples.marinskyrl``) with a real, deliberate
verifier defect at one commit — its gsm8k environment keeps thousands separators, so a correct
``#### 2,006`` is rejected — and the fix at the next. The product's scripted chat server answers
as solver and judges (``reviews.production.examples.review_model``; every opinion's summary starts
with the example notice, so each collection shows as "Example review — not a real judgment"). Then
the commands a curator runs, in a curator's order, for ``MarinSkyRL:gsm8k``:

make_review at the buggy commit → publish_review (Good: a failed solver is no defect) →
reproduce_defect → publish_review → confirm_verifier_issue (Some issues, difficulty withheld) →
make_review at the fixed commit → validate_fix → publish_review (capped) → resolve_verifier_issue
→ publish_review (Good returns) → make_difficulty → publish_difficulty.

Two more sources get a first review each on the real aime route of the same checkout, the
scripted judges doubting them: ``MarinSkyRL:math500`` (Some issues) and ``MarinSkyRL:asdiv``
(Bad), so the catalog shows every rating. A Task Trove source gets an imported audit — a
dashboard note written down and made a collection by ``import_audit``, published as kind
imported — and then the source synthesis ``synthesise_source`` makes from that pool (one model
call; without native runs it cannot be Good). It lives in the difficulty app because it publishes
both kinds (an app imports only from the apps below it). The issue URL names an examples
repository, not a real defect.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

from django.core.management import call_command

from atlas.api.row_values import source_row
from atlas.artifact.catalog_artifact import write_document
from atlas.models import Source
from atlas.rules.example_notice import EXAMPLE_NOTICE
from atlas.services.sync import sync_catalog
from difficulty.registry import current_protocol
from reviews.models import VerifierIssue
from reviews.production.examples.chat_server import ChatServer
from reviews.production.examples.marinskyrl import (
    SOURCE_ID,
    DefectCommits,
    add_separator_defect,
    aime_rows,
    build_checkout,
    gsm8k_blocks,
    gsm8k_rows,
    route_blocks,
    write_parquet,
)
from reviews.production.examples.review_model import ReviewModel
from reviews.production.examples.serve import DEMO_WRONG_TOTAL, demo_model

EXAMPLE_ISSUE = "https://github.com/open-athena/rl-data-atlas-examples/issues/1"
EXAMPLE_CURATOR = "example-curator"
REVIEW_MODEL = "example/scripted-reviewer"
# Three prepared rows whose sums need a thousands separator: 2,006, 2,011 and 2,016.
ROW_OFFSET = 400
ROWS = 3
# The solver answers this task off by one: the review's saved wrong answer, a control.
WRONG_TOTAL = DEMO_WRONG_TOTAL
STATEMENT = (
    "Example: the gsm8k verifier rejects correct answers written with a thousands separator."
)


@dataclass(frozen=True)
class RatingExample:
    """A source reviewed once on the aime route, its judges' verdict and finding scripted."""

    source_id: str
    verdict: str
    severity: str
    finding: str


RATING_EXAMPLES = (
    RatingExample(
        "MarinSkyRL:math500",
        "conditional",
        "medium",
        "Example finding: the verifier accepts an answer with units.",
    ),
    RatingExample(
        "MarinSkyRL:asdiv",
        "reject",
        "high",
        "Example finding: reference answers disagree with the prompts.",
    ),
)
# Recorded as each difficulty role's serving configuration: the protocol names the models, but
# the demo's answers come from the scripted chat server.
EXAMPLE_SERVING = {
    "engine": "Example: the bundled scripted chat server answers for this model — "
    "not a real measurement"
}
# The imported-audit example: a Task Trove source with a dashboard note about it.
AUDIT_SOURCE = "Task Trove:SankalpKJ__nemotron-math-oracle-filtered-v2"
# The sources whose example reviews execute the example checkout: the overlay pins them to it.
EXAMPLE_PINNED = frozenset({SOURCE_ID, *(example.source_id for example in RATING_EXAMPLES)})
AUDIT_FINDING = "Example finding: answers written as fractions are compared as text."
# Difficulty arms: which tasks (by their correct total) each role's scripted model gets wrong.
ROLE_MISSES = {"small": {2011, 2016}, "large": {2016}, "hosted": set()}


class ExampleWalkError(Exception):
    """The examples cannot be made in this database; the message says why."""


@dataclass
class ExampleWalk:
    """One ``make demo`` run: its folder, checkout, chat server and what each step printed."""

    root: Path
    checkout: DefectCommits
    server: ChatServer
    results: list[dict[str, Any]] = field(default_factory=list)
    progress: Callable[[str], None] = lambda _text: None

    def run(self, command: str, *args: str) -> str:
        """A shipped command, as a curator runs it; returns what it printed."""
        self.progress(f"{command} {' '.join(args[:2])}")
        out = StringIO()
        call_command(command, *args, stdout=out, stderr=StringIO())
        return out.getvalue()

    def publish(self, run_dir: Path, atlas_id: str = SOURCE_ID) -> dict[str, Any]:
        printed = self.run("publish_review", "--run-dir", str(run_dir), "--atlas-id", atlas_id)
        result = json.loads(printed)
        self.results.append(result)
        return result

    def step(self, name: str, printed: str, atlas_id: str = SOURCE_ID) -> None:
        self.results.append({"atlas_id": atlas_id, "step": name, "printed": printed.strip()})

    def review_config(
        self, name: str, *, blocks: dict[str, dict[str, Any]] | None = None, **gsm8k: Any
    ) -> Path:
        """A make_review config against the scripted chat server; the gsm8k route unless
        ``blocks`` names another."""
        if blocks is None:
            blocks = gsm8k_blocks(
                checkout=self.checkout.path, agent_timeout=120, worker_timeout=300, **gsm8k
            )
        config = {
            "model": {
                "name": REVIEW_MODEL,
                "base_url": self.server.base_url,
                "timeout": 30,
                "revision": None,
                "parameters": {"temperature": 0.0, "max_tokens": 512},
                "review_parameters": {"temperature": 0.0, "max_tokens": 4096},
                "retry_backoff_seconds": 0.01,
            },
            **blocks,
        }
        return self.write_json(name, config)

    def write_json(self, name: str, document: Any) -> Path:
        path = self.root / name
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        return path

    def pin_examples(self, *, commit: str) -> None:
        """The demo's catalog overlay: the example sources' rows pin the example checkout at
        ``commit`` (verifyit off, as its reviews run), labelled as an example, so an example
        review shows its rating only where what it executed is what its row pins
        (``reviews.identity``). A forced Refresh restores the packaged pins, and with them the
        examples' honest "Needs re-review"."""
        rows = []
        for source in Source.objects.active().order_by("id"):
            row = dict(source.payload or {})
            if source.id in EXAMPLE_PINNED:
                scope = dict(row.get("grading_scope") or {})
                row["grading_scope"] = {**scope, "mode": "legacy", "marinskyrl_revision": commit}
                note = f"{EXAMPLE_NOTICE}: pinned to the demo's example checkout {commit[:12]}."
                notes = str(row.get("notes") or "").split(f"{EXAMPLE_NOTICE}: pinned")[0]
                row["notes"] = f"{notes.rstrip()} {note}".strip()
            rows.append(row)
        path = self.root / "example-catalog.json"
        write_document(rows=rows, output=path)
        sync_catalog(catalog_path=path, force=True, trigger="command")

    def atlas_row(self) -> Path:
        """The source's row as ``/api/sources/<id>/`` serves it, saved for the offline tools."""
        return self.write_json("atlas-row.json", source_row(Source.objects.get(id=SOURCE_ID)))


def already_published() -> list[dict[str, Any]] | None:
    """The walk ends with the example defect resolved: then this database has the examples."""
    issue = VerifierIssue.objects.filter(source_id=SOURCE_ID, issue_url=EXAMPLE_ISSUE).first()
    if issue is None:
        return None
    if issue.status != VerifierIssue.Status.RESOLVED:
        raise ExampleWalkError(
            f"an earlier publish_examples stopped before resolving {EXAMPLE_ISSUE}; the examples "
            "belong in a fresh database (remove var/atlas.sqlite3 and run make demo again)"
        )
    return [{"atlas_id": SOURCE_ID, "verifier_issue": issue.issue_url, "status": issue.status}]


def publish_examples(
    *, output: Path, progress: Callable[[str], None] = lambda _text: None
) -> list[dict[str, Any]]:
    """Make and publish the examples into ``output`` (emptied first); what each step printed.
    Already published in this database → nothing runs again."""
    done = already_published()
    if done is not None:
        return done
    source = Source.objects.active().filter(id=SOURCE_ID).first()
    if source is None:
        raise ExampleWalkError(f"{SOURCE_ID} is not in the synced catalog (run make catalog)")
    if output.exists():
        shutil.rmtree(output)
    output.mkdir(parents=True)
    checkout = add_separator_defect(build_checkout(output / "MarinSkyRL"))
    tasks = write_parquet(
        output / "data" / "gsm8k-train.parquet", gsm8k_rows(ROWS, offset=ROW_OFFSET)
    )
    with ChatServer(default=demo_model()) as server:
        for size, misses in ROLE_MISSES.items():
            server.models[current_protocol().required_role(size).model] = ReviewModel(
                wrong_totals=frozenset(misses), notice=EXAMPLE_NOTICE
            )
        walk = ExampleWalk(root=output, checkout=checkout, server=server, progress=progress)
        revision = source.payload.get("dataset_revision")
        config = walk.review_config("review-config.json", tasks=tasks, revision=revision)
        _defect_walk(walk, config=config)
        _difficulty(walk, tasks=tasks)
        for example in RATING_EXAMPLES:
            _rating_example(walk, example)
        _imported_audit_example(walk)
    return walk.results


def _make_review(walk: ExampleWalk, *, config: Path, name: str) -> Path:
    run_dir = walk.root / name
    walk.run(
        "make_review", "--config", str(config), "--n", str(ROWS), "--seed", "42",
        "--output", str(run_dir), "--jobs", "2",
    )  # fmt: skip
    return run_dir


def _suspect_attempts(run_dir: Path) -> list[str]:
    """The task folders whose saved answer is correct, written with a separator, and rejected:
    every task but the one the solver got wrong (the sample order is seeded)."""
    suspects = []
    for attempt in sorted(run_dir.glob("tasks/*/attempt.json")):
        responses = attempt.parent.glob("execution-*/solver/turn-*/response.json")
        if not any(f"#### {WRONG_TOTAL + 1:,}" in path.read_text("utf-8") for path in responses):
            suspects.append(attempt.parent.relative_to(run_dir).as_posix())
    return suspects


def _defect_walk(walk: ExampleWalk, *, config: Path) -> None:
    issue = ("--issue-url", EXAMPLE_ISSUE)
    curator = ("--curator", EXAMPLE_CURATOR)
    walk.pin_examples(commit=walk.checkout.buggy)
    buggy = _make_review(walk, config=config, name="gsm8k-review")
    walk.publish(buggy)
    attempts = [arg for folder in _suspect_attempts(buggy) for arg in ("--attempt", folder)]
    reproduction = walk.root / "gsm8k-defect"
    walk.step(
        "reproduce_defect",
        walk.run(
            "reproduce_defect", "--run-dir", str(buggy), *attempts, "--kind", "verifier",
            *issue, "--expect", "accepted", "--saved-answer", "--statement", STATEMENT,
            *curator, "--output", str(reproduction),
        ),
    )  # fmt: skip
    confirming = walk.publish(reproduction)
    confirmed = walk.run(
        "confirm_verifier_issue", "--atlas-id", SOURCE_ID, *issue,
        "--review-id", confirming["review_id"],
    )  # fmt: skip
    walk.results.append(json.loads(confirmed))
    walk.checkout.at(walk.checkout.fixed)
    # The fix merged: the registry pins the fixed commit (which the buggy review did not run).
    walk.pin_examples(commit=walk.checkout.fixed)
    fixed = _make_review(walk, config=config, name="gsm8k-fixed")
    resolution = walk.root / "gsm8k-resolution"
    walk.step(
        "validate_fix",
        walk.run(
            "validate_fix", "--confirming", str(reproduction), "--review", str(fixed),
            "--atlas-row", str(walk.atlas_row()), *curator, "--output", str(resolution),
        ),
    )  # fmt: skip
    capped = walk.publish(resolution)
    resolved = walk.run(
        "resolve_verifier_issue", "--atlas-id", SOURCE_ID, *issue,
        "--resolution-review-id", capped["review_id"],
    )  # fmt: skip
    walk.results.append(json.loads(resolved))
    walk.publish(resolution)  # resolution never restores Good by itself: publishing again does


def _difficulty(walk: ExampleWalk, *, tasks: Path) -> None:
    """Measure the Good source with the protocol's three roles (each a scripted model here)."""
    source = Source.objects.get(id=SOURCE_ID)
    if source.effective_quality != "good":
        return
    current = walk.root / "gsm8k-resolution" / "quality-reviews.json"
    blocks = gsm8k_blocks(
        checkout=walk.checkout.path,
        tasks=tasks,
        revision=source.payload.get("dataset_revision"),
        agent_timeout=120,
        worker_timeout=300,
    )
    blocks["source"].update(grading_snapshot=str(walk.atlas_row()), current_review=str(current))
    protocol = current_protocol()
    roles = {}
    for size in ROLE_MISSES:
        role = protocol.required_role(size)
        roles[size] = {
            "base_url": walk.server.base_url,
            "model": role.model,
            "timeout": 30,
            "retry_backoff_seconds": 0.01,
            "serving_configuration": dict(EXAMPLE_SERVING),
            **({"provider": role.provider} if role.provider else {"revision": None}),
        }
    config = walk.write_json("difficulty-config.json", {"roles": roles, **blocks})
    run_dir = walk.root / "gsm8k-difficulty"
    walk.step(
        "make_difficulty",
        walk.run(
            "make_difficulty", "--config", str(config), "--atlas-id", SOURCE_ID,
            "-n", str(ROWS), "--output", str(run_dir), "--jobs", "3",
        ),
    )  # fmt: skip
    printed = walk.run("publish_difficulty", "--run-dir", str(run_dir), "--atlas-id", SOURCE_ID)
    walk.results.append(json.loads(printed))


def _rating_example(walk: ExampleWalk, example: RatingExample) -> None:
    source = Source.objects.active().filter(id=example.source_id).first()
    if source is None:
        return
    slug = example.source_id.split(":", 1)[1]
    payload = source.payload
    repository = payload.get("dataset_id") or payload.get("canonical_source") or source.id
    tasks = write_parquet(
        walk.root / "data" / f"{slug}-train.parquet", aime_rows(ROWS, data_source=repository)
    )
    blocks = route_blocks(
        checkout=walk.checkout.path, tasks=tasks, source_id=source.id, repository=repository,
        revision=payload.get("dataset_revision"), env_class="aime", agent_timeout=120,
        worker_timeout=300,
    )  # fmt: skip
    finding = {"dimension": "verifier", "text": example.finding, "severity": example.severity,
               "kind": "issue"}  # fmt: skip
    walk.server.default = ReviewModel(
        verdict=example.verdict, findings=[finding], answer_line="Answer: {}",
        notice=EXAMPLE_NOTICE,
    )  # fmt: skip
    config = walk.review_config(f"{slug}-review-config.json", blocks=blocks)
    walk.publish(_make_review(walk, config=config, name=f"{slug}-review"), source.id)


def _imported_audit_example(walk: ExampleWalk) -> None:
    """An imported audit enters the source's pool as a curator brings one in (``import_audit``
    on a written-down dashboard note, then ``publish_review``), and the source gets the
    synthesis ``synthesise_source`` makes from its pool (read from the published copy and the
    saved Atlas row: no server runs during the walk)."""
    source = Source.objects.active().filter(id=AUDIT_SOURCE).first()
    if source is None:
        return
    payload = source.payload
    repository = payload.get("dataset_id") or "open-thoughts/TaskTrove"
    notes = walk.root / "audit-note"
    notes.mkdir()
    (notes / "dashboard-note.md").write_text(
        f"# {AUDIT_SOURCE}\n\n{EXAMPLE_NOTICE}. {AUDIT_FINDING}\n", encoding="utf-8"
    )
    note = {
        "atlas_source_id": AUDIT_SOURCE,
        "upstream": {
            "name": "tasktrove-dashboard:nemotron-math-oracle-filtered-v2",
            "repository": repository,
            "dataset_revision": None,
        },
        "mapping": {"applicability": "historical", "note": "The dashboard's entry for it."},
        "reviewer": {"label": "Task Trove dashboard (example)", "kind": "organization"},
        "reviewed_at": None,
        "method": "static_inspection",
        "summary": f"{EXAMPLE_NOTICE}. Dashboard note: fractions are compared as text.",
        "verdict": "conditional",
        "findings": [
            {"text": AUDIT_FINDING, "dimension": "verifier", "severity": "medium", "kind": "issue"}
        ],
        "evidence": ["dashboard-note.md"],
    }
    audit = walk.root / "tasktrove-audit"
    walk.step(
        "import_audit",
        walk.run(
            "import_audit", "--note", str(walk.write_json("audit-note/note.json", note)),
            "--output", str(audit),
        ),
        AUDIT_SOURCE,
    )  # fmt: skip
    walk.publish(audit, AUDIT_SOURCE)
    tasks = write_parquet(
        walk.root / "data" / "tasktrove-train.parquet", aime_rows(ROWS, data_source=repository)
    )
    blocks = route_blocks(
        checkout=walk.checkout.path, tasks=tasks, source_id=AUDIT_SOURCE, repository=repository,
        revision=payload.get("dataset_revision"), env_class="aime", agent_timeout=120,
        worker_timeout=300,
    )  # fmt: skip
    walk.server.default = ReviewModel(
        verdict="conditional",
        findings=[
            {"dimension": "verifier", "text": AUDIT_FINDING, "severity": "medium", "kind": "issue"}
        ],
        notice=EXAMPLE_NOTICE,
    )
    config = walk.review_config("tasktrove-review-config.json", blocks=blocks)
    row = walk.write_json("tasktrove-atlas-row.json", source_row(source))
    synthesis = walk.root / "tasktrove-synthesis"
    walk.step(
        "synthesise_source",
        walk.run(
            "synthesise_source", "--atlas-id", AUDIT_SOURCE, "--config", str(config),
            "--pool", str(audit), "--atlas-row", str(row), "--output", str(synthesis),
        ),
        AUDIT_SOURCE,
    )  # fmt: skip
    walk.publish(synthesis, AUDIT_SOURCE)
