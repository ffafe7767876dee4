"""The scene after a change from review's side: a reviewer asks for it to be built again
(scenes/after_state.py does the building, as a core.Job, on the default queue), and review
gives a release the answers a change's geometry derives for its questions (connected in apps.py to
`benchmarks.releases.geometry.derived_answers_asked`: benchmarks does not import review)."""

from benchmarks.models import ContextChange
from core.errors import DomainError, NotFound
from scenes import dispatch


def request_after_state(change_id: int, reviewer):
    """Send the change's after-state build; the job it reports through. 404 for no such change, 400 on `edit`
    for a change that has no edit."""
    change = ContextChange.objects.filter(pk=change_id).only("pk", "edit").first()
    if change is None:
        raise NotFound("No such change.", field="change")
    if not change.edit:
        raise DomainError("This change has no edit, so there is no scene after it to build; give it one first "
                          "(changes/<id>/geometry/).", field="edit")
    return dispatch.send_after_state(change.pk, reviewer)


def derived_answers_by_item(change_ids) -> dict[int, dict]:
    """Item id -> {"derived", "agrees"} over the changes' questions (review.geometry.derived_answers), for a
    release's `change_geometry`."""
    from .geometry import derived_answers

    found = {}
    for change in ContextChange.objects.filter(pk__in=list(change_ids)).select_related("scene"):
        for row in derived_answers(change):
            found[row["item"]] = {"derived": row["derived"], "agrees": row["agrees"]}
    return found
