"""Admin for published collections, their artifacts, grading bindings and publication jobs.

Everything published is read-only here. Curators publish a run archive and bind a grading review
through forms that call the same services as the API and commands.
"""

from __future__ import annotations

from typing import cast

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from atlas.admin import ReadOnlyAdmin
from atlas.permissions import PUBLISH_REVIEWS, is_staff_member, may
from reviews.links import public_url_note, review_page_url
from reviews.models import GradingBinding, Review, ReviewArtifact, ReviewPublication
from reviews.pages.work_queue import work_queue
from reviews.services.archives import (
    ArchiveRejected,
    archive_format,
    max_publication_bytes,
    too_large,
)
from reviews.services.jobs import enqueue_publication
from reviews.services.publication import bind_grading_review
from reviews.services.validation import PublicationRejected

QUEUE_PAGE_LIMIT = 50

PUBLISH_PERMISSION = PUBLISH_REVIEWS
FORM_PAGE = "admin/reviews/form_page.html"


class PublishArchiveForm(forms.Form):
    atlas_id = forms.CharField(label="Atlas source ID")
    archive = forms.FileField(help_text="A .tar.gz or .zip of the review run directory.")
    expected_review_id = forms.CharField(
        required=False, help_text="The current review you reviewed against (optional)."
    )
    type = forms.ChoiceField(choices=ReviewPublication.Type.choices, initial="review")

    def clean_archive(self):
        archive = self.cleaned_data["archive"]
        try:
            archive_format(archive.name)
        except ArchiveRejected as exc:
            raise forms.ValidationError(str(exc)) from exc
        if archive.size > max_publication_bytes():
            raise forms.ValidationError(too_large())
        return archive


