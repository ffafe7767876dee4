"""Roles are Django groups. Staff users count as admins."""

from django.contrib.auth.models import Group

from core import sql
from core.auth import forget_cached_user

ADMIN = "admin"
REVIEWER = "reviewer"
ANNOTATOR = "annotator"
EVALUATOR = "evaluator"
ROLES = (ADMIN, REVIEWER, ANNOTATOR, EVALUATOR)


def ensure_role_groups() -> None:
    for name in ROLES:
        Group.objects.get_or_create(name=name)


def grant_role(user, role: str) -> None:
    # Straight into the link table: user.groups.add would first read the links there are (it does
    # when anything listens to m2m_changed, as core.auth does), and each crowd arrival calls this.
    # The group is found by name in the same statement; only where that linked nothing (no such group
    # yet, or the link was there) is the group made if missing and the link inserted as before.
    if not sql.link_to_group_by_name(user, role):
        group, _ = Group.objects.get_or_create(name=role)
        links = type(user).groups.through
        links.objects.bulk_create([links(user_id=user.pk, group_id=group.pk)], ignore_conflicts=True)
    forget_cached_user(type(user), user)
    if hasattr(user, "cached_role_names"):  # this request's copy of a cached user holds the role now too
        user.cached_role_names |= {role}


def has_role(user, role: str) -> bool:
    if not user.is_authenticated:
        return False
    if user.is_staff and role in (ADMIN, REVIEWER):
        return True
    # Admins can do everything reviewers can.
    names = [ADMIN, REVIEWER] if role == REVIEWER else [role]
    held = getattr(user, "cached_role_names", None)  # a signed-in user from core.auth
    if held is not None:
        return any(name in held for name in names)
    return user.groups.filter(name__in=names).exists()
