"""Page-level role checks."""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.shortcuts import render

from core import roles


def role_refusal(request, role):
    """The answer to a visitor without `role`: the login page when signed out, a 403 otherwise; None
    when the visitor holds it."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not roles.has_role(request.user, role):
        return render(request, "frontend/error.html", {"message": f"This page is for the {role} role."}, status=403)
    return None


def role_required(role):
    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            refused = role_refusal(request, role)
            return refused if refused is not None else view(request, *args, **kwargs)

        return wrapped

    return decorator
