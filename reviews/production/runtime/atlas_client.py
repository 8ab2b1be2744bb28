"""Reading an Atlas over its public API: a source's row,
its verifier issues, and a published review's artifacts — everything the curators' tools need
from the catalog, read as any client would, never from its database."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from reviews.production.format.run_files import normalized_relative
from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.rundir import write_json_file

TIMEOUT_SECONDS = 30.0
# An artifact is at most ATLAS_MAX_ARTIFACT_BYTES (16 MiB by default) on the Atlas; a larger
# answer is not one of its artifacts.
MAX_BODY_BYTES = 64 * 1024 * 1024
FETCHED_FILE = "atlas-review.json"


class AtlasClient:
    def __init__(self, base_url: str, *, timeout: float = TIMEOUT_SECONDS) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=True)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> AtlasClient:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def read(self, path: str) -> bytes:
        url = self.url(path)
        try:
            with self._http.stream("GET", url) as response:
                if response.status_code != 200:
                    raise ReviewProductionError(f"Cannot read {url}: HTTP {response.status_code}")
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > MAX_BODY_BYTES:
                        raise ReviewProductionError(f"Cannot read {url}: the answer exceeds 64 MiB")
                return bytes(body)
        except httpx.HTTPError as exc:
            raise ReviewProductionError(f"Cannot read {url}: {type(exc).__name__}: {exc}") from None

    def json(self, path: str) -> Any:
        import json

        try:
            return json.loads(self.read(path))
        except ValueError:
            raise ReviewProductionError(f"Cannot read {self.url(path)}: not JSON") from None

    # --- what the tools read ---

    def source_row(self, source_id: str) -> dict[str, Any]:
        row = self.json(f"/api/sources/{quote(source_id, safe='')}/")
        if not isinstance(row, dict) or row.get("id") != source_id:
            raise ReviewProductionError(f"The Atlas answered another source than {source_id}")
        return row

    def verifier_issue(self, *, source_id: str, issue_url: str) -> dict[str, Any]:
        """The source's verifier issue for ``issue_url`` (any status)."""
        path: str | None = f"/api/verifier-issues/?source={quote(source_id, safe='')}"
        while path:
            page = self.json(path)
            for issue in page.get("results", []) if isinstance(page, dict) else []:
                if isinstance(issue, dict) and issue.get("issue_url") == issue_url:
                    return issue
            following = page.get("next") if isinstance(page, dict) else None
            path = _path_of(following, self.base_url) if following else None
        raise ReviewProductionError(
            f"The Atlas records no verifier issue {issue_url} for {source_id}"
        )

    def review_pool(self, source_id: str) -> list[dict[str, Any]]:
        """Every published collection of the source (``GET /api/reviews/?source=``)."""
        found: list[dict[str, Any]] = []
        path: str | None = f"/api/reviews/?source={quote(source_id, safe='')}"
        while path:
            page = self.json(path)
            if not isinstance(page, dict) or not isinstance(page.get("results"), list):
                raise ReviewProductionError(f"The Atlas answered no review pool for {source_id}")
            found += [entry for entry in page["results"] if isinstance(entry, dict)]
            path = _path_of(page["next"], self.base_url) if page.get("next") else None
        return found

    def review(self, review_id: str) -> dict[str, Any]:
        review = self.json(f"/api/reviews/{quote(review_id, safe='')}/")
        if not isinstance(review, dict) or review.get("id") != review_id:
            raise ReviewProductionError(f"The Atlas answered another review than {review_id}")
        return review

    def fetch_review(self, *, review_id: str, output: Path) -> dict[str, Any]:
        """Every artifact of a published review into ``output``, each checked against the
        SHA-256 the Atlas lists (the collection's own SHA-256 is its review id)."""
        review = self.review(review_id)
        listed = review.get("artifacts") or []
        for artifact in listed:
            relative = normalized_relative(str(artifact.get("path")))
            if relative is None:
                raise ReviewProductionError(
                    f"The Atlas lists an unsafe artifact path: {artifact!r}"
                )
            data = self.read(
                f"/api/reviews/{quote(review_id, safe='')}/artifacts/{quote(relative)}"
            )
            if hashlib.sha256(data).hexdigest() != artifact.get("sha256"):
                raise ReviewProductionError(
                    f"Artifact {relative} does not match its listed SHA-256"
                )
            target = output / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        collection = output / "quality-reviews.json"
        if (
            not collection.is_file()
            or hashlib.sha256(collection.read_bytes()).hexdigest() != review_id
        ):
            raise ReviewProductionError(f"Review {review_id} has no collection matching its id")
        record = {
            "atlas": self.base_url,
            "review_id": review_id,
            "source_id": review.get("source_id"),
            "kind": review.get("kind"),
            "url": f"{self.base_url}/reviews/{review_id}/",
            "artifacts": len(listed),
            "fetched_at": dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z"),
        }
        write_json_file(output / FETCHED_FILE, record)
        return record


def _path_of(url: str, base: str) -> str:
    """A ``next`` link as a path on the same Atlas."""
    if url.startswith(base):
        return url[len(base) :]
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")
