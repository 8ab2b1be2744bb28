from rest_framework import serializers

from reviews.models import VerifierIssue


class VerifierIssueSerializer(serializers.ModelSerializer):
    source_id = serializers.CharField(read_only=True)
    review_id = serializers.CharField(read_only=True)
    resolution_review_id = serializers.CharField(read_only=True, allow_null=True)

    class Meta:
        model = VerifierIssue
        fields = [
            "id", "source_id", "issue_url", "review_id", "status", "resolution_review_id",
            "created_at", "updated_at",
        ]  # fmt: skip


def issue_as_json(issue: VerifierIssue) -> dict:
    """The row as the command prints it and the API answers it."""
    return dict(VerifierIssueSerializer(issue).data)


class ConfirmRequestSerializer(serializers.Serializer):
    source_id = serializers.CharField()
    issue_url = serializers.CharField()
    review_id = serializers.CharField()


class ResolveRequestSerializer(serializers.Serializer):
    resolution_review_id = serializers.CharField()
