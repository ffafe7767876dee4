"""DRF permissions by role (see core.roles)."""

from rest_framework.permissions import BasePermission

from core import roles


class RolePermission(BasePermission):
    role = ""
    message = "This needs a different role."

    def has_permission(self, request, view):
        return roles.has_role(request.user, self.role) or bool(request.user and request.user.is_staff)


class IsAdmin(RolePermission):
    role = roles.ADMIN
    message = "Only admins can do this."


class IsReviewer(RolePermission):
    role = roles.REVIEWER
    message = "Only reviewers and admins can do this."
