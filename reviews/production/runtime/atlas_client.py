"""Reading an Atlas over its public API: a source's row,
its verifier issues, and a published review's artifacts — everything the curators' tools need
from the catalog, read as any client would, never from its database."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from reviews.production.format.run_files import normalized_relative
from reviews.production.runtime.bounded_http import BoundedHttp, CallFailed
from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.rundir import write_json_file

# Each call's whole deadline: a body trickled a byte at a time ends here, not never.
TIMEOUT_SECONDS = 30.0
# An artifact is at most ATLAS_MAX_ARTIFACT_BYTES (16 MiB by default) on the Atlas; a larger
# answer is not one of its artifacts.
MAX_BODY_BYTES = 64 * 1024 * 1024
# Everything one client reads, all calls together: an Atlas accepts a publication of at most
# ATLAS_MAX_PUBLICATION_BYTES (512 MiB by default), and no tool needs more than a review's worth.
MAX_TOTAL_BYTES = 512 * 1024 * 1024
# Pages of one listing (a source's verifier issues, its review pool), and redirects of one call.
MAX_PAGES = 1000
MAX_REDIRECTS = 5
FETCHED_FILE = "atlas-review.json"
# What a POSIX file system holds: a name of 255 bytes, a path of 4096.
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 4095


class AtlasClient:
    """Every tool that talks to an Atlas talks through this client: each call within its
    deadline and the per-answer cap, everything read within the total cap, redirects followed
    only on the Atlas's own origin, listings within ``max_pages`` and never the same page twice.
    Each refusal is one line naming the URL."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = TIMEOUT_SECONDS,
        max_bytes: int = MAX_BODY_BYTES,
        max_total_bytes: int = MAX_TOTAL_BYTES,
        max_pages: int = MAX_PAGES,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ReviewProductionError(f"An Atlas is an http(s) URL: {base_url}")
        self.origin = _origin(self.base_url)
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_total_bytes = max_total_bytes
        self.max_pages = max_pages
        self.read_bytes = 0
        self._http = BoundedHttp(connections=1)

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
        target = url
        for _redirect in range(MAX_REDIRECTS + 1):
            try:
                answer = self._http.request(
                    "GET", target, timeout=self.timeout, max_bytes=self.max_bytes, label=target
                )
            except CallFailed as failure:
                raise ReviewProductionError(f"Cannot read {url}: {failure.reason}") from None
            self._count(url, len(answer.body))
            if answer.status in (301, 302, 303, 307, 308):
                location = urljoin(target, answer.headers.get("location", ""))
                if _origin(location) != self.origin:
                    raise ReviewProductionError(
                        f"Cannot read {url}: the Atlas redirected to another origin "
                        f"({_origin(location)}), which is not followed"
                    )
                target = location
                continue
            if answer.status != 200:
                raise ReviewProductionError(f"Cannot read {url}: HTTP {answer.status}")
            return answer.body
        raise ReviewProductionError(f"Cannot read {url}: more than {MAX_REDIRECTS} redirects")

    def _count(self, url: str, size: int) -> None:
        self.read_bytes += size
        if self.read_bytes > self.max_total_bytes:
            raise ReviewProductionError(
                f"Cannot read {url}: the Atlas's answers passed {self.max_total_bytes:,} bytes "
                "in all, more than any review holds"
            )

    def json(self, path: str) -> Any:
        try:
            return json.loads(self.read(path))
        except ValueError:
            raise ReviewProductionError(f"Cannot read {self.url(path)}: not JSON") from None

    def pages(self, first: str) -> Iterator[Any]:
        """Each page of a listing from ``first`` on, following ``next`` on this Atlas; refused
        when a page comes twice (a loop) or after ``max_pages``."""
        seen: set[str] = set()
        path: str | None = first
        while path is not None:
            if path in seen:
                raise ReviewProductionError(
                    f"Cannot read {self.url(first)}: its pages lead back to {self.url(path)}"
                )
            if len(seen) >= self.max_pages:
                raise ReviewProductionError(
                    f"Cannot read {self.url(first)}: more than {self.max_pages} pages"
                )
            seen.add(path)
            page = self.json(path)
            yield page
            following = page.get("next") if isinstance(page, dict) else None
            path = self._path_of(following, listing=first) if following else None

    def _path_of(self, url: Any, *, listing: str) -> str:
        """A ``next`` link as a path on this Atlas: only its path and query are read (an Atlas
        behind a proxy may name itself by another host), so no other origin is ever asked."""
        text = str(url)
        if text.startswith(self.base_url):
            return text[len(self.base_url) :]
        parts = urlsplit(urljoin(self.url(listing), text))
        return parts.path + (f"?{parts.query}" if parts.query else "")

    # --- what the tools read ---

    def source_row(self, source_id: str) -> dict[str, Any]:
        row = self.json(f"/api/sources/{quote(source_id, safe='')}/")
        if not isinstance(row, dict) or row.get("id") != source_id:
            raise ReviewProductionError(f"The Atlas answered another source than {source_id}")
        return row

    def verifier_issue(self, *, source_id: str, issue_url: str) -> dict[str, Any]:
        """The source's verifier issue for ``issue_url`` (any status)."""
        for page in self.pages(f"/api/verifier-issues/?source={quote(source_id, safe='')}"):
            for issue in page.get("results", []) if isinstance(page, dict) else []:
                if isinstance(issue, dict) and issue.get("issue_url") == issue_url:
                    return issue
        raise ReviewProductionError(
            f"The Atlas records no verifier issue {issue_url} for {source_id}"
        )

    def review_pool(self, source_id: str) -> list[dict[str, Any]]:
        """Every published collection of the source (``GET /api/reviews/?source=``)."""
        found: list[dict[str, Any]] = []
        for page in self.pages(f"/api/reviews/?source={quote(source_id, safe='')}"):
            if not isinstance(page, dict) or not isinstance(page.get("results"), list):
                raise ReviewProductionError(f"The Atlas answered no review pool for {source_id}")
            found += [entry for entry in page["results"] if isinstance(entry, dict)]
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
        if not isinstance(listed, list):
            raise ReviewProductionError(f"The Atlas lists no artifacts of {review_id}")
        for artifact, relative in _artifact_names(listed):
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