class BindGradingForm(forms.Form):
    evidence_path = forms.ChoiceField(label="Proof artifact")

    def __init__(self, *args, review: Review, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        paths = review.artifacts.order_by("path").values_list("path", flat=True)
        cast(forms.ChoiceField, self.fields["evidence_path"]).choices = [
            (p, p) for p in paths if p.startswith("publication/")
        ]


@admin.register(Review)
class ReviewAdmin(ReadOnlyAdmin):
    list_display = ["id", "source", "kind", "updated_at", "published_at"]
    list_filter = ["kind"]
    search_fields = ["id", "source__id"]
    date_hierarchy = "published_at"
    readonly_fields = [
        "id",
        "source",
        "kind",
        "updated_at",
        "published_at",
        "published_by",
        "curator_actions",
    ]
    exclude = ["collection"]

    def get_queryset(self, request):
        # Collections can be large and the admin never shows them; the review page does.
        return super().get_queryset(request).defer("collection")

    @admin.display(description="Curator actions")
    def curator_actions(self, review: Review) -> str:
        return format_html(
            '<a href="{}">Bind grading review</a> · <a href="{}">Open review page</a>',
            reverse("admin:reviews_review_bind_grading", args=[review.pk]),
            review_page_url(review.pk),
        )

    def get_urls(self):
        return [
            path(
                "publish/",
                self.admin_site.admin_view(self.publish_view),
                name="reviews_review_publish",
            ),
            path(
                "queue/",
                self.admin_site.admin_view(self.queue_view),
                name="reviews_review_queue",
            ),
            path(
                "<str:review_id>/bind-grading/",
                self.admin_site.admin_view(self.bind_grading_view),
                name="reviews_review_bind_grading",
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "title": "Reviews"}
        if may(request.user, PUBLISH_PERMISSION):
            messages.info(
                request,
                format_html(
                    'Publish a review run: <a href="{}">Publish run archive</a>',
                    reverse("admin:reviews_review_publish"),
                ),
            )
        return super().changelist_view(request, extra_context)

    def queue_view(self, request):
        """The curators' work queue (``python manage.py review_queue`` prints the same)."""
        if not is_staff_member(request.user):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "title": "Curator work queue",
            "sections": work_queue(limit=QUEUE_PAGE_LIMIT),
            "limit": QUEUE_PAGE_LIMIT,
            # The commands' --atlas URLs are ATLAS_PUBLIC_URL, not this page's address.
            "public_url_note": public_url_note(),
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/reviews/queue.html", context)

    def publish_view(self, request):
        if not may(request.user, PUBLISH_PERMISSION):
            raise PermissionDenied
        form = PublishArchiveForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            archive = form.cleaned_data["archive"]
            publication = enqueue_publication(
                atlas_id=form.cleaned_data["atlas_id"],
                type=form.cleaned_data["type"],
                archive_name=archive.name,
                archive=archive.read(),
                expected_review_id=form.cleaned_data["expected_review_id"] or None,
                user=request.user,
            )
            _report_publication(request, publication)
            return redirect("admin:reviews_reviewpublication_change", publication.pk)
        return _form_page(request, form, title="Publish run archive", submit="Publish")

    def bind_grading_view(self, request, review_id: str):
        if not may(request.user, PUBLISH_PERMISSION):
            raise PermissionDenied
        review = get_object_or_404(Review, pk=review_id)
        form = BindGradingForm(request.POST or None, review=review)
        if request.method == "POST" and form.is_valid():
            try:
                bind_grading_review(
                    review=review,
                    evidence_path=form.cleaned_data["evidence_path"],
                    user=request.user,
                )
            except PublicationRejected as exc:
                form.add_error("evidence_path", str(exc))
            else:
                messages.success(request, f"Bound {review.source_id} to review {review.pk[:12]}.")
                return redirect("admin:reviews_review_change", review.pk)
        intro = f"Source {review.source_id} · review {review.pk}"
        return _form_page(request, form, title="Bind grading review", submit="Bind", intro=intro)


def _form_page(request, form, *, title: str, submit: str, intro: str = "") -> TemplateResponse:
    context = {
        **admin.site.each_context(request),
        "title": title,
        "form": form,
        "submit": submit,
        "intro": intro,
        "opts": Review._meta,
    }
    return TemplateResponse(request, FORM_PAGE, context)


def _report_publication(request, publication: ReviewPublication) -> None:
    if publication.status == ReviewPublication.Status.PUBLISHED:
        messages.success(request, f"Published {publication.atlas_id}: {publication.result}")
    elif publication.status == ReviewPublication.Status.FAILED and publication.error is not None:
        # A failed job always has an error (review_publications_failed_has_error).
        messages.error(request, publication.error)
    else:
        messages.info(request, f"Publication {publication.pk} is {publication.status}.")


@admin.register(ReviewArtifact)
class ReviewArtifactAdmin(ReadOnlyAdmin):
    list_display = ["path", "review", "size", "sha256", "created_at"]
    search_fields = ["path", "review__id", "review__source__id"]
    list_select_related = ["review"]
    readonly_fields = ["review", "path", "sha256", "size", "created_at", "content"]

    def get_queryset(self, request):
        # Lists show paths and sizes; contents (up to 16 MiB each) load only on a change page.
        return super().get_queryset(request).defer("content", "review__collection")


@admin.register(GradingBinding)
class GradingBindingAdmin(ReadOnlyAdmin):
    list_display = [
        "source",
        "review",
        "source_revision",
        "grading_revision",
        "evidence_path",
        "created_at",
    ]
    search_fields = ["source__id", "review__id"]
    readonly_fields = [
        "source", "review", "source_revision", "captured_verifier_revision", "grading_revision",
        "evidence_path", "evidence_sha256", "created_at", "created_by",
    ]  # fmt: skip


@admin.register(ReviewPublication)
class ReviewPublicationAdmin(ReadOnlyAdmin):
    list_display = ["id", "atlas_id", "type", "status", "created_by", "created_at"]
    list_filter = ["status", "type"]
    search_fields = ["atlas_id", "id"]
    exclude = ["archive"]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("archive")

    readonly_fields = [
        "id", "atlas_id", "type", "status", "archive_name", "expected_review_id", "error",
        "result", "created_by", "created_at", "updated_at",
    ]  # fmt: skip
