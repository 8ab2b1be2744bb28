"""Work handed to the task broker (Redis): a broker that cannot be reached raises
``BrokerUnavailable`` with its reason, instead of Celery's connection error, and the caller decides
what its work becomes (a refresh answers 503; a publication job is failed with the reason, never
left queued). The web's middleware turns the exception into the 503 (``atlas.web.unavailable``)."""

from __future__ import annotations

import logging
from typing import Any

from kombu.exceptions import OperationalError as BrokerConnectionError

logger = logging.getLogger(__name__)

BROKER_DOWN = (
    "The task queue (broker) is unreachable, so the work was not started; try again shortly."
)


class BrokerUnavailable(Exception):
    """The broker refused or dropped the connection; ``str(exc)`` is the reason for people."""


def send_task(task: Any, **kwargs: Any) -> Any:
    """``task.apply_async(kwargs=kwargs)``, or ``BrokerUnavailable`` when no broker takes it."""
    try:
        # No publish retries: a request must not hang on a broker that is down.
        return task.apply_async(kwargs=kwargs, retry=False)
    except (BrokerConnectionError, ConnectionError, OSError) as exc:
        logger.warning("Broker unreachable for %s: %s", task.name, exc)
        raise BrokerUnavailable(BROKER_DOWN) from exc
