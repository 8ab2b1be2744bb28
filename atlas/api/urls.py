from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from atlas.api import row_fields as api

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("sources/", api.SourceListView.as_view(), name="api-sources"),
    path("sources/<source_id:source_id>/", api.SourceDetailView.as_view(), name="api-source"),
    path("refreshes/", api.RefreshListView.as_view(), name="api-refreshes"),
    path("refresh/", api.RefreshView.as_view(), name="api-refresh"),
    path("changes/", api.ChangeListView.as_view(), name="api-changes"),
]
