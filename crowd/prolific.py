"""A client of Prolific's REST API as its documentation describes it (../shared/CROWD-CONTRACTS.md §2):
`Authorization: Token <token>`, paths under the base URL ending in `/`, errors in either documented
body shape. A 429 comes from contention on the workspace wallet and is retried with exponential
backoff and full jitter, one request at a time; calls that are not safe to repeat (the bonus pay
call) are never retried here: their callers reconcile first."""

import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

from django.conf import settings

from core.errors import Conflict, DomainError

# The transition endpoint ignores a repeated request; bulk approve and the listing are safe to repeat.
RETRIED_STATUSES = {429, 500, 502, 503, 504}
REJECTION_CATEGORIES = ("TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
                        "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER")
REJECTION_MESSAGE_MIN = 100


class ProlificError(DomainError):
    """A refusal from Prolific (or no answer: status 0), with its status and the error's text; the API
    answers 502 naming Prolific."""

    status_code = 502

    def __init__(self, status: int, detail: str):
        super().__init__(f"Prolific answered {status}: {detail}" if status else f"Prolific did not answer: {detail}",
                         field="prolific")
        self.status = status
        self.detail = detail


def error_text(body) -> str:
    """The text of either documented error shape ({"error": {...detail}} or a bare detail) or the CLI's
    {"message", "detail"}."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            detail = inner.get("detail", inner.get("message", inner.get("title", "")))
            return detail if isinstance(detail, str) else json.dumps(detail)
    return str(body)[:500]


@dataclass
class Response:
    status: int
    body: object
    headers: dict = field(default_factory=dict)


class _SameHostRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects are followed on the API's own scheme and host only: the token is never carried to another
    host (urllib copies the Authorization header onto the redirected request), nor over plain http."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        here, there = urllib.parse.urlsplit(req.full_url), urllib.parse.urlsplit(newurl)
        if (there.scheme, there.netloc) != (here.scheme, here.netloc):
            raise urllib.error.HTTPError(req.full_url, code, f"redirected to another host ({there.netloc or newurl}); "
                                                             "not followed with the token", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_SameHostRedirects)


class ProlificClient:
    def __init__(self, token: str | None = None, base_url: str | None = None, attempts: int = 5,
                 backoff_s: float = 1.0, timeout_s: float = 30.0, sleep=time.sleep):
        self.token = token if token is not None else settings.PROLIFIC_API_TOKEN
        self.base_url = (base_url or settings.PROLIFIC_API_URL).rstrip("/") + "/"
        self.attempts, self.backoff_s, self.timeout_s, self.sleep = attempts, backoff_s, timeout_s, sleep
        if not self.token:
            raise Conflict("Set PROLIFIC_API_TOKEN (Prolific: Settings > Go to API token) to talk to Prolific.",
                           field="prolific")

    # --- transport ---

    def call(self, method: str, path: str, body=None, query: dict | None = None, retry: bool = True) -> Response:
        """One request; a 429 or 5xx (or no answer) is retried with backoff when `retry`."""
        url = urllib.parse.urljoin(self.base_url, path.lstrip("/"))
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Token {self.token}", "Accept": "application/json",
                   "Referer": "https://github.com/hypolab/hypolab"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        for attempt in range(1, self.attempts + 1):
            try:
                return self._send(urllib.request.Request(url, data=data, method=method, headers=headers))
            except ProlificError as exc:
                if not retry or attempt == self.attempts or (exc.status and exc.status not in RETRIED_STATUSES):
                    raise
                self.sleep(random.uniform(0, self.backoff_s * 2 ** (attempt - 1)))  # full jitter
        raise AssertionError("unreachable")

    def _send(self, request) -> Response:
        try:
            with _OPENER.open(request, timeout=self.timeout_s) as answer:  # configured URL; same-host redirects
                raw = answer.read()
                return Response(answer.status, json.loads(raw) if raw.strip() else None, dict(answer.headers))
        except urllib.error.HTTPError as exc:
            if 300 <= exc.code < 400:  # a redirect refused (another host) or not followable
                raise ProlificError(exc.code, str(exc.reason)) from None
            raw = exc.read()
            try:
                body = json.loads(raw) if raw.strip() else ""
            except ValueError:
                body = raw.decode(errors="replace")
            raise ProlificError(exc.code, error_text(body)) from None
        except (urllib.error.URLError, OSError) as exc:
            raise ProlificError(0, str(exc)) from None

    # --- account, studies ---

    def me(self) -> dict:
        return self.call("GET", "users/me/").body

    def create_study(self, payload: dict) -> dict:
        return self.call("POST", "studies/", payload, retry=False).body  # a repeat would make a second draft

    def transition_study(self, study_id: str, action: str) -> dict:
        return self.call("POST", f"studies/{study_id}/transition/", {"action": action}).body

    def get_study(self, study_id: str) -> dict:
        return self.call("GET", f"studies/{study_id}/").body

    # --- submissions ---

    def submissions(self, study_id: str, page_size: int = 100) -> list[dict]:
        """Every submission of the study, all pages."""
        return [row for rows, _ in self.submission_pages(study_id, page_size) for row in rows]

    def submission_pages(self, study_id: str, page_size: int = 100):
        """The study's submissions a page at a time (`page`/`page_size` of GET /submissions/?study=), each
        with the listing's count of them all (`meta.count`, None if absent); the next page is asked for only
        when the caller wants it (a sync stops between pages when its job is cancelled)."""
        page = 1
        while True:
            body = self.call("GET", "submissions/", query={"study": study_id, "page": page,
                                                           "page_size": page_size}).body or {}
            results = body.get("results", [])
            yield results, (body.get("meta") or {}).get("count")
            if len(results) < page_size and not (body.get("_links", {}).get("next") or {}).get("href"):
                return
            page += 1

    def get_submission(self, submission_id: str) -> dict:
        return self.call("GET", f"submissions/{submission_id}/").body

    def approve(self, submission_id: str) -> dict:
        return self.call("POST", f"submissions/{submission_id}/transition/", {"action": "APPROVE"}).body

    def reject(self, submission_id: str, message: str, category: str) -> dict:
        check_rejection(message, category)
        return self.call("POST", f"submissions/{submission_id}/transition/",
                         {"action": "REJECT", "message": message, "rejection_category": category}).body

    def bulk_approve(self, submission_ids: list[str]) -> None:
        for start in range(0, len(submission_ids), 1000):  # the recommended maximum, one batch at a time
            self.call("POST", "submissions/bulk-approve/", {"submission_ids": submission_ids[start:start + 1000]})

    # --- bonuses: set up, then pay (pay is not idempotent) ---

    def set_up_bonuses(self, study_id: str, amounts: dict[str, str]) -> dict:
        """A bulk bonus of {participant or submission id: amount in major units, e.g. "1.50"}."""
        csv_bonuses = "".join(f"{who},{amount}\n" for who, amount in amounts.items())
        return self.call("POST", "submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": csv_bonuses},
                         retry=False).body

    def pay_bonuses(self, bulk_id: str) -> None:
        """Pays every call: never retried here."""
        self.call("POST", f"bulk-bonus-payments/{bulk_id}/pay/", retry=False)

    # --- messages ---

    def message(self, participant_id: str, study_id: str, body: str) -> None:
        self.call("POST", "messages/", {"recipient_id": participant_id, "study_id": study_id, "body": body},
                  retry=False)

    def bulk_message(self, participant_ids: list[str], study_id: str, body: str) -> None:
        self.call("POST", "messages/bulk/", {"ids": participant_ids, "study_id": study_id, "body": body},
                  retry=False)

    # --- webhooks ---

    def create_secret(self, workspace_id: str) -> dict:
        return self.call("POST", "hooks/secrets/", {"workspace_id": workspace_id}).body

    def subscribe(self, workspace_id: str, event_type: str, target_url: str) -> str:
        """Create and confirm a subscription; its id. The 201 body is a flat subscription or a
        {"results": [...]} list (both are documented); the confirmation secret is the X-Hook-Secret
        response header, sent back in the confirm call's body."""
        answer = self.call("POST", "hooks/subscriptions/", {"workspace_id": workspace_id, "event_type": event_type,
                                                            "target_url": target_url}, retry=False)
        body = answer.body or {}
        subscription = (body.get("results") or [body])[0]
        hook_secret = next((v for k, v in answer.headers.items() if k.lower() == "x-hook-secret"), "")
        self.call("POST", f"hooks/subscriptions/{subscription['id']}/", {"secret": hook_secret})
        return subscription["id"]

    def event_types(self) -> list[str]:
        return [item["event_type"] for item in (self.call("GET", "hooks/event-types/").body or {}).get("results", [])]


def check_rejection(message: str, category: str) -> None:
    """What Prolific requires of a rejection, checked before asking."""
    if category not in REJECTION_CATEGORIES:
        raise DomainError(f"Must be one of {', '.join(REJECTION_CATEGORIES)}.", field="rejection_category")
    if len((message or "").strip()) < REJECTION_MESSAGE_MIN:
        raise DomainError(f"Prolific needs a message of at least {REJECTION_MESSAGE_MIN} characters.",
                          field="message")
