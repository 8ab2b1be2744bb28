"""Croissant JSON-LD of each source and of the catalog, checked by the format's own checker
(mlcroissant): every source of the real inventory, a reviewed and measured source, and the
catalog's records read back from its CSV export. The checker runs in a process whose proxies lead
nowhere, so a document that needed anything fetched would fail: nothing is downloaded."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html import unescape

import pytest

from atlas.models import Source
from atlas.services.sync import sync_catalog
from atlas.web.croissant import CONFORMS_TO, CONTEXT
from tests.atlas.test_catalog_helpers import set_state
from tests.conftest import make_row

pytestmark = pytest.mark.django_db
NOWHERE = "http://127.0.0.1:9"
# What the checker may say about a document that states only what is known: no citation, no
# publication date and no semantic version are recorded for a source or the catalog (a source's
# pinned revision is its isBasedOn's version), and not every source names a licence.
RECOMMENDED_ONLY = re.compile(
    r'Property "(http://mlcommons.org/croissant/citeAs|https://schema.org/(datePublished|version'
    r'|license))" is recommended, but does not exist\.'
)
CHECK = """
import json, sys
import mlcroissant as mlc
jobs, found = json.load(sys.stdin), []
for job in jobs:
    try:
        dataset = mlc.Dataset(jsonld=job["document"], mapping=job.get("mapping"))
    except mlc.ValidationError as error:
        found.append({"errors": str(error)})
        continue
    result = {"errors": "", "warnings": sorted(dataset.metadata.ctx.issues.warnings)}
    if job.get("records"):
        text = lambda value: value.decode() if isinstance(value, bytes) else value
        rows = dataset.records(job["records"])
        result["records"] = [{key: text(value) for key, value in row.items()} for row in rows]
    found.append(result)
