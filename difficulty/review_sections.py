"""Page context of the review page's difficulty sections."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from atlas.rules.labels import MEASUREMENT_LABELS
from difficulty import followups
from difficulty.attestation import ATTESTATION_PATH, SCOPE_NOTE, attestation_line
from difficulty.bars import FULL, bars_for, followup_label, status_chip
from difficulty.baseline import COUNT_KEYS, derived_counts, judge_labels
from difficulty.classification import CURRENT, HISTORICAL, INVALID
from difficulty.compact_chart import render_legend
from difficulty.registry import get_registry, model_name
from difficulty.reports import (
    CONTEXT_PATH,
    HISTORY_PREFIX,
    REPORT_PATH,
    NotAReportError,
    models_of,
    outcomes_of,
    protocol_of,
    run_identity_path,
    task_sort_key,
)
from difficulty.selectors import StoredReport, standing_of, summarise
from difficulty.wilson import percent_range
from reviews.links import artifact_api_url, artifact_page_url
from reviews.page_sections import PageSection
from reviews.selectors import ReviewBundle

TITLES = {
    CURRENT: "Difficulty · model solve rates and saved attempts",
    HISTORICAL: "Historical difficulty · model solve rates and saved attempts",
    INVALID: "Invalid protocol difficulty · model solve rates and saved attempts",
}
RUN_PREFIXES = {status: f"{MEASUREMENT_LABELS[status]} · " for status in (HISTORICAL, INVALID)}
EXPLANATION = (
    "Longer bars mean more tasks solved. Open a model to inspect its exact settings, attempts, and "
    "native verifier outputs. Unverified attempts are excluded from the solve rate."
)
NO_RUN_SETTINGS = (
    "Saved run settings and traces have not been published for this measurement. The verifier "
    "outcomes below are retained from its report."
)
MISSING_RESPONSE = "The model response trace is not published for this attempt."
MISSING_REQUEST = "The model request is not published for this attempt."
MISSING_VERIFIER_LOG = (
    "The raw verifier log is not published; the recorded verifier result appears above."
)
VERIFIER_LOGS = (
    "verifier-trace.jsonl",
    "verifier.stdout",
    "verifier.stderr",
    "harbor-result.json",
    "verifier/test-stdout.txt",
    "verifier/test-stderr.txt",
)
BASELINE_NOTE = (
    "The quality sample can be smaller and drawn differently from the difficulty sample. Three "
    "judges assess each attempt; their opinions are not additional solver attempts."
)
ISSUE_8942_URL = "https://github.com/marin-community/marin/issues/8942"


def artifact_links(*, review_id: str, path: str) -> dict[str, str]:
    return {
        "path": path,
        "name": path.rsplit("/", 1)[-1],
        "api_url": artifact_api_url(review_id, path),
        "page_url": artifact_page_url(review_id, path),
    }


def missing_text(path: str) -> str:
    return f"{path} is referenced by the report but was not published."


class _Evidence:
    """Artifact paths of one review, answering "is this published?" and "what lies under it?"."""

    def __init__(self, *, review_id: str, paths: list[str]) -> None:
        self.review_id = review_id
        self.paths = set(paths)
        self.sorted_paths = sorted(paths)

    def viewer(self, path: str, *, title: str | None = None) -> dict[str, Any] | None:
        if path not in self.paths:
            return None
        links = artifact_links(review_id=self.review_id, path=path)
        return {**links, "title": title}

    def under(self, prefix: str) -> list[str]:
        return [path for path in self.sorted_paths if path.startswith(prefix)]


def wanted_paths(paths: frozenset[str]) -> list[str]:
    """The artifacts whose contents the sections read; the review page loads them in one query."""
    fixed = [REPORT_PATH, CONTEXT_PATH, ATTESTATION_PATH]
    history = [p for p in paths if p.startswith(HISTORY_PREFIX) and p.endswith(".json")]
    return [path for path in fixed if path in paths] + sorted(history)


def build_sections(*, bundle: ReviewBundle, contents: dict[str, str]) -> dict[str, Any] | None:
    """The page context of the difficulty sections, from what the review page loaded; no queries.
    None when the review has nothing for them to show."""
    review, source = bundle.review, bundle.source
    evidence = _Evidence(review_id=review.id, paths=list(bundle.own_artifact_paths))
    standing = standing_of(source=source, review_id=review.id)
    result: dict[str, Any] = {
        "review_id": review.id,
        "baseline": None,
        "report": None,
        "history": _history(review_id=review.id, contents=contents, evidence=evidence),
    }
    if source.effective_quality == "good" and standing.review_is_current:
        result["baseline"] = _baseline(review=bundle.review, contents=contents, evidence=evidence)
    if REPORT_PATH in contents:
        try:
            report, summary = summarise(
                text=contents[REPORT_PATH], path=REPORT_PATH, standing=standing
            )
        except NotAReportError:
            pass  # not a report: no report section
        else:
            result["report"] = _report_section(
                report=report, summary=summary, evidence=evidence, contents=contents
            )
            result["legend"] = render_legend()
    if not (result["baseline"] or result["report"] or result["history"]):
        return None
    return result


SECTION = PageSection(
    name="difficulty",
    template="difficulty/review_sections.html",
    wanted=wanted_paths,
    build=build_sections,
)


def _json_artifact(*, contents: dict[str, str], path: str) -> Any:
    if path not in contents:
        return None
    try:
        return json.loads(contents[path])
    except ValueError:
        return None


def _baseline(*, review: Any, contents: dict[str, str], evidence: _Evidence) -> dict[str, Any]:
    context = _json_artifact(contents=contents, path=CONTEXT_PATH)
    context = context if isinstance(context, dict) else {}
    recorded = context.get("reviewer_rollout_baseline")
    if isinstance(recorded, dict):
        counts = {key: recorded.get(key) for key in COUNT_KEYS}
        labels = [
            str(item.get("label"))
            for item in recorded.get("configured_model_reviewers") or []
            if isinstance(item, dict) and item.get("label")
        ]
        derived = False
        limitations = [str(item) for item in recorded.get("limitations") or []]
    else:
        counts = dict(derived_counts(collection=review.collection))
        labels = judge_labels(collection=review.collection)
        derived = True
        limitations = []
    reference = context.get("historical_reference")
    reference = reference if isinstance(reference, dict) else {}
    artifact_path = reference.get("artifact_path")
    return {
        "line": (
            f"Quality-review solver: {counts['solved']}/{counts['verified']} solved · "
            f"{counts['attempted']} attempted · {counts['unverified']} unverified"
        ),
        "derived": derived,
        "reviewer_models": ", ".join(labels),
        "note": BASELINE_NOTE,
        "limitations": limitations,
        "issue_url": ISSUE_8942_URL,
        "evidence": evidence.viewer(artifact_path) if isinstance(artifact_path, str) else None,
        "applicability": reference.get("applicability"),
        "reference_limitations": [str(item) for item in reference.get("limitations") or []],
    }


def _number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _report_section(
    *,
    report: dict[str, Any],
    summary: dict[str, Any],
    evidence: _Evidence,
    contents: dict[str, str],
) -> dict[str, Any]:
    status = summary["status"]
    protocol = protocol_of(report)
    recorded_sampling = report.get("sampling")
    sampling: dict[str, Any] = recorded_sampling if isinstance(recorded_sampling, dict) else {}
    sample_parts = [
        f"{sampling['task_count']} shared tasks" if sampling.get("task_count") is not None else "",
        str(sampling.get("method") or ""),
        f"split {report['split']}" if report.get("split") else "",
    ]
    limits = " / ".join(
        f"{_number(protocol.get(key))} {word}"
        for key, word in (
            ("context_window", "context"),
            ("max_input_tokens", "input"),
            ("max_output_tokens", "output"),
        )
    )
    attestation = _attestation(contents=contents)
    return {
        "status": status,
        "title": TITLES[status],
        "status_note": summary["status_note"] if status != CURRENT else None,
        "sample_line": " · ".join(part for part in sample_parts if part),
        "protocol_line": (
            f"Protocol {protocol.get('id')} · {limits} tokens (output includes reasoning)"
        ),
        "bars": bars_for(summary=summary, mode=FULL),
        "chip": status_chip(summary=summary),
        "ordering_warning": summary["ordering_warning"],
        "explanation": EXPLANATION,
        "runs": [
            _run(model=model, summary=summary, url=run_url(review_id=evidence.review_id, number=n))
            for n, model in enumerate(_role_ordered(models_of(report)), start=1)
        ],
        "followups": [
            _followup(item=item, report=report, summary=summary, evidence=evidence)
            for item in followups.followups_of(report)
        ],
        "scope": _scope(report=report, sampling=sampling),
        "attestation": attestation,
        "limitations": [str(item) for item in report.get("limitations") or []],
        "report_link": evidence.viewer(REPORT_PATH),
    }


def _role_ordered(models: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rank = {"small": 0, "large": 1, "hosted": 2}
    return sorted(models, key=lambda model: rank.get(model.get("size") or "", 3))


def _interval(bounds: Any) -> str:
    return percent_range(bounds) or "Not recorded"


def run_url(*, review_id: str, number: int) -> str:
    """Where a run's settings and attempts load from when it opens (its page without scripts);
    ``number`` counts the runs in the section's order from 1."""
    return reverse("review-difficulty-run", kwargs={"review_id": review_id, "number": number})


