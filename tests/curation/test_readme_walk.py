"""README's "Curating a defect", run as printed on ``make demo``'s data: its code blocks, in order,
with only what the section tells a reader to fill in — the Atlas's address, the review id, a new
issue URL, the demo's review config, and the checkouts the prose asks for — take the example source
from Good through a confirmed defect to a resolved one and Good again. No step is added, and none
needs an option the section does not print (issue 34: the walk had a dead end)."""

from __future__ import annotations

import json
import re
import shlex
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from atlas.models import Source
from atlas.services.sync import sync_catalog
from reviews.models import Review, VerifierIssue
from reviews.production.examples.chat_server import ChatServer
from reviews.production.examples.marinskyrl import SOURCE_ID, git
from reviews.production.examples.serve import demo_model

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

README = Path(settings.BASE_DIR) / "README.md"
NEW_ISSUE = "https://github.com/open-athena/rl-data-atlas-examples/issues/2"


def section_commands(title: str) -> list[list[str]]:
    """Every command of the section's ``bash`` blocks, continuation lines joined, as words."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.index("\n## ", start + 1)
    blocks = re.findall(r"```bash\n(.*?)```", text[start:end], flags=re.S)
    commands = []
    for block in blocks:
        joined = re.sub(r"\\\n\s*", " ", block)
        commands += [shlex.split(line) for line in joined.splitlines() if line.strip()]
    return commands


def test_curating_a_defect_runs_as_printed_on_make_demo(
    packaged_catalog, live_server, tmp_path, monkeypatch
):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    examples = tmp_path / "examples"
    call_command("publish_examples", "--output", str(examples), stdout=StringIO())
    checkout = examples / "MarinSkyRL"
    _good, buggy, fixed = git(checkout, "rev-list", "--reverse", "HEAD").split()
    first_review = (
        Review.objects.filter(source_id=SOURCE_ID, kind="rating").order_by("published_at").first()
    )
    commands = section_commands("Curating a defect")
    assert [words[2] for words in commands] == [
        "fetch_review", "reproduce_defect", "publish_review", "confirm_verifier_issue",
        "make_review", "validate_fix", "publish_review", "resolve_verifier_issue",
        "publish_review",
    ]  # fmt: skip
    work = tmp_path / "curation"
    work.mkdir()
    monkeypatch.chdir(work)
    with ChatServer(default=demo_model()) as server:
        # "serve the scripted model and point var/examples/review-config.json at it"
        config_path = examples / "review-config.json"
        config = json.loads(config_path.read_text(encoding="utf-8"))
        config["model"]["base_url"] = server.base_url
        config_path.write_text(json.dumps(config), encoding="utf-8")
        filled = {
            "https://atlas.example": live_server.url,
            "REVIEW_ID": first_review.id,
            "https://github.com/OWNER/REPO/issues/N": NEW_ISSUE,
            "review-config.json": str(config_path),
        }
        for words in commands:
            name, args = words[2], [filled.get(word, word) for word in words[3:]]
            if name == "reproduce_defect":
                # "check out var/examples/MarinSkyRL at the commit it names"
                git(checkout, "checkout", "-q", buggy)
            if name == "make_review":
                git(checkout, "checkout", "-q", fixed)  # "then, for step 4, at the next one"
            out = StringIO()
            call_command(name, *args, stdout=out, stderr=StringIO())
            if name == "reproduce_defect":
                printed = out.getvalue()
                assert printed.startswith("Reproduced 2 of 2 case(s)")
                # The one other rejected attempt is named: its answer is genuinely wrong.
                assert "Note: 1 other attempt(s) of the run were rejected too:" in printed
                assert "'#### 2,012'" in printed
            if name == "confirm_verifier_issue":
                assert Source.objects.get(id=SOURCE_ID).effective_quality == "some_issues"
    issue = VerifierIssue.objects.get(source_id=SOURCE_ID, issue_url=NEW_ISSUE)
    assert issue.status == "resolved"
    source = Source.objects.get(id=SOURCE_ID)
    assert source.effective_quality == "good"
    assert source.review_id == issue.resolution_review_id
