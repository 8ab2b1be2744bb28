"""The hostile corpus: inputs an outside tester sent, each refused with its message while every
table stays exactly as it was."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from django.apps import apps

from tests.reviews import factories as f


def fingerprint(*, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """A SHA-256 of every row of every project table (ordered by primary key), by table name."""
    found: dict[str, str] = {}
    for model in apps.get_models():
        if model._meta.app_label not in {"atlas", "reviews", "difficulty"}:
            continue
        table = model._meta.db_table
        if table in skip:
            continue
        rows = list(model.objects.order_by("pk").values_list())
        digest = hashlib.sha256(json.dumps(rows, default=str, sort_keys=True).encode()).hexdigest()
        found[table] = f"{len(rows)}:{digest}"
    return found


@pytest.fixture
def tables():
    """``tables.before()`` then ``tables.assert_unchanged(...)``."""

    class Tables:
        snapshot: dict[str, Any] = {}

        def before(self, *, skip: tuple[str, ...] = ()) -> None:
            self.skip = skip
            self.snapshot = fingerprint(skip=skip)

        def assert_unchanged(self) -> None:
            assert fingerprint(skip=self.skip) == self.snapshot

    return Tables()


RESPONSE = "tasks/0000/execution-000/solver/turn-000/response.json"


def brackets(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.fixture
def hostile_review():
    """A published review whose model text and files hold nesting and lines of every size."""
    f.make_source("MarinSkyRL:example")
    text = "Model said " + brackets(750) + " and " + "{" * 2000 + " then " + "y" * 200_000
    collection, files = f.native_collection(
        task_count=1, source_findings=[f.finding("finding:deep", text)]
    )
    files[RESPONSE] = json.dumps(
        {"choices": [{"message": {"content": brackets(750), "reasoning_content": "x" * 200_000}}]}
    )
    files["publication/brackets.txt"] = brackets(5000)
    files["publication/deep.json"] = json.dumps({"a": {"b": brackets(31)}})
    deep_object: Any = "z" * 200_000
    for level in range(30):
        deep_object = {f"key-{level}-" + "k" * 40: deep_object}
    files["publication/deep-object.json"] = json.dumps(deep_object)
    return f.publish(collection, files, make_current=True)
