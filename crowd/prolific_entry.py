"""A Prolific link checked against Prolific's API at entry (where PROLIFIC_API_TOKEN is set): its
SESSION_ID must be a submission (CROWD-CONTRACTS §2.3, GET /submissions/{id}/) of this participant
(PROLIFIC_PID), in this study (STUDY_ID), in a status that holds a place. Called before the entry's
transaction: it is a network call. A Prolific that does not answer lets the entry in unverified (the
places check catches it later)."""

from core.errors import Forbidden

from .prolific import ProlificClient, ProlificError
from .webhooks import normalise_status

# A submission in one of these has given its place back.
FREED = {"RETURNED", "REJECTED", "TIMED-OUT"}


def verify(ids: dict) -> bool:
    """True when Prolific confirmed the entry; False when it did not answer; Forbidden when it says no."""
    try:
        row = ProlificClient(attempts=2, timeout_s=5).get_submission(ids["session_id"]) or {}
    except ProlificError as exc:
        if exc.status in (400, 404):
            raise Forbidden("Prolific has no submission with this session id (SESSION_ID): open the study from "
                            "its page on Prolific.", field="SESSION_ID") from None
        return False
    if not isinstance(row, dict) or (row.get("participant") or row.get("participant_id")) != ids["worker_id"]:
        raise Forbidden("This session id (SESSION_ID) belongs to another Prolific participant: open the study "
                        "from its page on Prolific.", field="SESSION_ID")
    study_id = row.get("study_id")
    if isinstance(study_id, str) and study_id and study_id != ids["study_id"]:
        raise Forbidden("This session id (SESSION_ID) is a submission of another Prolific study (STUDY_ID): open "
                        "the study from its page on Prolific.", field="STUDY_ID")
    if normalise_status(row.get("status")) in FREED:
        raise Forbidden("Prolific says this submission is over (returned, rejected or timed out), so it holds no "
                        "place in the study.", field="SESSION_ID")
    return True
