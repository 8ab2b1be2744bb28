from django.contrib import admin
from django.urls import include, path, register_converter

from atlas import converters, views

register_converter(converters.SourceIdConverter, "source_id")

urlpatterns = [
    path("", views.catalog_page, name="catalog"),
    path("export.csv", views.export_csv, name="catalog-export"),
    path("healthz", views.healthz, name="healthz"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("atlas.api_urls")),
    path("api/", include("reviews.api_urls")),
    path("api/", include("difficulty.api_urls")),
    path("", include("reviews.urls")),
]

handler404 = "atlas.errors.not_found"
handler500 = "atlas.errors.server_failed"
