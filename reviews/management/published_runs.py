"""What the defect commands share: who acts (``--curator``), and the review id a published run
directory names: ``publish_review`` writes
``atlas-publication.json`` into the run it published, so a later step (confirming or resolving a
defect) can name the run folder instead of copying a 64-character id."""

from __future__ import annotations

import getpass
import json
from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from reviews.production.format.evidence_set import PUBLICATION_RESULT_FILE


def add_review_choice(parser: CommandParser, *, id_option: str, dir_option: str, what: str) -> None:
    """Two ways to name the same review, exactly one required."""
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument(id_option, help=f"the review id of {what}")
    group.add_argument(
        dir_option,
        type=Path,
        metavar="DIR",
        help=f"instead of the id: the run directory of {what}, published by publish_review "
        f"(its review id is read from DIR/{PUBLICATION_RESULT_FILE})",
    )


def add_curator_option(parser: CommandParser, *, action: str) -> None:
    parser.add_argument(
        "--curator",
        help=f"who {action}, recorded in the source's history (default: the login name)",
    )


def curator_name(named: str | None) -> str:
    """Who acted at a command line: ``--curator``, else the operating-system user."""
    return (named or "").strip() or getpass.getuser()


def published_review_id(*, run_dir: Path, atlas_id: str) -> str:
    """The review id ``publish_review`` recorded in ``run_dir`` for ``atlas_id``."""
    path = Path(run_dir) / PUBLICATION_RESULT_FILE
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CommandError(
            f"{run_dir} has no {PUBLICATION_RESULT_FILE}: publish it first with publish_review"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CommandError(f"{path} is not a publication result: {exc}") from None
    review_id = result.get("review_id") if isinstance(result, dict) else None
    if not isinstance(review_id, str) or not review_id:
        raise CommandError(f"{path} names no review_id")
    if result.get("atlas_id") != atlas_id:
        raise CommandError(f"{run_dir} was published for {result.get('atlas_id')}, not {atlas_id}")
    return review_id
