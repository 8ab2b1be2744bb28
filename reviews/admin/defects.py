"""Admin for confirmed verifier defects: confirm through a form, resolve through an action page.
Both go through reviews.services.defects; the admin never edits an issue directly (no Save on an
issue's page), and the forms offer only what the rules accept: a source picked by autocomplete, a
confirming review among that source's ``verifier_defect`` collections, a URL input."""

import re
from dataclasses import dataclass

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from atlas.permissions import MANAGE_VERIFIER_ISSUES, is_staff_member, may
from atlas.rules.labels import QUALITY_LABELS, UNREVIEWED
from reviews.kinds import HasPoolRole
from reviews.labels import verdict_label
from reviews.models import Review, VerifierIssue
from reviews.rating import derive_rating
from reviews.services.defects import (
    RESOLUTION_PREFIX,
    DefectRuleError,
    after_resolution,
    confirm_verifier_issue,
    resolve_verifier_issue,
    validate_confirmation,
    validate_resolution,
)


def defect_collections(*, source_id: str | None = None) -> QuerySet[Review]:
    """Published collections holding a ``verifier_defect`` review (of one source, when given),
    read with their collection: each option is labelled by what it says."""
    reviews = (
        Review.objects.alias(defect=HasPoolRole("verifier_defect"))
        .filter(defect=True)
        .only("id", "source_id", "updated_at", "kind", "collection")
        .order_by("source_id", "-updated_at", "id")
    )
    return reviews.filter(source_id=source_id) if source_id else reviews


def _dated(review: Review) -> str:
    date = review.updated_at.date().isoformat() if review.updated_at else "undated"
    return f"{date} · {review.id[:12]}"


def issue_name(url: str) -> str:
    """``owner/repo#N`` of a GitHub issue URL (the URL itself when it is not one)."""
    match = re.match(r"^https://github\.com/([^/]+/[^/]+)/issues/(\d+)$", url)
    return f"{match.group(1)}#{match.group(2)}" if match else url


def reproduction_label(review: Review) -> str:
    """A confirming-review option: the issue its defect review names, what it claims and
    observed natively, so options that differ only in their hash read apart."""
    reviews = [r for r in (review.collection or {}).get("reviews") or [] if isinstance(r, dict)]
    defect = next(
        (r for r in reviews if (r.get("attributes") or {}).get("review_pool_role") == DEFECT),
        {},
    )
    attributes = defect.get("attributes") or {}
    issue = attributes.get("issue_url")
    named = issue_name(issue) if isinstance(issue, str) else "no issue named"
    runs = sum(1 for r in reviews if r.get("method") == "runtime_execution")
    claim = f"expected {attributes['expected']}" if attributes.get("expected") else "reproduction"
    return (
        f"{named} · {verdict_label(defect.get('verdict'))} · {claim}, {runs} native run(s) · "
        f"{_dated(review)}"
    )


def resolution_label(review: Review) -> str:
    """A resolution-review option: the rating it derives and the issues it records as fixed."""
    collection = review.collection or {}
    fixed = [
        issue_name(str(entry.get("issue_url")))
        for r in collection.get("reviews") or []
        if isinstance(r, dict)
        for entry in (r.get("attributes") or {}).get("resolved_verifier_issues") or []
        if isinstance(entry, dict) and entry.get("fix_validated") is True
    ]
    try:
        rating = QUALITY_LABELS.get(derive_rating(collection) or "", UNREVIEWED)
    except (KeyError, TypeError):
        rating = UNREVIEWED
    resolves = f"fix validated for {', '.join(fixed)}" if fixed else "records no validated fix"
    return f"Rating {rating} · {resolves} · {_dated(review)}"


class DefectCollectionField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Review) -> str:
        return reproduction_label(obj)


