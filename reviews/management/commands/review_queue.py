"""python manage.py review_queue [--json] [--need NEED] [--limit N]: what each source needs next."""

from __future__ import annotations

import argparse
import json

from django.conf import settings
from django.core.management.base import BaseCommand

from reviews.links import public_url_note
from reviews.pages.work_queue import NEEDS, InvalidLimit, checked_limit, work_queue


def limit_argument(text: str) -> int:
    """--limit as argparse reads it: a refusal is a usage error naming the allowed range."""
    try:
        return checked_limit(text)
    except InvalidLimit as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class Command(BaseCommand):
    help = (
        "List the curators' work queue: sources with an open defect, a hidden rating, imported "
        "audits without a synthesis, no review, or Good without a current difficulty — each with "
        "the command of its next step."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--json", action="store_true", help="print the queue as JSON")
        parser.add_argument(
            "--need",
            action="append",
            choices=[need.key for need in NEEDS],
            help="only these needs (repeatable)",
        )
        parser.add_argument(
            "--limit",
            type=limit_argument,
            default=None,
            help="at most N sources per need, 1 to 1,000,000 (default all)",
        )

    def handle(self, *args, **options) -> None:
        sections = work_queue(limit=options["limit"], needs=options["need"])
        note = public_url_note()
        if options["json"]:
            document = {
                "atlas_public_url": settings.ATLAS_PUBLIC_URL,
                "atlas_public_url_note": note,
                "needs": [
                    {
                        "need": section.need.key,
                        "label": section.need.label,
                        "explanation": section.need.explanation,
                        "total": section.total,
                        "sources": [entry.as_json() for entry in section.entries],
                    }
                    for section in sections
                ],
            }
            self.stdout.write(json.dumps(document, indent=2, ensure_ascii=False))
            return
        if note:
            self.stdout.write(f"Note: {note}.\n")
        for section in sections:
            self.stdout.write(f"== {section.need.label} ({section.total})")
            self.stdout.write(f"   {section.need.explanation}")
            for entry in section.entries:
                self.stdout.write(f"- {entry.source_id} · {entry.display_name}")
                if entry.detail:
                    self.stdout.write(f"    {entry.detail}")
                for command in entry.commands:
                    self.stdout.write(f"    $ {command}")
            if section.total > len(section.entries):
                self.stdout.write(f"  … and {section.total - len(section.entries)} more")
            self.stdout.write("")
