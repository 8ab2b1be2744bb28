from django.apps import AppConfig


class DifficultyConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "difficulty"
    verbose_name = "Difficulty measurements"

    def ready(self) -> None:
        from difficulty import checks  # noqa: F401  (registers the registry check)
