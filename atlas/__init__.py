"""The catalog core and the project wiring. The Celery app is loaded by ``AtlasConfig.ready()``
(and by ``celery -A atlas``), not here, so pure modules such as ``atlas.timestamps`` import without
Celery or Django."""
