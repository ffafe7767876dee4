"""A loopback fake of Prolific, built from Prolific's documentation (../shared/CROWD-CONTRACTS.md §4), not
from this project's reading of it: the REST API on http://127.0.0.1:<port>/api/v1/ with an in-memory
state machine (studies, submissions, bonuses, messages, hooks), a webhook emitter that signs each
delivery as the docs say — base64(HMAC-SHA256(workspace secret, X-Prolific-Request-Timestamp + body)),
X-Event-ID (the same on every retry), X-Timestamp, a body with exactly the documented fields and no
event id — and a participant simulator (open the study URL with its placeholders filled in, finish
with a completion code, return, time out).

Deliberate differences from production (§4.5): http://127.0.0.1 target URLs are accepted unless
`strict_https`; retries happen at once (the 24 h schedule compressed to nothing); the completion
route is the fake's own; the undocumented choices (create-subscription body shape, re-signing on a
retry, compact JSON) are switches. Deliveries go through `transport(url, headers, body) -> status`:
a real HTTP POST by default, a Django test client in tests that need no live server.

Its clocks follow the real order of things, on the real clock (the platform under test reads the same
one): a submission starts when the participant enters and completes after that; a status changes, and
its event is emitted (X-Timestamp), in one step that polling cannot see half of, so the REST API shows
a status only once its event exists; a delivery is signed (X-Prolific-Request-Timestamp) when it is
sent, never before its X-Timestamp. Events in the same second share their X-Timestamp, as Prolific's
whole seconds do."""

import base64
import hashlib
import hmac
import itertools
import json
import re
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PLACEHOLDERS = {"PROLIFIC_PID", "STUDY_ID", "SESSION_ID"}
CODE_TYPES = {"COMPLETED", "FAILED_ATTENTION_CHECK", "FOLLOW_UP_STUDY", "GIVE_BONUS", "INCOMPATIBLE_DEVICE",
              "NO_CONSENT", "OTHER", "FIXED_SCREENOUT", "SCREENED_IN", "SCREENED_OUT"}
ACTION_FIELDS = {"AUTOMATICALLY_APPROVE": (), "MANUALLY_REVIEW": (), "REQUEST_RETURN": ("return_reason",),
                 "ADD_TO_PARTICIPANT_GROUP": ("participant_group",),
                 "REMOVE_FROM_PARTICIPANT_GROUP": ("participant_group",), "DYNAMIC_PAYMENT": (),
                 "FIXED_SCREEN_OUT_PAYMENT": ("fixed_screen_out_reward", "slots")}
STUDY_REQUIRED = ("name", "description", "external_study_url", "prolific_id_option", "total_available_places",
                  "estimated_completion_time", "reward")
STUDY_TRANSITIONS = {("UNPUBLISHED", "PUBLISH"): "ACTIVE", ("ACTIVE", "PAUSE"): "PAUSED",
                     ("ACTIVE", "STOP"): "COMPLETED", ("PAUSED", "START"): "ACTIVE", ("PAUSED", "STOP"): "COMPLETED"}
REJECTION_CATEGORIES = {"TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
                        "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER"}
EVENT_TYPES = ("submission.status.change", "study.status.change", "study.progress.change",
               "study.has_high_return_rate", "participant.submission.created")


class Refusal(Exception):
    def __init__(self, status, detail):
        super().__init__(detail)
        self.status, self.detail = status, detail


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The documented signature: base64(HMAC-SHA256(secret as UTF-8, timestamp string + body))."""
    return base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()).decode()


def iso_now() -> str:
    """The time now as the API writes its datetimes (ISO 8601, UTC)."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def delivery(secret: str, payload: dict, event_id: str, sent_at: str | int, timestamp: str | None = None,
             compact: bool = False) -> tuple[dict, bytes]:
    """The headers and body of a delivery as Prolific sends it: the documented fields as JSON (Python's
    default separators, or compact ones), the event id and time in headers, signed over the request
    timestamp followed by the body."""
    body = json.dumps(payload, separators=(",", ":") if compact else None).encode()
    timestamp = timestamp or str(int(time.time()))
    headers = {"Content-Type": "application/json", "X-Prolific-Request-Timestamp": timestamp,
               "X-Prolific-Request-Signature": sign(secret, timestamp, body),
               "X-Event-ID": event_id, "X-Timestamp": str(sent_at)}
    return headers, body


