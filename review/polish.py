"""Optional grammar pass (Hypo3D polished the final texts after deduplication): a language model
corrects each approved change of a benchmark through modeleval's adapter; the correction is stored
as a new revision, which a reviewer accepts or reverts. Batches run as tasks on the default queue."""

from django.db import transaction
from django.db.models import Max, Q

from benchmarks.models import Benchmark, ContextChange
from core.errors import DomainError, NotFound
from modeleval import services as modeleval_services

from . import dispatch, services
from .models import ChangeRevision, Polish

POLISH_BATCH = 50  # changes per task
PROMPT = (
    "Correct the grammar, spelling and punctuation of this description of a change to a 3D scene. "
    "Keep its meaning, the objects and their positions; change nothing else. "
    "Reply with the corrected text only.\n\n{text}"
)


def start_polish(benchmark: Benchmark, model_id, created_by) -> int:
    """Queue the approved changes of a benchmark in batches, once committed; returns how many."""
    model = modeleval_services.language_model(model_id)
    change_ids = list(ContextChange.objects.filter(scene__benchmark=benchmark, status=ContextChange.Status.APPROVED)
                      .order_by("pk").values_list("pk", flat=True))
    if not change_ids:
        raise DomainError("This benchmark has no approved changes to polish.", field="benchmark")
    batches = [change_ids[i:i + POLISH_BATCH] for i in range(0, len(change_ids), POLISH_BATCH)]
    transaction.on_commit(lambda: [dispatch.send_polish(batch, model.pk) for batch in batches])
    return len(change_ids)


def _current_number(change: ContextChange) -> int:
    return change.revisions.aggregate(last=Max("number"))["last"] or 0


def _already_polished(change: ContextChange, source: int) -> bool:
    """This revision was polished, or written by a polish, or its text was polished before (a
    reviewer reverted to it): asking the model again would only repeat itself."""
    return change.polishes.filter(Q(source_number=source) | Q(revision__number=source)
                                  | Q(source_text=change.text)).exists()


def cleaned(output: str, before: str) -> str | None:
    """The model's text without quotes around it; None when it is not a plausible correction of
    `before` (empty, or its length in words far from the original's)."""
    text = (output or "").strip().strip('"').strip()
    words, original = len(text.split()), len(before.split())
    return text if text and original / 2 <= words <= original * 2 else None


def polish_changes(change_ids: list[int], model_id: int) -> int:
    """Polish each change's current text once; returns how many were polished now. Idempotent: a
    revision already polished (or written by a polish) is skipped, and a change edited while the
    model was answering is left for a later pass."""
    model = modeleval_services.language_model(model_id)
    polished = 0
    for change in ContextChange.objects.filter(pk__in=change_ids).order_by("pk"):
        source = _current_number(change)
        if _already_polished(change, source):
            continue
        text = cleaned(modeleval_services.complete(model, PROMPT.format(text=change.text)), change.text)
        with transaction.atomic():  # the model call stays outside: no lock is held while it answers
            locked = ContextChange.objects.select_for_update().get(pk=change.pk)
            if _current_number(locked) != source or _already_polished(locked, source):
                continue
            polish = Polish(change=locked, source_number=source, source_text=locked.text, model=model)
            if text is None or text == locked.text:
                polish.status = Polish.Status.SKIPPED
            else:
                polish.revision = ChangeRevision.objects.create(change=locked, number=source + 1, text=text)
                locked.refined_text = text
                services.bump_change(locked, ["refined_text"])
            polish.save()
            polished += 1
    return polished


@transaction.atomic
def review_polish(polish_id: int, reviewer, action: str, expected_version) -> Polish:
    """accept keeps the model's text; revert restores the text before it as a new revision."""
    polish = Polish.objects.select_for_update().filter(pk=polish_id).first()
    if polish is None:
        raise NotFound("No such polish.", field="polish")
    if action not in ("accept", "revert"):
        raise DomainError("Accept or revert.", field="action")
    if polish.status != Polish.Status.APPLIED:
        raise DomainError(f"This polish is already {polish.get_status_display().lower()}.", field="polish")
    change = services.locked_change(polish.change_id, reviewer, expected_version)
    if action == "revert":
        number = _current_number(change)
        if polish.revision is None or number != polish.revision.number:
            raise DomainError("The change was edited after the polish; edit it instead.", field="polish")
        ChangeRevision.objects.create(change=change, number=number + 1, text=polish.source_text, author=reviewer)
        change.refined_text = polish.source_text if polish.source_number else ""
        services.bump_change(change, ["refined_text"])
    polish.status = Polish.Status.ACCEPTED if action == "accept" else Polish.Status.REVERTED
    polish.reviewer = reviewer
    polish.save(update_fields=["status", "reviewer"])
    return polish
