"""``field__among``: one bound parameter for any number of ids, on both databases."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from atlas.models import Source
from tests.atlas.test_catalog_helpers import make_row, seed

pytestmark = pytest.mark.django_db


def test_among_matches_like_in_with_one_parameter(write_catalog):
    seed(write_catalog, [make_row(f"MarinSkyRL:s{n:04d}") for n in range(30)])
    wanted = [f"MarinSkyRL:s{n:04d}" for n in range(0, 30, 3)] + ["MarinSkyRL:absent"]
    with CaptureQueriesContext(connection) as queries:
        found = sorted(Source.objects.filter(id__among=wanted).values_list("id", flat=True))
    assert found == sorted(wanted[:-1])
    assert found == sorted(Source.objects.filter(id__in=wanted).values_list("id", flat=True))
    assert queries[0]["sql"].count("MarinSkyRL:s") <= len(wanted)  # the list, once
    assert list(Source.objects.filter(id__among=[])) == []
    # Foreign keys take it too.
    from reviews.models import VerifierIssue

    assert list(VerifierIssue.objects.filter(source_id__among=wanted)) == []