def post_delivery(client, headers: dict, body: bytes, path="/api/v1/crowd/prolific/webhook/"):
    """A delivery through a Django test client (as the transport of tests without a live server)."""
    extra = {name: value for name, value in headers.items() if name != "Content-Type"}
    return client.post(path, body, content_type="application/json", headers=extra)


def http_transport(url, headers, body) -> int:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


class FakeProlific:
    def __init__(self, token="fake-token", workspace_id="workspace-1", strict_https=False,
                 subscription_body="flat", compact_json=False, resign_retries=True, retries=11):
        self.token, self.workspace_id, self.strict_https = token, workspace_id, strict_https
        self.subscription_body, self.compact_json = subscription_body, compact_json
        self.resign_retries, self.retries = resign_retries, retries
        self.transport = http_transport
        self.lock = threading.RLock()
        self.ids = itertools.count(1)
        self.studies, self.submissions, self.bulk_bonuses, self.subscriptions = {}, {}, {}, {}
        self.secrets, self.messages, self.events = {}, [], []
        self.calls, self.pay_calls = [], []  # (method, path, body) of every request; bulk ids paid
        self.faults = []  # [method, path regex, status, times left]
        self.outbox = []  # (event, subscription) to deliver

    # --- server ---

    def __enter__(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, body, headers = fake.handle(self.command, self.path, raw, self.headers)
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_port}/api/v1/"
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def fail(self, method: str, path_pattern: str, status: int = 429, times: int = 1):
        """The next `times` matching requests get `status` (a 429 without Retry-After, as documented)."""
        self.faults.append([method, re.compile(path_pattern), status, times])

    def handle(self, method, full_path, raw, headers):
        parsed = urllib.parse.urlsplit(full_path)
        path = parsed.path.removeprefix("/api/v1/")
        query = dict(urllib.parse.parse_qsl(parsed.query))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            return 400, {"error": {"status": 400, "title": "Bad request", "detail": "Body is not JSON."}}, {}
        with self.lock:
            self.calls.append((method, path, body))
            if headers.get("Authorization") != f"Token {self.token}":
                return 401, {"error": {"status": 401, "title": "Unauthorized", "detail": "Invalid token."}}, {}
            for fault in self.faults:
                if fault[3] > 0 and fault[0] == method and fault[1].fullmatch(path):
                    fault[3] -= 1
                    return fault[2], {"detail": "Too many requests"}, {}
            for pattern, methods in ROUTES:
                match = re.fullmatch(pattern, path)
                if match:
                    if method not in methods:
                        return 405, {"error": {"status": 405, "detail": "Method not allowed."}}, {}
                    try:
                        answer = getattr(self, methods[method])(*match.groups(), body=body or {}, query=query)
                    except Refusal as exc:
                        return exc.status, {"error": {"status": exc.status, "title": "Error", "detail": exc.detail}}, {}
                    return answer if len(answer) == 3 else (*answer, {})
            return 404, {"error": {"status": 404, "detail": "Not found."}}, {}

    def _new_id(self) -> str:
        return f"{next(self.ids):024x}"

    def _get(self, table, key):
        if key not in table:
            raise Refusal(404, "Not found.")
        return table[key]

    # --- account and studies ---

    def me(self, body, query):
        return 200, {"id": "researcher-1", "current_project_id": "project-1"}

    def create_study(self, body, query):
        missing = [name for name in STUDY_REQUIRED if body.get(name) in (None, "")]
        if missing:
            raise Refusal(400, {name: ["This field is required."] for name in missing})
        for name in re.findall(r"\{\{%(.*?)%\}\}", body["external_study_url"]):
            if name not in PLACEHOLDERS:
                raise Refusal(400, {"external_study_url": [f"Unknown placeholder {name}."]})
        codes = body.get("completion_codes") or []
        if not codes:
            raise Refusal(400, {"completion_codes": ["Specify at least one completion code."]})
        if len({c.get("code") for c in codes}) != len(codes):
            raise Refusal(400, {"completion_codes": ["Each code must be unique within a study."]})
        for code in codes:
            if code.get("code_type") not in CODE_TYPES:
                raise Refusal(400, {"completion_codes": [f"Unknown code_type {code.get('code_type')}."]})
            for action in code.get("actions", []):
                needed = ACTION_FIELDS.get(action.get("action"))
                if needed is None or any(f not in action for f in needed):
                    raise Refusal(400, {"completion_codes": [f"Bad action {action}."]})
        study = {**body, "id": self._new_id(), "status": "UNPUBLISHED", "is_ready_to_publish": True}
        self.studies[study["id"]] = study
        return 201, study

    def get_study(self, study_id, body, query):
        return 200, self._get(self.studies, study_id)

    def update_study(self, study_id, body, query):
        """After publishing, only a few fields may change, and places only grow."""
        study = self._get(self.studies, study_id)
        if study["status"] != "UNPUBLISHED":
            allowed = {"internal_name", "total_available_places", "access_details", "submissions_config",
                       "data_collection_metadata"}
            if set(body) - allowed:
                raise Refusal(400, {name: ["Cannot change after publishing."] for name in set(body) - allowed})
            if body.get("total_available_places", study["total_available_places"]) < study["total_available_places"]:
                raise Refusal(400, {"total_available_places": ["Places can only increase."]})
        study.update(body)
        return 200, study

    def delete_study(self, study_id, body, query):
        if self._get(self.studies, study_id)["status"] != "UNPUBLISHED":
            raise Refusal(400, "Only a draft study can be deleted.")
        del self.studies[study_id]
        return 204, None

    def submission_counts(self, study_id, body, query):
        self._get(self.studies, study_id)
        counts = dict.fromkeys(("ACTIVE", "APPROVED", "AWAITING REVIEW", "REJECTED", "RESERVED", "RETURNED",
                                "TIMED-OUT", "PARTIALLY APPROVED", "SCREENED OUT"), 0)
        for submission in self.submissions.values():
            if submission["study_id"] == study_id:
                counts[submission["status"]] = counts.get(submission["status"], 0) + 1
        return 200, {**counts, "TOTAL": sum(counts.values())}

    def transition_study(self, study_id, body, query):
        study = self._get(self.studies, study_id)
        target = STUDY_TRANSITIONS.get((study["status"], body.get("action")))
        if target is None:
            raise Refusal(400, f"Cannot {body.get('action')} a study that is {study['status']}.")
        study["status"] = target
        self.emit("study.status.change", study_id, metadata={}, status=target)
        return 200, study

    # --- submissions ---

    def _short(self, submission):
        return {key: submission[key] for key in ("id", "participant_id", "status", "started_at", "completed_at",
                                                 "study_code", "has_siblings", "return_requested")}

    def list_submissions(self, body, query):
        if "study" not in query:
            raise Refusal(400, {"study": ["This field is required."]})
        wanted = query.get("status", "").upper().replace("_", " ")
        found = [self._short(s) for s in self.submissions.values() if s["study_id"] == query["study"]
                 and (not wanted or s["status"] == wanted.replace("TIMED OUT", "TIMED-OUT"))]
        page, size = int(query.get("page", 1)), int(query.get("page_size", 20))
        return 200, {"results": found[(page - 1) * size: page * size], "meta": {"count": len(found)}}

    def study_submissions(self, study_id, body, query):
        self._get(self.studies, study_id)
        return 200, {"results": [self._short(s) for s in self.submissions.values() if s["study_id"] == study_id]}

    def get_submission(self, submission_id, body, query):
        submission = self._get(self.submissions, submission_id)
        return 200, {**submission, "participant": submission["participant_id"]}

    def transition_submission(self, submission_id, body, query):
        submission = self._get(self.submissions, submission_id)
        action = body.get("action")
        target = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}.get(action)
        if target is None:
            raise Refusal(400, {"action": [f"Unsupported here: {action}."]})
        if action == "REJECT":
            if len(body.get("message") or "") < 100:
                raise Refusal(400, {"message": ["Must be at least 100 characters."]})
            if body.get("rejection_category") not in REJECTION_CATEGORIES:
                raise Refusal(400, {"rejection_category": ["Not a valid choice."]})
        if submission["status"] == target:
            return 200, self._short(submission)  # the same request again: ignored
        if submission["status"] != "AWAITING REVIEW":
            raise Refusal(400, f"Cannot {action} a submission that is {submission['status']}.")
        self.set_submission_status(submission_id, target)
        return 200, self._short(submission)

    def request_return(self, submission_id, body, query):
        submission = self._get(self.submissions, submission_id)
        if not body.get("request_return_reasons"):
            raise Refusal(400, {"request_return_reasons": ["This field is required."]})
        submission["return_requested"] = iso_now()
        return 200, {"id": submission_id, "status": submission["status"], "participant": submission["participant_id"],
                     "return_requested": submission["return_requested"]}

    def bulk_approve(self, body, query):
        if ("submission_ids" in body) == ("participant_ids" in body or "study_id" in body):
            raise Refusal(400, "Send either submission_ids or study_id with participant_ids.")
        ids = body.get("submission_ids") or [s["id"] for s in self.submissions.values()
                                             if s["study_id"] == body.get("study_id")
                                             and s["participant_id"] in body.get("participant_ids", [])]
        for submission_id in ids:
            if self.submissions.get(submission_id, {}).get("status") == "AWAITING REVIEW":
                self.set_submission_status(submission_id, "APPROVED")
        return 200, "Bulk approve in progress"

    # --- bonuses ---

    def create_bonus(self, body, query):
        study = self._get(self.studies, body.get("study_id"))
        rows, bad = [], []
        for line in (body.get("csv_bonuses") or "").strip().splitlines():
            who, _, amount = line.partition(",")
            submission = next((s for s in self.submissions.values() if s["study_id"] == study["id"]
                               and who in (s["id"], s["participant_id"])), None)
            if submission is None:
                bad.append(who)
            else:
                rows.append((submission["id"], int(Decimal(amount) * 100)))
        if bad or not rows:
            raise Refusal(400, {"csv_bonuses": [f"Incorrect ids: {', '.join(bad)}"]})
        total = sum(cents for _, cents in rows)
        bulk = {"id": self._new_id(), "study": study["id"], "amount": float(total), "fees": float(total) * 0.33,
                "vat": 0.0, "total_amount": float(total) * 1.33}
        self.bulk_bonuses[bulk["id"]] = {**bulk, "rows": rows}
        return 201, bulk

    def pay_bonus(self, bulk_id, body, query):
        bulk = self._get(self.bulk_bonuses, bulk_id)
        self.pay_calls.append(bulk_id)  # every call pays again, as documented
        for submission_id, cents in bulk["rows"]:
            self.submissions[submission_id]["bonus_payments"].append(cents)
        return 202, None

    # --- messages ---

    def send_message(self, body, query):
        if not all(body.get(k) for k in ("recipient_id", "body", "study_id")):
            raise Refusal(400, "recipient_id, body and study_id are required.")
        self.messages.append(body)
        return 204, None

    def bulk_message(self, body, query):
        if not all(body.get(k) for k in ("ids", "body", "study_id")):
            raise Refusal(400, "ids, body and study_id are required.")
        self.messages.append(body)
        return 204, None

    def list_messages(self, body, query):
        if not (query.get("user_id") or query.get("created_after")):
            raise Refusal(400, "user_id or created_after is required.")
        return 200, {"results": []}

    # --- hooks ---

    def event_types(self, body, query):
        return 200, {"results": [{"event_type": name, "description": name} for name in EVENT_TYPES]}

    def create_secret(self, body, query):
        workspace = body.get("workspace_id") or self.workspace_id
        self.secrets[workspace] = {"id": self._new_id(), "value": secrets.token_urlsafe(32), "workspace_id": workspace}
        return 201, self.secrets[workspace]

    def list_secrets(self, body, query):
        if "workspace_id" not in query:
            raise Refusal(400, {"workspace_id": ["This field is required."]})
        return 200, {"results": [s for w, s in self.secrets.items() if w == query["workspace_id"]]}

    def create_subscription(self, body, query):
        missing = [k for k in ("event_type", "target_url", "workspace_id") if not body.get(k)]
        if missing:
            raise Refusal(400, {k: ["This field is required."] for k in missing})
        if self.strict_https and not body["target_url"].startswith("https://"):
            raise Refusal(400, {"target_url": ["Must use https:// and be publicly accessible."]})
        subscription = {"id": self._new_id(), "event_type": body["event_type"], "target_url": body["target_url"],
                        "is_enabled": body.get("is_enabled", True), "workspace_id": body["workspace_id"],
                        "confirmed": False, "hook_secret": secrets.token_hex(16)}
        self.subscriptions[subscription["id"]] = subscription
        shown = self._subscription(subscription)
        answer = {"results": [shown]} if self.subscription_body == "results" else shown
        return 201, answer, {"X-Hook-Secret": subscription["hook_secret"]}

    def _subscription(self, subscription):
        return {k: subscription[k] for k in ("id", "event_type", "target_url", "is_enabled", "workspace_id")}

    def confirm_subscription(self, subscription_id, body, query):
        subscription = self._get(self.subscriptions, subscription_id)
        if body.get("secret") != subscription["hook_secret"]:
            raise Refusal(400, {"secret": ["Does not match the X-Hook-Secret issued."]})
        subscription["confirmed"] = True
        return 200, self._subscription(subscription)

    def get_subscription(self, subscription_id, body, query):
        return 200, self._subscription(self._get(self.subscriptions, subscription_id))

    def update_subscription(self, subscription_id, body, query):
        subscription = self._get(self.subscriptions, subscription_id)
        subscription.update({k: body[k] for k in ("event_type", "target_url", "is_enabled") if k in body})
        return 200, self._subscription(subscription)

    def delete_subscription(self, subscription_id, body, query):
        del self.subscriptions[self._get(self.subscriptions, subscription_id)["id"]]
        return 204, None

    def list_subscriptions(self, body, query):
        enabled = query.get("is_enabled", "true").lower() in ("1", "true", "yes")
        return 200, {"results": [self._subscription(s) for s in self.subscriptions.values()
                                 if s["is_enabled"] == enabled
                                 and query.get("workspace_id", s["workspace_id"]) == s["workspace_id"]]}

    def subscription_events(self, subscription_id, body, query):
        self._get(self.subscriptions, subscription_id)
        found = [e for e in self.events if e["subscription"] == subscription_id
                 and (not query.get("status") or e["status"] == query["status"])]
        offset, limit = int(query.get("offset", 0)), int(query.get("limit", 100))
        return 200, {"results": [{k: v for k, v in e.items() if k != "subscription"}
                                 for e in found[offset: offset + limit]]}

    # --- participants (the simulator) ---

    def enter(self, study_id: str, participant_id: str) -> str:
        """A participant starts the study: their submission (SESSION_ID) is ACTIVE; the study URL with
        the placeholders filled in."""
        with self.lock:
            study = self._get(self.studies, study_id)
            assert study["status"] == "ACTIVE", study["status"]
            submission_id = self._new_id()
            self.submissions[submission_id] = {
                "id": submission_id, "study_id": study_id, "participant_id": participant_id, "status": "ACTIVE",
                "started_at": iso_now(), "completed_at": None, "study_code": None,
                "entered_code": None, "has_siblings": False, "return_requested": None, "bonus_payments": [],
            }
            self.emit("participant.submission.created", submission_id)
        url = study["external_study_url"]
        for name, value in (("PROLIFIC_PID", participant_id), ("STUDY_ID", study_id), ("SESSION_ID", submission_id)):
            url = url.replace("{{%" + name + "%}}", value)
        return url

    def complete(self, submission_id: str, code: str) -> str:
        """The participant lands on the completion route with `code`: the code's actions run."""
        with self.lock:
            submission = self._get(self.submissions, submission_id)
            study = self.studies[submission["study_id"]]
            found = next((c for c in study["completion_codes"] if c["code"] == code), None)
            submission.update(study_code=code, entered_code=code, completed_at=iso_now())
            actions = {a["action"] for a in (found or {}).get("actions", [])}
            status = "APPROVED" if "AUTOMATICALLY_APPROVE" in actions else "AWAITING REVIEW"
            self.set_submission_status(submission_id, status)
        return status

    def set_submission_status(self, submission_id: str, status: str) -> dict:
        """A submission's status changes (participant, researcher or time) and the documented event is
        emitted, under the lock the REST API answers under: no poll sees the status before its event."""
        with self.lock:
            submission = self.submissions[submission_id]
            submission["status"] = status
            return self.emit("submission.status.change", submission_id,
                             participant_id=submission["participant_id"], status=status)

    # --- the emitter ---

    def emit(self, event_type: str, resource_id: str, **fields) -> dict:
        """Queue one event for every confirmed, enabled subscription of its type (delivered by `flush`,
        after the request that caused it, as Prolific delivers asynchronously); the event (its id,
        X-Timestamp and payload), for a redelivery."""
        payload = {"resource_id": resource_id, "event_type": event_type, **fields}
        with self.lock:
            # X-Timestamp: the whole second the event happened in, taken after the change it reports
            event = {"event_id": secrets.token_hex(12), "sent_at": str(int(time.time())), "payload": payload}
            for subscription in self.subscriptions.values():
                if subscription["event_type"] == event_type and subscription["confirmed"] and subscription["is_enabled"]:
                    self.outbox.append((event, subscription))
        return event

    def flush(self) -> list[int]:
        """Deliver the queued events in order; the final status of each delivery."""
        with self.lock:
            queued, self.outbox = self.outbox, []
        return [self.deliver(event, subscription) for event, subscription in queued]

    def delivery(self, event: dict, secret: str | None = None, timestamp: str | None = None):
        """The headers and body of one delivery of `event`, signed the documented way."""
        secret = secret if secret is not None else self.secrets[self.workspace_id]["value"]
        return delivery(secret, event["payload"], event["event_id"], event["sent_at"], timestamp, self.compact_json)

    def deliver(self, event: dict, subscription: dict) -> int:
        """POST the event; a non-2xx answer or no answer is retried (compressed schedule)."""
        log = {"id": self._new_id(), "event_type": event["payload"]["event_type"], "subscription": subscription["id"],
               "resource_id": event["payload"]["resource_id"], "target_url": subscription["target_url"],
               "payload": event["payload"], "status": "PENDING"}
        self.events.append(log)
        headers, body = self.delivery(event)
        for _attempt in range(1 + self.retries):
            status = self.transport(subscription["target_url"], headers, body)
            if 200 <= status < 300:
                log["status"] = "SUCCEEDED"
                return status
            if self.resign_retries:
                headers, body = self.delivery(event)
        log["status"] = "FAILED"
        return status


