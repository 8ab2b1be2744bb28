from django.apps import AppConfig


class DifficultyConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "difficulty"
    verbose_name = "Difficulty measurements"

    def ready(self) -> None:
        from atlas.api.errors import register_domain_error
        from atlas.contributions import (
            CatalogCell,
            register_catalog_cell,
            register_display_context,
            register_field_guide_intro,
        )
        from difficulty import checks  # noqa: F401  (registers the registry check)
        from difficulty.bars import FILTER_HELP
        from difficulty.compact_chart import (
            render_compact_chart,
            render_detail_chart,
            render_legend,
        )
        from difficulty.display_contributions import difficulty_summaries
        from difficulty.publication import IMPORTER
        from difficulty.registry import field_guide_intro
        from difficulty.reports import NotAReportError
        from difficulty.review_sections import SECTION
        from difficulty.selectors import ReportNotFoundError
        from reviews.page_sections import register_page_section
        from reviews.services.jobs import register_importer

        register_display_context(name="difficulty.summaries", provider=difficulty_summaries)
        register_field_guide_intro(provider=field_guide_intro)
        register_catalog_cell(
            name="difficulty",
            cell=CatalogCell(
                render=render_compact_chart,
                stylesheet="difficulty/difficulty.css",
                legend=render_legend,
                render_detail=render_detail_chart,
                filter_help=FILTER_HELP,
            ),
        )
        register_page_section(SECTION)
        register_importer(type="difficulty", importer=IMPORTER)
        register_domain_error(error=ReportNotFoundError, http_status=404)
        register_domain_error(error=NotAReportError, http_status=400)
