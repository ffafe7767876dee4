"""Roles are Django groups. Staff users count as admins."""

from django.contrib.auth.models import Group

ADMIN = "admin"
REVIEWER = "reviewer"
ANNOTATOR = "annotator"
EVALUATOR = "evaluator"
ROLES = (ADMIN, REVIEWER, ANNOTATOR, EVALUATOR)


def ensure_role_groups() -> None:
    for name in ROLES:
        Group.objects.get_or_create(name=name)


def grant_role(user, role: str) -> None:
    group, _ = Group.objects.get_or_create(name=role)
    user.groups.add(group)


def has_role(user, role: str) -> bool:
    if not user.is_authenticated:
        return False
    if user.is_staff and role in (ADMIN, REVIEWER):
        return True
    # Admins can do everything reviewers can.
    names = [ADMIN, REVIEWER] if role == REVIEWER else [role]
    return user.groups.filter(name__in=names).exists()