def _run(*, model: dict[str, Any], summary: dict[str, Any], url: str) -> dict[str, Any]:
    """What a run shows before it opens: its title, bar and counts; the rest loads from ``url``."""
    status = summary["status"]
    single = {
        **summary,
        "models": [
            m
            for m in summary["models"]
            if m.get("size") == model.get("size") and not m.get("followup_id")
        ],
    }
    bar = bars_for(summary=single, mode=FULL)
    size = str(model.get("size"))
    return {
        "size": size,
        "title": f"{RUN_PREFIXES.get(status, '')}{bar[0].label if bar else size} · "
        f"{model.get('solved')}/{model.get('verified')} solved",
        "bars": bar,
        "counts_line": (
            f"{model.get('attempted')} attempts · {model.get('verified')} usable verifier "
            f"results · {model.get('unverified')} unverified · 95% interval "
            f"{_interval(model.get('wilson_95'))}"
        ),
        "url": url,
    }


def run_details(*, stored: StoredReport, number: int) -> dict[str, Any] | None:
    """The ``number``-th run of a stored report with its settings and attempts (what opening it
    loads), or None when there is no such run. No queries."""
    review_id = stored.review.id
    standing = standing_of(source=stored.review.source, review_id=review_id)
    try:
        report, summary = summarise(text=stored.text, path=REPORT_PATH, standing=standing)
    except NotAReportError:
        return None
    models = _role_ordered(models_of(report))
    if not 1 <= number <= len(models):
        return None
    model = models[number - 1]
    evidence = _Evidence(review_id=review_id, paths=stored.paths)
    size = str(model.get("size"))
    role = get_registry().current.role(size)
    identity = run_identity_path(report=report, size=size)
    outcomes = sorted(outcomes_of(model), key=lambda item: task_sort_key(item.get("task_id")))
    return {
        **_run(model=model, summary=summary, url=run_url(review_id=review_id, number=number)),
        "review_id": review_id,
        "run_identity": evidence.viewer(identity),
        "settings": _settings(
            model=model,
            reasoning=role.reasoning_setting if role and role.model == model.get("model") else None,
        ),
        "attempts": [_attempt(outcome=item, evidence=evidence) for item in outcomes],
        "report_link": evidence.viewer(REPORT_PATH),
    }


