"""An item's clock from stimulus onset: the page reports when everything the item shows (images, the
point cloud's first frame, both videos ready to play) is on screen, and the item's time limit and its
response time run from then, not from serving, so a slow download costs the participant nothing. The
onset is the server's time of the report, accepted only within ONSET_BOUND after serving; what it took
is stored as the item's load time. The question reaches the page with the stimulus, so a late onset is
reading time off the clock: an onset later than what the stimulus needs to load (onset_allowance: a
floor, raised by what this item's stimuli took for the study's other participants) is stored flagged
(`late_onset`) and the answer is left out of the human row (results), counted on the study page."""

import statistics
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from core.errors import Conflict, DomainError, NotFound
from core.validation import whole_number

from ..models import Response
from .sessions import session_for

ONSET_BOUND = timedelta(seconds=30)
ONSET_FLOOR_MS = 8000  # any stimulus may take this long to show without the answer being set aside
ONSET_FACTOR = 3  # ... or this many times the median load of the item's stimuli for other participants
ONSET_SAMPLES = 3  # the fewest other loads that median is taken over


def onset_allowance(response: Response, study_id: int) -> int:
    """The load time (ms) past which this response's onset is late: ONSET_FLOOR_MS, or ONSET_FACTOR times
    the median load the item's stimuli took in the study's other sessions (onsets not themselves late,
    at least ONSET_SAMPLES), at most ONSET_BOUND."""
    loads = list(Response.objects.filter(item_id=response.item_id, session__study_id=study_id,
                                         load_ms__isnull=False, late_onset=False)
                 .exclude(session_id=response.session_id).order_by("-pk").values_list("load_ms", flat=True)[:200])
    measured = ONSET_FACTOR * statistics.median(loads) if len(loads) >= ONSET_SAMPLES else 0
    return int(min(max(ONSET_FLOOR_MS, measured), ONSET_BOUND.total_seconds() * 1000))


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
    response.late_onset = response.load_ms > onset_allowance(response, session.study_id)
    response.deadline = min(response.deadline + waited, session.deadline)
    response.save(update_fields=["onset_at", "load_ms", "late_onset", "deadline"])
    return response
