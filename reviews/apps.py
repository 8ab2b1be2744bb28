from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "reviews"
    verbose_name = "Quality reviews"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from atlas.api.errors import register_domain_error
        from atlas.contributions import (
            register_curated_edit_guard,
            register_display_context,
            register_source_section,
        )
        from reviews.defect_invariant import register_sqlite_function
        from reviews.display_contributions import defects_and_grading
        from reviews.pages.source_sections import SECTIONS
        from reviews.services.defects import DefectRuleError, refuse_good_while_open

        register_display_context(name="reviews.defects_and_grading", provider=defects_and_grading)
        register_domain_error(error=DefectRuleError, http_status=400)
        register_curated_edit_guard(name="reviews.open_defect_cap", guard=refuse_good_while_open)
        for section in SECTIONS:
            register_source_section(section=section)
        connection_created.connect(register_sqlite_function, dispatch_uid="atlas_defect_writer")
