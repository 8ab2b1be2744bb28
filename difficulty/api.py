"""GET /api/reviews/<review_id>/difficulty/?path=…."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from difficulty.reports import REPORT_PATH
from difficulty.selectors import report_summary


class DifficultyReportView(APIView):
    """The summary of one stored difficulty report, classified for its source."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "path", OpenApiTypes.STR, description="Artifact path (default difficulty.json)"
            )
        ],
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, review_id: str) -> Response:
        path = request.query_params.get("path") or REPORT_PATH
        return Response(report_summary(review_id=review_id, path=path))
