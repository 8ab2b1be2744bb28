from django.apps import AppConfig


class AtlasConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "atlas"
    verbose_name = "RL Data Atlas catalog"

    def ready(self) -> None:
        # ``lookups`` registers ``__among``. The Celery app is loaded with the settings, by the
        # ``config`` package, so shared tasks bind to it in every Django process.
        from atlas.db import lookups  # noqa: F401
