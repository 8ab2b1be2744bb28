from rest_framework import serializers
from rest_framework.generics import ListAPIView

from atlas.models import Refresh


class RefreshSerializer(serializers.ModelSerializer):
    class Meta:
        model = Refresh
        fields = ["origin", "revision", "revised_at", "checked_at", "synced_at", "error", "row_count"]


class RefreshListView(ListAPIView):
    queryset = Refresh.objects.order_by("origin")
    serializer_class = RefreshSerializer
    pagination_class = None
