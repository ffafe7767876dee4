import csv
import re
from pathlib import Path

from django.http import FileResponse, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from core.errors import DomainError
from crowd import services as crowd_services
from crowd import squatting

# Crowd workers have no password: they are logged in by their platform link.
BACKEND = "core.auth.CachedModelBackend"


def carries_platform_ids(params) -> bool:
    """Whether an entry link carries a crowd platform's worker id (Prolific, MTurk, CloudResearch);
    without one, a signed-in user of the right role just goes on."""
    return any(params.get(name) for name in ("PROLIFIC_PID", "worker_id", "workerId", "participant_id",
                                             "participantId"))


def error_page(request, exc: DomainError):
    return render(request, "frontend/error.html", {"error": {exc.field: exc.message}}, status=exc.status_code)


def entry_params(request) -> dict:
    """A crowd link's platform ids: its query string, with any the POST body carries (an API client
    posting them instead of keeping them in the address)."""
    params = request.GET.dict()
    params.update({name: value for name, value in request.POST.items() if name in crowd_services.LINK_PARAMS})
    return params


def squatted_page(request, exc):
    """A worker id bound to another session (crowd.services.SessionSquatted): the page says so, with a
    reference the participant quotes; the conflict is recorded for the admin to resolve
    (crowd.squatting, admin: Crowd > Session conflicts)."""
    conflict = squatting.record(exc)
    return render(request, "frontend/error.html", {
        "error": {exc.field: exc.message}, "reference": f"ID-{conflict.pk}", "title": "This id is in use",
    }, status=exc.status_code)


def attachment(filename: str, content_type: str, body="") -> HttpResponse:
    """A download the browser saves as `filename`."""
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# A spreadsheet reads a cell starting with one of these as a formula (a participant's answer, a
# model's output): such text is written with a leading apostrophe, which shows it as typed. A plain
# signed number (a table's "-1.5") is no formula and stays as it is.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$")


def spreadsheet_safe(value):
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not PLAIN_NUMBER.match(value):
        return f"'{value}"
    return value


def csv_attachment(filename: str, rows) -> HttpResponse:
    """`rows` (the header first) as a CSV download, text that a spreadsheet would run as a formula escaped."""
    response = attachment(filename, "text/csv")
    csv.writer(response).writerows([spreadsheet_safe(cell) for cell in row] for row in rows)
    return response


FAVICON = Path(__file__).resolve().parents[1] / "static" / "hypolab" / "favicon.ico"


@require_GET
@cache_control(public=True, max_age=7 * 24 * 3600)
def favicon(request):
    """Browsers ask for /favicon.ico whatever the page's link tags say."""
    return FileResponse(FAVICON.open("rb"), content_type="image/x-icon")