ROUTES = [
    (r"users/me/", {"GET": "me"}),
    (r"studies/", {"POST": "create_study"}),
    (r"studies/(\w+)/", {"GET": "get_study", "PATCH": "update_study", "DELETE": "delete_study"}),
    (r"studies/(\w+)/submissions/counts/", {"GET": "submission_counts"}),
    (r"studies/(\w+)/transition/", {"POST": "transition_study"}),
    (r"studies/(\w+)/submissions/", {"GET": "study_submissions"}),
    (r"submissions/", {"GET": "list_submissions"}),
    (r"submissions/bulk-approve/", {"POST": "bulk_approve"}),
    (r"submissions/bonus-payments/", {"POST": "create_bonus"}),
    (r"submissions/(\w+)/", {"GET": "get_submission"}),
    (r"submissions/(\w+)/transition/", {"POST": "transition_submission"}),
    (r"submissions/(\w+)/request-return/", {"POST": "request_return"}),
    (r"bulk-bonus-payments/(\w+)/pay/", {"POST": "pay_bonus"}),
    (r"messages/", {"POST": "send_message", "GET": "list_messages"}),
    (r"messages/bulk/", {"POST": "bulk_message"}),
    (r"hooks/event-types/", {"GET": "event_types"}),
    (r"hooks/secrets/", {"POST": "create_secret", "GET": "list_secrets"}),
    (r"hooks/subscriptions/", {"POST": "create_subscription", "GET": "list_subscriptions"}),
    (r"hooks/subscriptions/(\w+)/", {"POST": "confirm_subscription", "GET": "get_subscription",
                                      "PATCH": "update_subscription", "DELETE": "delete_subscription"}),
    (r"hooks/subscriptions/(\w+)/events/", {"GET": "subscription_events"}),
]
