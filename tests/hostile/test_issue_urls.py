"""GitHub issue URLs with something after the number: a trailing newline (which a ``$`` anchor
lets through), a carriage return, a space, a fragment. The one rule refuses them, and so does
every command that takes one, before anything is read or written."""

from __future__ import annotations

import pytest

from reviews.production.curation.reproduce import ReproduceOptions, reproduce_defect
from reviews.production.curation.validate import ValidateOptions, validate_fix
from reviews.production.format.github_issues import is_github_issue_url, not_an_issue
from reviews.production.runtime.errors import UsageError
from reviews.services.defects import DefectRuleError, confirm_verifier_issue
from tests.reviews import factories as f

ISSUE = "https://github.com/marin-community/MarinSkyRL/issues/4242"
TRAILING = [f"{ISSUE}\n", f"{ISSUE}\r\n", f"{ISSUE} ", f"{ISSUE}#x", f"\n{ISSUE}", f"{ISSUE}\x00"]


def test_the_rule_takes_the_url_and_nothing_after_it():
    assert is_github_issue_url(ISSUE)
    assert not any(is_github_issue_url(url) for url in TRAILING)


@pytest.mark.parametrize("url", TRAILING)
def test_the_curators_tools_refuse_it_before_reading_anything(tmp_path, url):
    missing = tmp_path / "no-such-run"
    with pytest.raises(UsageError) as reproduce:
        reproduce_defect(
            options=ReproduceOptions(
                run_dir=missing, attempts=("0000",), kind="verifier", issue_url=url,
                expect="accepted", output=tmp_path / "out",
            )
        )  # fmt: skip
    with pytest.raises(UsageError) as validate:
        validate_fix(
            options=ValidateOptions(
                review=missing, output=tmp_path / "out", atlas="http://127.0.0.1:9", issue_url=url
            )
        )
    assert str(reproduce.value) == str(validate.value) == not_an_issue(url)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.django_db
@pytest.mark.parametrize("url", TRAILING[:2])
def test_confirmation_refuses_it(url, tables):
    source = f.make_source("MarinSkyRL:example")
    tables.before()
    with pytest.raises(DefectRuleError) as refused:
        confirm_verifier_issue(source_id=source.id, issue_url=url, review_id="a" * 64)
    assert str(refused.value) == not_an_issue(url)
    tables.assert_unchanged()