def _settings(*, model: dict[str, Any], reasoning: str | None) -> list[tuple[str, Any]]:
    verifier = model.get("verifier_configuration")
    rows = [
        ("Model", model.get("model")),
        ("Checkpoint revision", model.get("model_revision") or "Not exposed by provider"),
        ("Provider", model.get("provider") or "Local model service"),
        ("Reasoning setting", reasoning or "Recorded in generation parameters"),
        ("Generation parameters", _pretty(model.get("generation_parameters"))),
        ("Serving configuration", _pretty(model.get("serving_configuration"))),
        ("Generation outcomes", _pretty(model.get("generation_qc"))),
        ("Verifier configuration", _pretty(verifier)),
    ]
    return [(label, value) for label, value in rows if value not in (None, "")]


def _pretty(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def _attempt(*, outcome: dict[str, Any], evidence: _Evidence) -> dict[str, Any]:
    verification = outcome.get("verification")
    verification = verification if isinstance(verification, dict) else {}
    task_id = outcome.get("task_id")
    if verification.get("status") == "verified":
        title = f"Task {task_id} · score {verification.get('score')}"
    else:
        title = f"Task {task_id} · {verification.get('status') or 'not recorded'} · unverified"
    base = str(outcome.get("execution_path") or "").rstrip("/")
    followup = outcome.get("verification_followup")
    followup_paths = (
        [
            item["path"]
            for item in (followup or {}).get("artifacts") or []
            if isinstance(item, dict) and isinstance(item.get("path"), str)
        ]
        if isinstance(followup, dict)
        else []
    )
    logs = [evidence.viewer(f"{base}/{name}") for name in VERIFIER_LOGS] if base else []
    return {
        "title": title,
        "budget_exhausted": outcome.get("stop_reason") == "length",
        "verification": _pretty(verification) if verification else None,
        "metadata": [
            ("Turns", outcome.get("turns")),
            ("Done", outcome.get("done")),
            ("Attempt complete", outcome.get("attempt_complete")),
            ("Stop reason", outcome.get("stop_reason")),
            ("Execution path", outcome.get("execution_path")),
        ],
        "turns": _turns(base=base, turns=outcome.get("turns"), evidence=evidence),
        "critic_calls": _calls(base=f"{base}/verifier/critic/", evidence=evidence) if base else [],
        "verifier_logs": [viewer for viewer in logs if viewer],
        "has_followup": bool(followup_paths),
        "followup_logs": [
            {"viewer": evidence.viewer(path), "missing": missing_text(path)}
            for path in followup_paths
        ],
        "inputs": [
            viewer
            for viewer in (
                [
                    evidence.viewer(f"{base}/input.json"),
                    evidence.viewer(f"{base}/agent/trajectory.json"),
                ]
                + [evidence.viewer(p) for p in evidence.under(f"{base}/agent/episode-")]
            )
            if viewer
        ]
        if base
        else [],
        "input_missing": missing_text(f"{base}/input.json") if base else None,
        "execution_missing": (
            missing_text(base) if base and not evidence.under(f"{base}/") else None
        ),
    }


def _turn_numbers(*, base: str, turns: Any, evidence: _Evidence) -> list[str]:
    found = {
        path[len(f"{base}/solver/") :].split("/", 1)[0]
        for path in evidence.under(f"{base}/solver/turn-")
    }
    if isinstance(turns, int) and not isinstance(turns, bool) and turns > 0:
        # Turn folders count from 000, as make_review and the reference tooling write them.
        found.update(f"turn-{number:03d}" for number in range(turns))
    return sorted(found, key=task_sort_key) or ["turn-000"]


def _turns(*, base: str, turns: Any, evidence: _Evidence) -> list[dict[str, Any]]:
    if not base:
        return [{"name": "Turn 1", "request": None, "response": None}]
    rows = []
    for name in _turn_numbers(base=base, turns=turns, evidence=evidence):
        prefix = f"{base}/solver/{name}"
        rows.append(
            {
                "name": _turn_label(name),
                "request": evidence.viewer(f"{prefix}/request.json", title="Model request"),
                "response": evidence.viewer(f"{prefix}/response.json", title="Model response"),
            }
        )
    return rows


def _turn_label(name: str) -> str:
    """``turn-000`` is the first turn: people read it as Turn 1 (the folder name is in the
    viewers' paths). A folder name that is not a number is shown as it is."""
    number = name.removeprefix("turn-")
    return f"Turn {int(number) + 1}" if number.isdigit() else name


def _calls(*, base: str, evidence: _Evidence) -> list[dict[str, Any]]:
    names = sorted(
        {p[len(base) :].split("/", 1)[0] for p in evidence.under(base)}, key=task_sort_key
    )
    return [
        {
            "name": name,
            "request": evidence.viewer(f"{base}{name}/request.json", title="Verifier request"),
            "response": evidence.viewer(f"{base}{name}/response.json", title="Verifier response"),
        }
        for name in names
    ]


def _followup(
    *, item: dict[str, Any], report: dict[str, Any], summary: dict[str, Any], evidence: _Evidence
) -> dict[str, Any]:
    entry = next((m for m in summary["models"] if m.get("followup_id") == item.get("id")), None)
    earlier = next(
        (
            m
            for m in summary["models"]
            if not m.get("followup_id") and m.get("model") == item.get("model")
        ),
        None,
    )
    pair = [m for m in (earlier, entry) if m]
    report_path = item.get("report_path")
    attempts_report = (
        report_path
        if followups.is_complete(item)
        and isinstance(report_path, str)
        and report_path in evidence.paths
        else None
    )
    changes = [
        ("Changed parameter", _pretty(item.get("changed_parameter"))),
        ("Checkpoint change", _pretty(item.get("checkpoint_change"))),
        ("Generation parameters", _pretty(item.get("generation_parameters"))),
        ("Verifier configuration change", _pretty(item.get("verifier_configuration_change"))),
    ]
    name = followup_label(
        entry=entry
        or {
            "model": item.get("model"),
            "size": "hosted" if followups.is_hosted(item) else "followup",
            "display_name": followups.display_name(item),
            "changed_setting": followups.changed_setting(item),
            "changed_checkpoint": followups.changed_checkpoint(item),
        }
    )
    return {
        # The section title names the follow-up as its bar does everywhere else.
        "title": f"{followups.section_title(item)} · {name}",
        "hosted_note": followups.HOSTED_NOTE if followups.is_hosted(item) else None,
        "changes": [(label, value) for label, value in changes if value],
        "limitations": [str(x) for x in item.get("limitations") or []],
        "bars": bars_for(summary={**summary, "models": pair}, mode=FULL) if entry else [],
        "report": _link_or_missing(item.get("report_path"), evidence),
        "original_report": _link_or_missing(item.get("original_report_path"), evidence),
        "attempts_viewer": (
            evidence.viewer(attempts_report) if attempts_report is not None else None
        ),
        "no_attempts": None if attempts_report is not None else followups.NO_ATTEMPTS_YET,
    }


def _link_or_missing(path: Any, evidence: _Evidence) -> dict[str, Any] | None:
    if not isinstance(path, str) or not path:
        return None
    return {"viewer": evidence.viewer(path), "missing": missing_text(path)}


def _scope(*, report: dict[str, Any], sampling: dict[str, Any]) -> list[tuple[str, str]]:
    revisions = "; ".join(
        f"{model_name(m.get('model'))}: {m.get('model_revision') or 'Not exposed by provider'}"
        for m in _role_ordered(models_of(report))
    )
    uncertainty = "; ".join(
        f"{model_name(m.get('model'))}: {_interval(m.get('wilson_95'))}"
        for m in _role_ordered(models_of(report))
    )
    rows = [
        ("Sampling", _pretty(sampling) if sampling else None),
        (
            "Population",
            _number(report["population_count"])
            if report.get("population_count") is not None
            else None,
        ),
        ("Measured data revision", report.get("source_revision")),
        ("Split", report.get("split")),
        ("Estimated", report.get("estimated_at")),
        ("Checkpoint revisions", revisions),
        ("Uncertainty (Wilson 95%)", uncertainty),
    ]
    return [(label, str(value)) for label, value in rows if value]


def _attestation(*, contents: dict[str, str]) -> dict[str, str] | None:
    if ATTESTATION_PATH not in contents:
        return None
    document = _json_artifact(contents=contents, path=ATTESTATION_PATH)
    line = attestation_line(document=document)
    return {"line": line, "note": SCOPE_NOTE} if line else None


def _history(
    *, review_id: str, contents: dict[str, str], evidence: _Evidence
) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for path, text in contents.items():
        if not path.startswith(HISTORY_PREFIX):
            continue
        try:
            report, _ = summarise(text=text, path=path)
        except NotAReportError:
            continue
        estimated = str(report.get("estimated_at") or "")
        entries.append(
            {
                "sort_key": estimated,
                "title": f"{estimated[:10] or 'Date unknown'} · "
                f"{protocol_of(report).get('id') or 'Protocol not recorded'} · "
                f"{MEASUREMENT_LABELS[HISTORICAL]}",
                "summary_url": reverse("review-difficulty", kwargs={"review_id": review_id})
                + "?"
                + urlencode({"path": path}),
                "link": evidence.viewer(path),
            }
        )
    entries.sort(key=lambda entry: entry["sort_key"], reverse=True)
    return entries
