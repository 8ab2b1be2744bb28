from django.apps import AppConfig


class AtlasConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "atlas"
    verbose_name = "RL Data Atlas catalog"

    def ready(self) -> None:
        # Loads the Celery app so shared tasks bind to it in every Django process.
        from atlas import celery, lookups  # noqa: F401  (``lookups`` registers ``__among``)
