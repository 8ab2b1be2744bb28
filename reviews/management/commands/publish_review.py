"""Python manage.py publish_review --run-dir DIR --atlas-id ID [--remote URL]."""

from __future__ import annotations

import io
import json
import os
import tarfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from reviews.links import public_url_note
from reviews.production.format.evidence_set import PUBLICATION_RESULT_FILE
from reviews.services.publication import PublicationConflict, publish_run_directory
from reviews.services.validation import PublicationRejected

POLL_SECONDS = 2.0
FINISHED = {"published", "failed"}


class Command(BaseCommand):
    help = "Validate a review run directory and publish it; writes atlas-publication.json."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--run-dir", required=True, type=Path)
        parser.add_argument("--atlas-id", required=True)
        parser.add_argument("--expected-review-id", default=None)
        parser.add_argument(
            "--remote",
            default=None,
            help="Upload to another Atlas (token in ATLAS_API_TOKEN) instead of publishing here.",
        )
        parser.add_argument("--timeout", type=float, default=600.0, help="Remote wait, seconds.")

    def handle(self, *args, **options) -> None:
        run_dir: Path = options["run_dir"]
        if not run_dir.is_dir():
            raise CommandError(f"Run directory not found: {run_dir}")
        if options["remote"]:
            result = _publish_remotely(
                run_dir=run_dir,
                atlas_id=options["atlas_id"],
                expected_review_id=options["expected_review_id"],
                base_url=options["remote"],
                timeout=options["timeout"],
            )
        else:
            try:
                result = publish_run_directory(
                    run_dir=run_dir,
                    atlas_id=options["atlas_id"],
                    expected_review_id=options["expected_review_id"],
                )
            except (PublicationRejected, PublicationConflict) as exc:
                raise CommandError(str(exc)) from exc
        text = json.dumps(result, indent=2) + "\n"
        (run_dir / PUBLICATION_RESULT_FILE).write_text(text, encoding="utf-8")
        self.stdout.write(text, ending="")
        note = None if options["remote"] else public_url_note()
        if note:
            self.stderr.write(note)


def _publish_remotely(
    *, run_dir: Path, atlas_id: str, expected_review_id: str | None, base_url: str, timeout: float
) -> dict[str, Any]:
    token = os.environ.get("ATLAS_API_TOKEN")
    if not token:
        raise CommandError("ATLAS_API_TOKEN is not set")
    fields = {"atlas_id": atlas_id, "type": "review"}
    if expected_review_id:
        fields["expected_review_id"] = expected_review_id
    body, content_type = _multipart(fields, "run.tar.gz", _tar_gz(run_dir))
    url = base_url.rstrip("/") + "/api/reviews/publications/"
    accepted = _request(url, token, data=body, content_type=content_type)
    deadline = time.monotonic() + timeout
    state = _request(accepted["url"], token)
    while state.get("status") not in FINISHED:
        if time.monotonic() > deadline:
            raise CommandError(
                f"Remote import did not finish in {timeout:.0f} s: {accepted['url']}"
            )
        time.sleep(POLL_SECONDS)
        state = _request(accepted["url"], token)
    if state["status"] != "published":
        raise CommandError(state.get("error") or "Remote publication failed")
    return state["result"]


def _tar_gz(run_dir: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        for path in sorted(run_dir.rglob("*")):
            relative = path.relative_to(run_dir).as_posix()
            if path.is_file() and not path.is_symlink() and relative != PUBLICATION_RESULT_FILE:
                bundle.add(path, arcname=relative, recursive=False)
    return buffer.getvalue()


def _multipart(fields: dict[str, str], filename: str, payload: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="archive"; filename="{filename}"\r\n'
        "Content-Type: application/gzip\r\n\r\n".encode()
        + payload
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _request(
    url: str, token: str, *, data: bytes | None = None, content_type: str | None = None
) -> dict[str, Any]:
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    request.add_header("Authorization", f"Token {token}")
    request.add_header("Accept", "application/json")
    if content_type:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:500]
        raise CommandError(f"Remote Atlas answered HTTP {exc.code}: {detail}") from exc
    except urllib.error.URLError as exc:
        raise CommandError(f"Remote Atlas unreachable: {exc.reason}") from exc
