"""What reviews show on the source page: open and resolved verifier defects and the pool."""

from __future__ import annotations

import pytest

from tests.reviews import factories as f

pytestmark = pytest.mark.django_db
SOURCE_ID = "MarinSkyRL:example"


def test_open_and_resolved_defects_and_the_pool(client):
    f.make_source(SOURCE_ID)
    collection, files = f.native_collection()
    current = f.publish(collection, files, make_current=True)
    defect, defect_files = f.supplemental_collection()
    confirming = f.publish(defect, defect_files)
    f.record_issue(source_id=SOURCE_ID, confirming=confirming)
    f.record_issue(
        source_id=SOURCE_ID,
        confirming=confirming,
        issue_url="https://github.com/o/r/issues/9",
        resolution=current,
    )
    html = client.get(f"/sources/{SOURCE_ID}/").content.decode()
    issues = html[html.index('id="verifier-issues"') : html.index('id="review-pool"')]
    assert "Confirmed verifier defects remain unresolved (1)." in issues
    assert 'href="https://github.com/marin-community/MarinSkyRL/issues/7"' in issues
    assert f'href="/reviews/{confirming.id}/">Defect evidence</a>' in issues
    assert "Resolved (1)" in issues
    assert f'href="/reviews/{current.id}/">Resolved by</a>' in issues
    pool = html[html.index('id="review-pool"') :]
    assert "Review pool (2 collections)" in pool
    assert f'href="/reviews/{current.id}/"' in pool and "<strong>current</strong>" in pool
    assert "Supplemental" in pool
