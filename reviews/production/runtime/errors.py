"""Errors of review production: the message is the one-line reason the command prints."""

from __future__ import annotations


class ReviewProductionError(Exception):
    """A run cannot go on; the message is the one-line reason the command prints."""


class UsageError(ReviewProductionError):
    """A command-line argument is invalid (e.g. ``n must be positive``)."""


class CurationRefused(ReviewProductionError):
    """A curator's tool cannot go on; nothing that could confirm or resolve a defect was written."""


class CurationInterrupted(CurationRefused):
    """A curator's tool was interrupted (Ctrl-C); its output was removed."""

    exit_status = 130  # the shell's status for a process ended by SIGINT


# A native worker runs from the configured MarinSkyRL checkout; without one nothing can run.
CHECKOUT_REQUIRED = "runtime.marinskyrl_checkout is required to run native workers"


def require_positive(**arguments: int) -> None:
    """Refuse the first command-line count that is not positive (``n``, ``jobs``, …), named as
    the option is (``max_evidence_bytes`` as ``max-evidence-bytes``)."""
    for name, value in arguments.items():
        if value <= 0:
            raise UsageError(f"{name.replace('_', '-')} must be positive")
