"""The human baseline: a study over approved items, eligibility, timed sessions whose clock
the server owns, and results graded by the same scorer as the models."""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

import scoring
from annotation import services as annotation_services
from benchmarks.errors import Conflict, DomainError, Forbidden, NotFound
from benchmarks.models import Benchmark, ContextChange, Item
from benchmarks.services import gold_row
from review import services as review_services

from .models import EvalSession, Response, Study, StudyItem


@transaction.atomic
def create_study(benchmark: Benchmark, name: str, item_ids, created_by, seconds_per_item=120,
                 seconds_per_session=1800) -> Study:
    name = (name or "").strip()
    if not name:
        raise DomainError("Give the study a name.", field="name")
    try:
        seconds_per_item = int(seconds_per_item)
        seconds_per_session = int(seconds_per_session)
    except (TypeError, ValueError):
        raise DomainError("Time limits are whole seconds.", field="seconds_per_item") from None
    if not 5 <= seconds_per_item <= 3600:
        raise DomainError("Between 5 and 3600 seconds per item.", field="seconds_per_item")
    if seconds_per_session < seconds_per_item:
        raise DomainError("A session must last at least one item's time.", field="seconds_per_session")
    items = list(Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED, pk__in=item_ids or []))
    if not items:
        raise DomainError("Pick at least one approved item of this benchmark.", field="items")
    missing = set(map(int, item_ids)) - {i.pk for i in items}
    if missing:
        raise DomainError(f"Not approved items of this benchmark: {sorted(missing)}.", field="items")
    study = Study.objects.create(
        benchmark=benchmark, name=name, seconds_per_item=seconds_per_item,
        seconds_per_session=seconds_per_session, created_by=created_by,
    )
    StudyItem.objects.bulk_create(StudyItem(study=study, item=item, position=i) for i, item in enumerate(items))
    return study


def contaminated_user_ids(study: Study) -> set[int]:
    """Everyone who wrote or reviewed any item of the study, or the change it rests on."""
    items = Item.objects.filter(studies=study)
    change_ids = list(items.exclude(change=None).values_list("change_id", flat=True))
    authors = set(items.exclude(author=None).values_list("author_id", flat=True))
    authors |= set(ContextChange.objects.filter(pk__in=change_ids).exclude(author=None)
                   .values_list("author_id", flat=True))
    return authors | review_services.reviewers_of(change_ids)


@transaction.atomic
def start_session(study: Study, participant) -> EvalSession:
    """Start, or resume, the participant's one session of this study."""
    existing = EvalSession.objects.filter(study=study, participant=participant).first()
    if existing:
        if existing.status == EvalSession.Status.FINISHED:
            raise Forbidden("You have already taken this study.", field="study")
        return existing
    if not study.is_open:
        raise DomainError("This study is closed.", field="study")
    if participant.pk in contaminated_user_ids(study):
        raise Forbidden(
            "You helped write or review items in this study, so you cannot be evaluated on them.", field="study"
        )
    now = timezone.now()
    return EvalSession.objects.create(
        study=study, participant=participant, started_at=now,
        deadline=now + timedelta(seconds=study.seconds_per_session),
    )


def enter_study_from_crowd_link(study_id: int, params) -> tuple:
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        raise NotFound("No such study.", field="study")
    user = annotation_services.enter_from_crowd_link(params, role="evaluator")
    return user, start_session(study, user)


def session_for(session_id: int, participant) -> EvalSession:
    session = EvalSession.objects.select_related("study").filter(pk=session_id).first()
    if session is None:
        raise NotFound("No such session.", field="session")
    if session.participant_id != participant.pk:
        raise Forbidden("This session belongs to another participant.", field="session")
    return session


def _finish(session: EvalSession) -> None:
    session.move_to(EvalSession.Status.FINISHED)
    session.finished_at = timezone.now()
    session.completion_code = annotation_services.new_completion_code()
    session.save(update_fields=["status", "finished_at", "completion_code"])


@transaction.atomic
def current_item(session_id: int, participant) -> tuple[EvalSession, Response | None]:
    """The item on screen now; shows the next one (starting its clock) when none is open.
    A reload lands here too, so the clock of an open item keeps running."""
    session = session_for(session_id, participant)
    session = EvalSession.objects.select_for_update().get(pk=session.pk)
    if session.status == EvalSession.Status.FINISHED:
        return session, None
    now = timezone.now()
    open_response = session.responses.filter(answered_at=None, timed_out=False).select_related("item").first()
    if open_response and open_response.deadline <= now:
        open_response.timed_out = True
        open_response.save(update_fields=["timed_out"])
        open_response = None
    if open_response:
        return session, open_response
    if session.deadline <= now:
        _finish(session)
        return session, None
    done = session.responses.values_list("item_id", flat=True)
    next_entry = StudyItem.objects.filter(study=session.study).exclude(item_id__in=done).select_related("item").first()
    if next_entry is None:
        _finish(session)
        return session, None
    deadline = min(now + timedelta(seconds=session.study.seconds_per_item), session.deadline)
    response = Response.objects.create(session=session, item=next_entry.item, shown_at=now, deadline=deadline)
    return session, response


@transaction.atomic
def answer_item(session_id: int, participant, item_id, answer_text: str) -> Response:
    session = session_for(session_id, participant)
    answer_text = (answer_text or "").strip()
    if not answer_text:
        raise DomainError("Type an answer before submitting.", field="answer")
    if len(answer_text) > 500:
        raise DomainError("Answers are at most 500 characters.", field="answer")
    response = (
        Response.objects.select_for_update().filter(session=session, item_id=item_id).first()
        if str(item_id).isdigit() else None
    )
    if response is None:
        raise DomainError("This item is not the one on your screen.", field="item")
    if response.answered_at is not None:
        raise Conflict("This item was already answered.", field="item")
    now = timezone.now()
    if response.timed_out or response.deadline <= now:
        raise DomainError(
            f"Time for this item ran out at {response.deadline:%H:%M:%S} UTC; the answer was not recorded.",
            field="answer",
        )
    response.answer_text = answer_text
    response.answered_at = now
    response.save(update_fields=["answer_text", "answered_at"])
    return response


def study_results(study: Study) -> dict:
    """Score every answered (or timed-out) response; each (item, session) is one graded row."""
    responses = (
        Response.objects.filter(session__study=study)
        .select_related("item")
        .exclude(answered_at=None, timed_out=False)
    )
    gold, predictions = [], []
    for response in responses:
        row_id = f"{response.item_id}:{response.session_id}"
        gold.append(gold_row(response.item, row_id))
        predictions.append({"id": row_id, "output": response.answer_text})
    result = scoring.score(study.benchmark.family, gold, predictions, by=["change_type"])
    result["n_sessions"] = study.sessions.filter(status=EvalSession.Status.FINISHED).count()
    return result

