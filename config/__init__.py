"""The project wiring: settings, the root URLs, the Celery app and the WSGI entry point.

It assembles the three apps (atlas < reviews < difficulty) and is imported by none of them."""

# Loaded with the settings, so shared tasks bind to the app in every Django process (and
# ``celery -A config`` finds it).
from config.celery import app as celery_app

__all__ = ["celery_app"]
