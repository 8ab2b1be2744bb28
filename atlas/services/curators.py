"""Curator accounts: a staff user holding every curator permission (refresh the catalog, publish
reviews, manage verifier defects) and the view permissions the admin lists need."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.auth.password_validation import validate_password
from django.db import transaction
from django.db.models import Q

from atlas.permissions import CURATOR_PERMISSIONS

VIEWED_APPS = ("atlas", "reviews")


def curator_permissions() -> list[Permission]:
    wanted = Q()
    for name in CURATOR_PERMISSIONS:
        app_label, codename = name.split(".")
        wanted |= Q(content_type__app_label=app_label, codename=codename)
    viewed = Q(content_type__app_label__in=VIEWED_APPS, codename__startswith="view_")
    return list(Permission.objects.filter(wanted | viewed))


def create_curator(*, username: str, password: str, email: str = ""):
    """Create (or update) the curator ``username``; the password must pass the validators."""
    user_model = get_user_model()
    with transaction.atomic():
        user = user_model.objects.filter(username=username).first() or user_model(username=username)
        validate_password(password, user)
        user.email = email or user.email
        user.is_staff = True
        user.is_active = True
        user.set_password(password)
        user.save()
        user.user_permissions.add(*curator_permissions())
    return user
