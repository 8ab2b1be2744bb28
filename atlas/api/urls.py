from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from atlas.api import changes, refresh, sources

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("sources/", sources.SourceListView.as_view(), name="api-sources"),
    path("sources/<source_id:source_id>/", sources.SourceDetailView.as_view(), name="api-source"),
    path("refreshes/", refresh.RefreshListView.as_view(), name="api-refreshes"),
    path("refresh/", refresh.RefreshView.as_view(), name="api-refresh"),
    path("changes/", changes.ChangeListView.as_view(), name="api-changes"),
]