class ConfirmDefectForm(forms.ModelForm):
    issue_url = forms.URLField(
        label="GitHub issue URL",
        assume_scheme="https",
        widget=forms.URLInput(
            attrs={"placeholder": "https://github.com/<owner>/<repo>/issues/<n>"}
        ),
        help_text="The GitHub issue that describes the reproduced defect.",
    )
    confirming_review = DefectCollectionField(
        queryset=Review.objects.none(),
        label="Confirming review",
        help_text="A published collection of this source with a verifier_defect review and the "
        "native execution that reproduces it.",
    )

    class Meta:
        model = VerifierIssue
        fields = ["source", "issue_url"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        source_id = self.data.get("source") or self.initial.get("source")
        self.fields["confirming_review"].queryset = defect_collections(
            source_id=str(source_id) if source_id else None
        )
        self.fields["confirming_review"].widget.attrs["data-options-url"] = reverse(
            "admin:reviews_verifierissue_defect_reviews"
        )

    def _get_validation_exclusions(self):
        # The service refuses a repeated issue with its own message (already recorded, or a
        # regression to file under a new issue); keep the model's unique constraint from adding
        # a second, generic one.
        exclusions = super()._get_validation_exclusions()
        exclusions.add("issue_url")
        return exclusions

    def clean(self):
        cleaned = super().clean()
        source = cleaned.get("source")
        if source is None or not cleaned.get("issue_url"):
            return cleaned
        review = cleaned.get("confirming_review")
        if review is None:
            return cleaned
        try:
            validate_confirmation(
                source_id=source.pk, issue_url=cleaned["issue_url"], review_id=review.pk
            )
        except DefectRuleError as exc:
            raise ValidationError(str(exc)) from None
        return cleaned


@dataclass(frozen=True)
class ResolutionCandidate:
    """A published rating collection of the issue's source, with why it cannot resolve the
    issue (None when it can)."""

    review: Review
    refusal: str | None

    @property
    def label(self) -> str:
        return resolution_label(self.review)


CONFIRM_TITLE = "Confirm verifier defect"
DEFECT = "verifier_defect"
# How many collections the resolve page checks (newest first); each check reads one collection.
CANDIDATE_LIMIT = 20


def resolution_candidates(*, issue: VerifierIssue) -> list[ResolutionCandidate]:
    """The source's rating collections newer than the defect, each checked by the rule the
    resolution itself applies (``reviews.services.defects.validate_resolution``)."""
    reviews = (
        Review.objects.filter(
            source_id=issue.source_id, kind="rating", updated_at__gt=issue.created_at
        )
        .exclude(id=issue.review_id)
        .only("id", "source_id", "updated_at", "kind", "collection")
        .order_by("-updated_at", "id")[:CANDIDATE_LIMIT]
    )
    candidates = []
    for review in reviews:
        try:
            validate_resolution(issue=issue, resolution_review_id=review.id)
        except DefectRuleError as exc:
            reason = str(exc).removeprefix(RESOLUTION_PREFIX)
            candidates.append(ResolutionCandidate(review=review, refusal=reason))
        else:
            candidates.append(ResolutionCandidate(review=review, refusal=None))
    return candidates


class ResolveDefectForm(forms.Form):
    """Offers the source's collections that can resolve the issue (a choice, never a pasted
    id); the page lists the others with the rule each one fails."""

    # A text field with radio buttons: the page offers the eligible collections, and anything
    # else posted gets the rule's own message (validate_resolution), not a generic one.
    resolution_review_id = forms.CharField(
        label="Resolution review",
        max_length=64,
        widget=forms.RadioSelect,
        help_text="A fresh native review of this source on its current revisions whose "
        "resolved_verifier_issues entry validates the fix.",
    )

    def __init__(self, *args, issue: VerifierIssue, **kwargs):
        super().__init__(*args, **kwargs)
        self.issue = issue
        self.candidates = (
            resolution_candidates(issue=issue) if issue.status == VerifierIssue.Status.OPEN else []
        )
        self.fields["resolution_review_id"].widget.choices = [
            (candidate.review.id, candidate.label) for candidate in self.eligible
        ]

    @property
    def eligible(self) -> list[ResolutionCandidate]:
        return [candidate for candidate in self.candidates if candidate.refusal is None]

    @property
    def refused(self) -> list[ResolutionCandidate]:
        return [candidate for candidate in self.candidates if candidate.refusal is not None]

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("resolution_review_id"):
            try:
                validate_resolution(
                    issue=self.issue, resolution_review_id=cleaned["resolution_review_id"]
                )
            except DefectRuleError as exc:
                raise ValidationError(str(exc)) from None
        return cleaned


@admin.register(VerifierIssue)
class VerifierIssueAdmin(admin.ModelAdmin):
    list_display = ["source", "issue_url", "status", "created_at", "resolution_review"]
    list_filter = ["status"]
    search_fields = ["source__id", "issue_url"]
    readonly_fields = [
        "source", "issue_url", "review", "status", "resolution_review", "created_at",
        "updated_at", "created_by", "resolved_by", "resolve_link",
    ]  # fmt: skip
    autocomplete_fields = ["source"]
    list_select_related = ["source"]

    class Media:
        js = ["reviews/defect_form.js"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("source", "resolution_review")
            .defer("source__payload", "resolution_review__collection")
        )

    def _can_manage(self, request) -> bool:
        return may(request.user, MANAGE_VERIFIER_ISSUES)

    def has_add_permission(self, request):
        return self._can_manage(request)

    def has_view_permission(self, request, obj=None):
        return is_staff_member(request.user)

    def has_change_permission(self, request, obj=None):
        # An issue is never edited: confirmed through the add form, resolved through its action
        # page (so an issue's page has no Save buttons, open or resolved).
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def add_view(self, request, form_url="", extra_context=None):
        # The docs call this form by what it does ("Confirm verifier defect"), not Django's
        # "Add verifier issue".
        context = {"title": CONFIRM_TITLE, **(extra_context or {})}
        return super().add_view(request, form_url, extra_context=context)

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = ConfirmDefectForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["source", "issue_url", "confirming_review"]
        return self.readonly_fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    @admin.display(description="Resolution")
    def resolve_link(self, obj):
        if obj.status != VerifierIssue.Status.OPEN:
            return "Resolved"
        url = reverse("admin:reviews_verifierissue_resolve", args=[obj.pk])
        return format_html('<a class="button" href="{}">Resolve verifier defect</a>', url)

    def save_model(self, request, obj, form, change):
        if change:
            return
        review_id = form.cleaned_data["confirming_review"].pk
        issue = confirm_verifier_issue(
            source_id=form.cleaned_data["source"].pk,
            issue_url=form.cleaned_data["issue_url"],
            review_id=review_id,
            user=request.user,
        )
        obj.pk = issue.pk
        obj._state.adding = False
        # An open defect of the same issue got a further reproduction instead of a new row.
        obj.added_reproduction = issue.review_id != review_id

    def response_add(self, request, obj, post_url_continue=None):
        if not getattr(obj, "added_reproduction", False):
            return super().response_add(request, obj, post_url_continue)
        self.message_user(
            request,
            f"Reproduction added to the open defect {obj.issue_url}: validate_fix re-runs the "
            "failing inputs of every reproduction.",
            messages.SUCCESS,
        )
        return redirect("admin:reviews_verifierissue_change", obj.pk)

    def get_urls(self):
        return [
            path(
                "<int:issue_id>/resolve/",
                self.admin_site.admin_view(self.resolve_view),
                name="reviews_verifierissue_resolve",
            ),
            path(
                "defect-reviews/",
                self.admin_site.admin_view(self.defect_reviews_view),
                name="reviews_verifierissue_defect_reviews",
            ),
            *super().get_urls(),
        ]

    def defect_reviews_view(self, request):
        """The confirming-review choices of one source, for the add form's script."""
        if not self._can_manage(request):
            raise PermissionDenied
        source_id = request.GET.get("source") or ""
        options = [
            {"id": review.id, "label": reproduction_label(review)}
            for review in defect_collections(source_id=source_id or None)[:200]
        ]
        return JsonResponse({"source": source_id, "options": options})

    def resolve_view(self, request, issue_id: int):
        if not self._can_manage(request):
            raise PermissionDenied
        issue = get_object_or_404(VerifierIssue, pk=issue_id)
        form = ResolveDefectForm(request.POST or None, issue=issue)
        if request.method == "POST" and form.is_valid():
            review_id = form.cleaned_data["resolution_review_id"]
            try:
                resolve_verifier_issue(
                    issue_id=issue.pk, resolution_review_id=review_id, user=request.user
                )
            except DefectRuleError as exc:
                form.add_error(None, str(exc))
            else:
                self.log_change(request, issue, f"Resolved with review {review_id}")
                left = after_resolution(source_id=issue.source_id)
                self.message_user(
                    request,
                    f"Verifier defect resolved. {left}." if left else "Verifier defect resolved.",
                    messages.SUCCESS if not left else messages.WARNING,
                )
                return redirect("admin:reviews_verifierissue_change", issue.pk)
        context = {
            **self.admin_site.each_context(request),
            "title": "Resolve verifier defect",
            "issue": issue,
            "form": form,
            "opts": self.model._meta,
            "original": issue,
            "has_view_permission": True,
        }
        return TemplateResponse(request, "admin/reviews/verifierissue/resolve.html", context)
