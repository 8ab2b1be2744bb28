"""Who may do what: the one home of the curator checks (pages, API and admin ask here).

A curator is a signed-in staff user with the permission of the action: refreshing the catalog
(``atlas.refresh_catalog``), publishing reviews and difficulty reports (``reviews.publish_review``)
or confirming and resolving verifier defects (``reviews.manage_verifier_issues``).
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission

REFRESH_CATALOG = "atlas.refresh_catalog"
PUBLISH_REVIEWS = "reviews.publish_review"
MANAGE_VERIFIER_ISSUES = "reviews.manage_verifier_issues"
CURATOR_PERMISSIONS = (REFRESH_CATALOG, PUBLISH_REVIEWS, MANAGE_VERIFIER_ISSUES)
# The refusal of a refresh by anyone else (the API's 403 and the page's no-script form).
REFRESH_REFUSED = "Only curators may refresh the catalog."


def is_curator(user: Any) -> bool:
    """May refresh the catalog (and sees the curator controls of the catalog page)."""
    return bool(user and user.is_authenticated and user.is_staff and user.has_perm(REFRESH_CATALOG))


def is_any_curator(user: Any) -> bool:
    """A signed-in staff user holding any curator permission (the admin lets them read sources:
    confirming a defect picks its source by autocomplete)."""
    return bool(
        user
        and user.is_authenticated
        and user.is_staff
        and any(user.has_perm(permission) for permission in CURATOR_PERMISSIONS)
    )


def is_staff_member(user: Any) -> bool:
    """A signed-in staff user: may open the admin and read its curator pages (the work queue,
    the verifier issues); what they may change there asks ``may``."""
    return bool(user and user.is_authenticated and user.is_staff)


def may(user: Any, permission: str) -> bool:
    """A signed-in user (session or API token) holding ``permission``."""
    return bool(user and user.is_authenticated and user.has_perm(permission))


class IsCurator(BasePermission):
    message = REFRESH_REFUSED

    def has_permission(self, request: Any, view: Any) -> bool:
        return is_curator(request.user)


def permission_for_writes(permission: str, message: str) -> type[BasePermission]:
    """A DRF permission: anyone may read, only holders of ``permission`` may write."""

    class WritesNeedPermission(BasePermission):
        message: str  # assigned below; DRF reports it when the permission refuses
        public_reads = True  # the OpenAPI schema marks its reads as open to anyone

        def has_permission(self, request: Any, view: Any) -> bool:
            return request.method in SAFE_METHODS or may(request.user, permission)

    WritesNeedPermission.message = message
    WritesNeedPermission.__name__ = f"WritesNeed_{permission.replace('.', '_')}"
    return WritesNeedPermission
