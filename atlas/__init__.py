"""The catalog core. Nothing is loaded here, so pure modules such as ``atlas.rules.timestamps``
import without Celery or Django; the project wiring (settings, root URLs, Celery, WSGI) is
``config``."""