print(json.dumps(found, default=str))
"""


def checked(jobs: list[dict]) -> list[dict]:
    """mlcroissant's verdict on each document, in a process that cannot reach anything."""
    env = {**os.environ, "HTTP_PROXY": NOWHERE, "HTTPS_PROXY": NOWHERE, "ALL_PROXY": NOWHERE}
    for name in ("NO_PROXY", "no_proxy"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    return json.loads(done.stdout)


def valid(result: dict) -> bool:
    return result["errors"] == "" and all(
        RECOMMENDED_ONLY.search(warning) for warning in result["warnings"]
    )


def served(client, url: str) -> dict:
    response = client.get(url)
    assert response.status_code == 200, url
    assert response["Content-Type"] == "application/ld+json"
    return response.json()


SUMMARY = {
    "models": [
        {"size": "small", "model": "Qwen/Qwen3-Coder-30B-A3B-Instruct", "solved": 1,
         "verified": 3, "solve_rate": 1 / 3, "measurement_status": "current"},
        {"size": "large", "model": "Qwen/Qwen3.5-122B-A10B", "solved": 2, "verified": 3,
         "solve_rate": 2 / 3, "measurement_status": "current"},
        {"size": "hosted", "model": "zai-org/GLM-5.3", "solved": 3, "verified": 3,
         "measurement_status": "current"},
    ]
}  # fmt: skip


@pytest.fixture
def reviewed(write_catalog):
    rows = [
        make_row("MarinSkyRL:rated", tags=["rlvr", "single-turn", "license:cc-by-4.0"]),
        make_row("MarinSkyRL:plain", tags=["rlvr", "license:other"], task_count=None,
                 notes="Closing </script><b>tags</b> & more."),
    ]  # fmt: skip
    sync_catalog(catalog_path=write_catalog(rows), force=False, trigger="command")
    set_state(
        "MarinSkyRL:rated",
        effective_quality="good",
        display_review_id="c" * 64,
        display_review_date="2025-03-03T12:00:00Z",
        difficulty_status="current",
        difficulty_summary=SUMMARY,
    )


def test_a_sources_document_says_what_the_atlas_knows(client, reviewed):
    document = served(client, "/sources/MarinSkyRL:rated/croissant.json")
    assert document["@context"] == CONTEXT and document["conformsTo"] == CONFORMS_TO
    assert document["@type"] == "sc:Dataset"
    assert (document["name"], document["alternateName"]) == ("example/rated", "MarinSkyRL:rated")
    assert document["url"] == "http://testserver/sources/MarinSkyRL:rated/"
    assert document["license"] == ["https://spdx.org/licenses/CC-BY-4.0.html"]
    assert document["isBasedOn"] == {
        "@type": "Dataset",
        "name": "example/rated",
        "url": "https://huggingface.co/datasets/example/rated",
        "version": "a" * 40,
    }
    assert document["size"] == {
        "@type": "QuantitativeValue",
        "value": 100,
        "unitText": "input rows",
    }
    quality, *rates = document["review"]
    assert quality["reviewRating"]["ratingValue"] == "Good"
    assert quality["url"] == f"http://testserver/reviews/{'c' * 64}/"
    assert quality["datePublished"].startswith("2025-03-03T12:00:00")
    assert [(r["name"], r["reviewRating"]["ratingValue"]) for r in rates] == [
        ("Solve rate of Qwen/Qwen3-Coder-30B-A3B-Instruct (Small model)", 1 / 3),
        ("Solve rate of Qwen/Qwen3.5-122B-A10B (Large model)", 2 / 3),
        ("Solve rate of zai-org/GLM-5.3 (Hosted model)", 1.0),  # solved / verified
    ]
    assert rates[0]["reviewRating"]["ratingExplanation"] == "1 of 3 verified tasks solved · Current"
    assert all(r["url"].endswith("#difficulty") for r in rates)
    # Unknown stays out: no licence for license:other, no size, no review.
    plain = served(client, "/sources/MarinSkyRL:plain/croissant.json")
    assert not {"license", "size", "review"} & set(plain)
    assert plain["description"].startswith("Closing </script><b>tags</b> & more. Dataset of")
    assert client.get("/sources/MarinSkyRL:nowhere/croissant.json").status_code == 404
    results = checked([{"document": document}, {"document": plain}])
    assert all(valid(result) for result in results), results


def test_the_source_page_links_and_embeds_its_document(client, reviewed):
    for source_id in ("MarinSkyRL:rated", "MarinSkyRL:plain"):
        html = client.get(f"/sources/{source_id}/").content.decode()
        assert (
            '<link rel="alternate" type="application/ld+json" title="Croissant metadata" '
            f'href="/sources/{source_id}/croissant.json">'
        ) in html
        scripts = re.findall(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)
        assert len(scripts) == 1
        assert "</" not in scripts[0] and "<b>" not in scripts[0]  # escaped, never markup
        assert json.loads(scripts[0]) == served(client, f"/sources/{source_id}/croissant.json")
    # The catalog's drawer shows the page's body only, without the document.
    drawer = client.get("/sources/MarinSkyRL:rated/", HTTP_X_ATLAS_REGION="details")
    assert "application/ld+json" not in drawer.content.decode()


@pytest.mark.slow
def test_every_source_of_the_real_inventory_passes_the_checker(client, packaged_catalog):
    sync_catalog(catalog_path=packaged_catalog, force=False, trigger="command")
    ids = list(Source.objects.order_by("id").values_list("id", flat=True))
    assert len(ids) > 200
    documents = [served(client, f"/sources/{source_id}/croissant.json") for source_id in ids]
    results = checked([{"document": document} for document in documents])
    refused = {i: r for i, r in zip(ids, results, strict=True) if not valid(r)}
    assert refused == {}
    licensed = [d for d in documents if "license" in d]
    assert licensed and all(
        d["license"][0].startswith("https://spdx.org/licenses/") for d in licensed
    )
    # Every pinned revision is the inventory's.
    for source_id, document in zip(ids, documents, strict=True):
        payload = Source.objects.get(id=source_id).payload
        assert document["isBasedOn"]["version"] == payload["dataset_revision"]


def test_the_catalog_document_reads_back_the_export(client, reviewed, tmp_path):
    document = served(client, "/croissant.json")
    assert document["isLiveDataset"] is True
    assert document["size"]["value"] == 2
    assert "2 active sources" in document["description"]
    assert "1 sources declare their input rows (100 in all" in document["description"]
    assert "Quality ratings: 1 Good." in document["description"]
    (distribution,) = document["distribution"]
    assert distribution["contentUrl"] == "http://testserver/export.csv"
    export = tmp_path / "export.csv"
    export.write_bytes(b"".join(client.get("/export.csv").streaming_content))
    (result,) = checked(
        [{"document": document, "mapping": {"export.csv": str(export)}, "records": "sources"}]
    )
    assert valid(result), result
    names = sorted(record["sources/source_name"] for record in result["records"])
    assert names == ["example/plain", "example/rated"]
    rated = next(r for r in result["records"] if r["sources/source_name"] == "example/rated")
    assert rated["sources/quality"] == "good" and float(rated["sources/input_rows"]) == 100
    assert unescape(rated["sources/tags"]) == "rlvr,single-turn,license:cc-by-4.0"
