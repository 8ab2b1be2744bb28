from django.contrib import admin
from django.urls import include, path, register_converter

from atlas.api.index import ApiIndexView, Endpoint
from atlas.web import converters, views
from atlas.web.feeds import CatalogChangesFeed

register_converter(converters.SourceIdConverter, "source_id")

# The admin names the product (Django's default says "Django administration").
admin.site.site_header = admin.site.site_title = "RL Data Atlas administration"

API_ENDPOINTS = (
    Endpoint("api-sources", ("GET",), "Active sources with the catalog's filters, search, "
             "ordering and paging; ?format=csv for the CSV twin."),
    Endpoint("api-source", ("GET",), "One source by ID (retired ones too).", ("source_id",)),
    Endpoint("api-changes", ("GET",), "Catalog history: what each sync changed, per source."),
    Endpoint("api-refreshes", ("GET",), "Sync status per origin and the latest refresh run."),
    Endpoint("api-refresh", ("POST",), "Synchronise the catalog with its artifact (curators)."),
    Endpoint("api-reviews", ("GET",), "A source's review pool: every published collection of "
             "it, newest judgment first.", query=("source",)),
    Endpoint("api-review", ("GET",), "One published review collection with its pool and "
             "verifier issues.", ("review_id",)),
    Endpoint("api-review-artifact", ("GET",), "One evidence file of a review.",
             ("review_id", "path")),
    Endpoint("review-difficulty", ("GET",), "A difficulty report of a review (?path=).",
             ("review_id",)),
    Endpoint("api-review-publications", ("POST",), "Upload a review run archive (token)."),
    Endpoint("api-review-publication", ("GET",), "State of an uploaded publication.",
             ("publication_id",)),
    Endpoint("verifier-issue-list", ("GET", "POST"), "Confirmed verifier defects; POST confirms "
             "one (reviews.manage_verifier_issues)."),
    Endpoint("verifier-issue-resolve", ("POST",), "Resolve a verifier defect with a validated "
             "fix.", ("pk",)),
    Endpoint("api-schema", ("GET",), "The OpenAPI schema."),
    Endpoint("api-docs", ("GET",), "Browsable API documentation."),
)  # fmt: skip

urlpatterns = [
    path("", views.catalog_page, name="catalog"),
    path("export.csv", views.export_csv, name="catalog-export"),
    path("facets.json", views.catalog_facets, name="catalog-facets"),
    path("croissant.json", views.catalog_croissant, name="catalog-croissant"),
    path(
        "sources/<source_id:source_id>/croissant.json",
        views.source_croissant,
        name="source-croissant",
    ),
    path("sources/<source_id:source_id>/", views.source_page, name="source-page"),
    path("changes/", views.changes_page, name="changes"),
    path("changes/feed.atom", CatalogChangesFeed(), name="changes-feed"),
    path("healthz", views.healthz, name="healthz"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/", ApiIndexView.as_view(endpoints=API_ENDPOINTS), name="api-index"),
    path("api/", include("atlas.api.urls")),
    path("api/", include("reviews.api.urls")),
    path("api/", include("difficulty.api_urls")),
    path("", include("reviews.pages.urls")),
    path("", include("difficulty.page_urls")),
]

handler404 = "atlas.web.errors.not_found"
handler500 = "atlas.web.errors.server_failed"
