"""GET /api/reviews/<review_id>/difficulty/?path=… (difficulty.md §13)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from difficulty.reports import NOT_A_REPORT, REPORT_PATH, NotAReportError
from difficulty.selectors import ReportNotFoundError, report_summary

NOT_FOUND = "Difficulty report not found"


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
        try:
            summary = report_summary(review_id=review_id, path=path)
        except ReportNotFoundError:
            return Response({"detail": NOT_FOUND}, status=status.HTTP_404_NOT_FOUND)
        except NotAReportError:
            return Response({"detail": NOT_A_REPORT}, status=status.HTTP_400_BAD_REQUEST)
        return Response(summary)
