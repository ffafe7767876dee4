"""Throttling: failed logins (django-axes, counted in the database) and crowd-link entries (counted
in the cache, per address).

Logins: AXES_FAILURE_LIMIT failures for one account from one address lock that pair, and as many
from one address lock that address, for AXES_COOLOFF_TIME (never an account from everywhere, which
would let anyone lock out the admin): the login page (and the admin's) answers 429 with the lockout message, the right
password included, until the lock ends (settings.py). `lockout_response` is that answer.

Crowd entry: a link may be opened CROWD_ENTRY_PER_MINUTE times a minute from one address; more
answers 429. Every entry can make an account, so this bounds how fast anyone can make them. The
count lives in the cache: if Redis is down, entries are not limited (config/cache.py). Addresses in
THROTTLE_EXEMPT_ADDRESSES (loopback by default) are not counted: behind a reverse proxy that does not
pass the client's address, every participant would share that one address.

Addresses: REMOTE_ADDR, or with TRUSTED_PROXY_HOPS = n the n-th address from the right of
X-Forwarded-For (the one the outermost trusted proxy saw)."""

import math
import time
from functools import wraps

from axes.handlers.database import AxesDatabaseHandler
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render


def client_ip(request) -> str:
    hops = getattr(settings, "TRUSTED_PROXY_HOPS", 0)
    if hops > 0:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if len(forwarded) >= hops:
            return forwarded[-hops]
    return request.META.get("REMOTE_ADDR", "")


# --- Logins --------------------------------------------------------------------------------------


def lockout_message() -> str:
    minutes = math.ceil(settings.AXES_COOLOFF_TIME.total_seconds() / 60)
    return (f"Too many failed logins: this account, or logging in from this address, is locked for "
            f"{minutes} minutes after the last attempt. Try again later, or ask an admin to unlock it.")


def _wants_json(request) -> bool:
    return (request.path.startswith("/api/") or request.headers.get("x-requested-with") == "XMLHttpRequest"
            or "application/json" in request.headers.get("accept", ""))


def lockout_response(request, original_response=None, credentials=None) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: 429 with the login page and the lockout message (JSON for API clients)."""
    message = lockout_message()
    if _wants_json(request):
        response = JsonResponse({"detail": message}, status=429)
    else:
        form = AuthenticationForm(request, initial={"username": request.POST.get("username", "")})
        response = render(request, "registration/login.html",
                          {"form": form, "lockout": message, "next": request.POST.get("next", "")}, status=429)
    response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    return response


class LoginAttempts(AxesDatabaseHandler):
    """Axes' database handler, with nothing to do on a successful sign-in: the access log is off
    (AXES_DISABLE_ACCESS_LOG) and expired attempts are cleaned on the next failure, so a crowd
    arrival (signed in by its link, many a second) costs no query here."""

    def user_logged_in(self, sender, request, user, **kwargs):
        if not settings.AXES_DISABLE_ACCESS_LOG or settings.AXES_RESET_ON_SUCCESS:
            super().user_logged_in(sender, request, user, **kwargs)


# --- Crowd entry ---------------------------------------------------------------------------------


def crowd_entry_limited(view):
    """Answer 429 to an address that entered by crowd links more than CROWD_ENTRY_PER_MINUTE times in
    the current minute. Only entries count (the POST that signs in): a link's GET writes nothing."""

    @wraps(view)
    def limited(request, *args, **kwargs):
        limit = getattr(settings, "CROWD_ENTRY_PER_MINUTE", 30)
        address = client_ip(request)
        if (request.method == "POST" and limit and address
                and address not in getattr(settings, "THROTTLE_EXEMPT_ADDRESSES", ())):
            now = time.time()
            key = f"throttle:crowd-entry:{address}:{int(now // 60)}"
            cache.add(key, 0, 120)
            try:
                count = cache.incr(key)
            except ValueError:  # the cache is unavailable (or the key just expired): not counted
                count = 0
            if count > limit:
                response = render(request, "frontend/error.html", {
                    "message": "Too many crowd links were opened from your network in the last minute. "
                               "Please wait a minute, then open your link again.",
                }, status=429)
                response["Retry-After"] = str(60 - int(now % 60))
                return response
        return view(request, *args, **kwargs)

    return limited
