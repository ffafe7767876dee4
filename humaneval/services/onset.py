"""An item's clock from stimulus onset: the page reports when everything the item shows (images, the
point cloud's first frame, both videos ready to play) is on screen, and the item's time limit and its
response time run from then, not from serving, so a slow download costs the participant nothing. The
onset is the server's time of the report, accepted only within ONSET_BOUND after serving, so no one
can bank time by reporting late; what it took is stored as the item's load time."""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from core.errors import Conflict, DomainError, NotFound
from core.validation import whole_number

from ..models import Response
from .sessions import session_for

ONSET_BOUND = timedelta(seconds=30)


@transaction.atomic
def report_onset(session_id, participant, item_id, client_load_ms=None) -> Response:
    """Start the item's clock now (the same answer again for an onset already reported)."""
    whole_number(client_load_ms, "load_ms", 0, 2**31 - 1, optional=True)  # the page's own measure: checked only
    session = session_for(session_id, participant, for_update=True)
    item_id = whole_number(item_id, "item", 1, 2**63 - 1)
    response = Response.objects.select_for_update().filter(session=session, item_id=item_id).first()
    if response is None:
        raise NotFound("This item has not been shown in this session.", field="item")
    if response.onset_at is not None:
        return response
    if response.answered_at is not None or response.timed_out:
        raise Conflict("This item is already answered or its time is up.", field="item")
    now = timezone.now()
    waited = now - response.shown_at
    if waited > ONSET_BOUND:
        raise DomainError(f"The onset came {waited.total_seconds():.0f} s after the item was served; only "
                          f"{ONSET_BOUND.total_seconds():.0f} s are allowed, so the clock runs from serving.",
                          field="onset")
    response.onset_at = now
    response.load_ms = int(waited.total_seconds() * 1000)
    response.deadline = min(response.deadline + waited, session.deadline)
    response.save(update_fields=["onset_at", "load_ms", "deadline"])
    return response
