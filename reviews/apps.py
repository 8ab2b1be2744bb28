from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "reviews"
    verbose_name = "Quality reviews"

    def ready(self) -> None:
        from reviews import defects_admin  # noqa: F401  (registers the verifier-issue admin)
