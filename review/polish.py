"""Optional grammar pass (Hypo3D polished the final texts after deduplication): a language model
corrects each approved change, question and open answer of a benchmark through modeleval's adapter.
A change's correction is a new revision that a reviewer accepts or reverts (a Polish); an item's is a
new item revision noted POLISH_NOTE, which a reviewer sees in the item's history and edits back if
need be. A pass over a benchmark is one core.Job ("polish"): its task polishes batch after batch,
reports each, and stops between batches when the job is cancelled."""

import uuid

from django.db import transaction
from django.db.models import Max, Q

from benchmarks.models import AnswerFormat, Benchmark, ContextChange, Item
from core.errors import DomainError
from core.jobs import advance_job, finish_job, job_cancelled, request_job, running_job
from core.models import Job
from core.sql import hold, locked
from modeleval import services as modeleval_services

from . import dispatch, services
from .models import ChangeRevision, ItemRevision, Polish

POLISH_BATCH = 50  # changes (or items) per progress step
INSTRUCTION = (
    "Correct the grammar, spelling and punctuation of this {what}. "
    "Keep its meaning, the objects and their positions; change nothing else. "
    "Reply with the corrected text only.\n\n{text}"
)
PROMPT = INSTRUCTION.replace("{what}", "description of a change to a 3D scene")
QUESTION_PROMPT = INSTRUCTION.replace("{what}", "question about a 3D scene")
ANSWER_PROMPT = INSTRUCTION.replace("{what}", "answer to a question about a 3D scene")
POLISH_NOTE = "grammar pass"  # an item revision the pass wrote starts with it


def _batches(ids: list[int]) -> list[list[int]]:
    return [ids[i:i + POLISH_BATCH] for i in range(0, len(ids), POLISH_BATCH)]


def running_passes(benchmark: Benchmark | None = None):
    """The grammar passes (their jobs) queued or running, of one benchmark or all, newest first."""
    passes = Job.objects.filter(kind="polish", status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
    if benchmark is not None:
        passes = passes.filter(key__startswith=f"polish:{benchmark.pk}:")
    return passes.order_by("-created_at")


@transaction.atomic
def start_polish(benchmark: Benchmark, model_id, created_by) -> Job:
    """Queue a pass over the approved changes and items of a benchmark as one job, sent once committed;
    while a pass over it is queued or running, that one is returned and no second starts."""
    model = modeleval_services.language_model(model_id)
    hold(f"polish-start:{benchmark.pk}")  # two starts at once: the second waits and finds the first's job
    if running := running_passes(benchmark).first():
        return running
    change_ids = list(ContextChange.objects.filter(scene__benchmark=benchmark, status=ContextChange.Status.APPROVED)
                      .order_by("pk").values_list("pk", flat=True))
    item_ids = list(Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED)
                    .order_by("pk").values_list("pk", flat=True))
    if not change_ids and not item_ids:
        raise DomainError("This benchmark has no approved changes or questions to polish.", field="benchmark")

    job = request_job("polish", f"polish:{benchmark.pk}:{uuid.uuid4().hex}", subject=f"Grammar pass: {benchmark.name}",
                      total=len(change_ids) + len(item_ids), user=created_by).job
    transaction.on_commit(lambda: dispatch.send_polish(job.pk, change_ids, item_ids, model.pk))
    return job


def run_polish(job_id: int, change_ids: list[int], item_ids: list[int], model_id: int) -> None:
    """The pass as its job: a batch at a time, each reported; stops between batches once cancelled.
    Idempotent like the batches: a redelivered message of a job that ran or runs does nothing."""
    with running_job(job_id, message="Polishing changes") as job:
        if job is None:
            return
        polished = {"changes": 0, "items": 0}
        steps = [("changes", polish_changes, batch) for batch in _batches(change_ids)]
        steps += [("items", polish_items, batch) for batch in _batches(item_ids)]
        for what, polish_batch, batch in steps:
            if job_cancelled(job_id):
                return
            polished[what] += polish_batch(batch, model_id)
            advance_job(job_id, step=len(batch), message=f"Polishing {what}")
        finish_job(job_id, {"polished": polished}, message=f"{sum(polished.values())} texts polished")


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
                services.bump(locked, ["refined_text"])
            polish.save()
            polished += 1
    return polished


def _item_already_polished(item: Item) -> bool:
    """The item's current content was written by the pass, or is a text the pass polished before (a
    reviewer edited it back): asking the model again would only repeat itself."""
    revisions = {r.number: r for r in ItemRevision.objects.filter(item=item)}
    latest = revisions.get(max(revisions, default=0))
    if latest is not None and latest.note.startswith(POLISH_NOTE):
        return True
    current = (item.question, item.answers)
    return any(r.note.startswith(POLISH_NOTE) and number - 1 in revisions
               and (revisions[number - 1].question, revisions[number - 1].answers) == current
               for number, r in revisions.items())


def _polished(model, prompt: str, text: str) -> str:
    """The model's correction of one text, or the text itself when the correction is implausible."""
    return cleaned(modeleval_services.complete(model, prompt.format(text=text)), text) or text


def polish_items(item_ids: list[int], model_id: int) -> int:
    """Polish each item's question and open answers once (a choice item's answers are letters);
    returns how many items were changed now. Idempotent like `polish_changes`: an item the pass wrote
    or polished before is skipped, and one edited while the model was answering is left for later."""
    model = modeleval_services.language_model(model_id)
    polished = 0
    for item in Item.objects.filter(pk__in=item_ids).order_by("pk"):
        if _item_already_polished(item):
            continue
        question = _polished(model, QUESTION_PROMPT, item.question)
        answers = item.answers
        if item.answer_format == AnswerFormat.OPEN:
            answers = [_polished(model, ANSWER_PROMPT, a) if any(c.isalpha() for c in str(a)) else a for a in answers]
        with transaction.atomic():  # the model calls stay outside: no lock is held while it answers
            locked = Item.objects.select_for_update().get(pk=item.pk)
            if locked.version != item.version or (question, answers) == (locked.question, locked.answers):
                continue
            services.save_item_content(locked, None, question, answers, locked.tags,
                                       note=f"{POLISH_NOTE} (model: {model.name})"[:200])
            polished += 1
    return polished


@transaction.atomic
def review_polish(polish_id: int, reviewer, action: str, expected_version) -> Polish:
    """accept keeps the model's text; revert restores the text before it as a new revision."""
    polish = locked(Polish, polish_id, "polish")
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
        services.bump(change, ["refined_text"])
    polish.status = Polish.Status.ACCEPTED if action == "accept" else Polish.Status.REVERTED
    polish.reviewer = reviewer
    polish.save(update_fields=["status", "reviewer"])
    return polish
