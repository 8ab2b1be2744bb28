"""Verifier-issue API (defects.md §8.4): public reads, permissioned confirm and resolve."""

import django_filters
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.response import Response

from reviews.defects import DefectRuleError, confirm_verifier_issue, resolve_verifier_issue
from reviews.models import VerifierIssue
from reviews.serializers_defects import (
    ConfirmRequestSerializer,
    ResolveRequestSerializer,
    VerifierIssueSerializer,
    issue_as_json,
)


class CanManageVerifierIssues(BasePermission):
    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return True
        user = request.user
        return bool(
            user and user.is_authenticated and user.has_perm("reviews.manage_verifier_issues")
        )


class VerifierIssueFilter(django_filters.FilterSet):
    source = django_filters.CharFilter(field_name="source_id")
    status = django_filters.ChoiceFilter(choices=VerifierIssue.Status.choices)

    class Meta:
        model = VerifierIssue
        fields = ["source", "status"]


class IssuePagination(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 500


class VerifierIssueViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    queryset = VerifierIssue.objects.order_by("created_at", "id")
    serializer_class = VerifierIssueSerializer
    filterset_class = VerifierIssueFilter
    filter_backends = [DjangoFilterBackend]
    pagination_class = IssuePagination
    permission_classes = [CanManageVerifierIssues]

    @extend_schema(request=ConfirmRequestSerializer, responses={201: VerifierIssueSerializer})
    def create(self, request):
        body = ConfirmRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            issue = confirm_verifier_issue(**body.validated_data, user=request.user)
        except DefectRuleError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(issue_as_json(issue), status=status.HTTP_201_CREATED)

    @extend_schema(request=ResolveRequestSerializer, responses={200: VerifierIssueSerializer})
    @action(detail=True, methods=["post"])
    def resolve(self, request, pk=None):
        body = ResolveRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        issue_id = self.get_object().pk  # 404 for unknown or malformed ids
        try:
            issue = resolve_verifier_issue(
                issue_id=issue_id,
                resolution_review_id=body.validated_data["resolution_review_id"],
                user=request.user,
            )
        except DefectRuleError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(issue_as_json(issue))