def _artifact_names(listed: list[Any]) -> list[tuple[dict[str, Any], str]]:
    """Each listed artifact with its run-relative name, every name checked before anything is
    fetched: a safe relative name (``format.run_files``) this file system can hold, none listed
    twice, none both a file and a folder of another."""
    named: list[tuple[dict[str, Any], str]] = []
    for artifact in listed:
        path = artifact.get("path") if isinstance(artifact, dict) else None
        relative = normalized_relative(path) if isinstance(path, str) else None
        if relative is None or not isinstance(artifact, dict):
            raise ReviewProductionError(f"The Atlas lists an unsafe artifact path: {artifact!r}")
        parts = relative.split("/")
        if len(relative.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES or any(
            len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for part in parts
        ):
            raise ReviewProductionError(
                f"The Atlas lists an artifact path too long for a file system: {relative[:80]}…"
            )
        named.append((artifact, relative))
    files = [relative for _artifact, relative in named]
    folders = {"/".join(r.split("/")[:end]) for r in files for end in range(1, r.count("/") + 1)}
    seen: set[str] = set()
    for relative in files:
        if relative in seen or relative in folders:
            raise ReviewProductionError(
                f"The Atlas lists artifact {relative} twice, or as a file and a folder"
            )
        seen.add(relative)
    return named


def _origin(url: str) -> str:
    """``scheme://host:port`` of a URL, the port spelled out (an Atlas's own origin)."""
    parts = urlsplit(url)
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        port = None
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"
