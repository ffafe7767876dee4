"""Model-drafted raw items: a prompt template filled with a scene's objects (and an approved change
for questions) goes to a registered model with the pictures the family's paper sent (Hypo3D: the
semantic top-view map; M3-Verse: frames of the before and after videos); its JSON output becomes raw
changes or draft items marked as model-made, which enter the same review queue as crowd work.
Question drafts may come without answers (Hypo3D's Fig. 8/9 shape: questions keyed by change); a
reviewer gives the answer when approving. One keyed DraftRequest per (template, model, scene,
change), so a retried task never drafts twice; each runs as its core.Job ("drafting"), whose status
and message are the request's: cancelled, the request writes nothing."""

import json
import re
from collections import Counter
from pathlib import Path

from django.db import transaction

from benchmarks.models import AnswerFormat, ContextChange, Family, Item, Scene
from core.errors import DomainError
from core.jobs import fail_job, finish_job, request_job, start_job
from core.models import Job
from core.sending import send
from modeleval import services as modeleval_services
from scoring.engine import get_family

from .models import DraftingPrompt, DraftRequest

JSON_BLOCK = re.compile(r"(\[.*\]|\{.*\})", re.DOTALL)
NUMBERED_LINE = re.compile(r"^\s*(?:\d+[.)]|[-*])\s+(.+)$", re.MULTILINE)
HYPO3D = get_family("hypo3d")  # drafted questions are tagged with its fine and coarse question types
# What each paper's drafting model was shown; other families draft from text alone.
DRAFTING_INPUTS = {Family.HYPO3D: "top_view_semantic", Family.M3VERSE: "video_frames"}
PAPER_PROMPTS = Path(__file__).with_name("prompts")
# The paper's own drafting templates (Hypo3D Figs. 7-9), shipped verbatim as the default templates:
# (name, file, target, change type, fine question type, count asked for).
DEFAULT_PROMPTS = (
    ("Hypo3D Fig. 7: addition changes", "hypo3d/fig7_addition_changes.txt", DraftingPrompt.Target.CHANGES,
     "addition", "", 4),
    ("Hypo3D Fig. 8: proximity questions", "hypo3d/fig8_proximity_questions.txt", DraftingPrompt.Target.QUESTIONS,
     "addition", "Proximity", 3),
    ("Hypo3D Fig. 9: relative position questions", "hypo3d/fig9_relative_position_questions.txt",
     DraftingPrompt.Target.QUESTIONS, "movement", "Relative Position", 3),
)
# Figs. 8 and 9 leave two unnamed slots, "Object List for Question Generation {} Context Changes for
# Question Generation {}": filled in that order.
POSITIONAL = ("object_list", "change")


def paper_prompt(path: str) -> str:
    return (PAPER_PROMPTS / path).read_text(encoding="utf-8").rstrip("\n")


def ensure_default_prompts() -> None:
    """The paper's templates as DraftingPrompt rows (an edited or switched-off row is left as it is)."""
    for name, path, target, change_type, question_type, count in DEFAULT_PROMPTS:
        DraftingPrompt.objects.get_or_create(name=name, defaults={
            "target": target, "change_type": change_type, "question_type": question_type,
            "text": paper_prompt(path), "count": count})


def object_counts(scene: Scene) -> str:
    """The scene's objects with their counts as the paper lists them: "1 desk, 4 trash can"."""
    counts = Counter(scene.scene_objects.values_list("label", flat=True))
    return ", ".join(f"{n} {label}" for label, n in sorted(counts.items()))


def build_prompt(template: DraftingPrompt, scene: Scene, change: ContextChange | None) -> str:
    objects = object_counts(scene)
    values = {
        "objects": objects, "object_list": f"This scene contains {objects}.", "caption": scene.caption,
        "change": change.text if change else "",
        "change_type": change.change_type if change else template.change_type,
        "question_type": template.question_type, "count": template.count, "examples": template.examples,
    }
    slots = iter(POSITIONAL)

    def fill(match):
        name = match.group(1) or next(slots, None)
        return str(values[name]) if name in values else match.group(0)

    return re.sub(r"\{(\w*)\}", fill, template.text)


def drafting_images(model, scene: Scene) -> list[bytes]:
    """The pictures sent with a draft request for this scene; LookupError when the scene lacks them."""
    shown = DRAFTING_INPUTS.get(scene.benchmark.family)
    return modeleval_services.scene_pictures(model, scene, shown) if shown else []


def _questions(data) -> list[dict]:
    """Question drafts from any of the accepted shapes: a list of {"question", "answer"?} or of
    question strings, or a mapping from each change to such a list (Hypo3D's output keyed by change)."""
    if isinstance(data, dict):
        return [draft for value in data.values() for draft in _questions(value)]
    drafts = []
    for entry in data if isinstance(data, list) else []:
        if isinstance(entry, str):
            entry = {"question": entry}
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("question"), str) and entry["question"].strip():
            answer = entry.get("answer")
            drafts.append({"question": entry["question"].strip(),
                           "answers": [str(answer).strip()] if answer not in (None, "") else []})
        elif "questions" in entry:
            drafts += _questions(entry["questions"])
    return drafts


def parse_output(text: str, target: str) -> list:
    """Changes: a JSON list of strings (or {"changes": [...]}, or numbered lines). Questions: see
    `_questions` (or {"questions": ...} around it); answers are optional. Anything else is refused."""
    match = JSON_BLOCK.search(text or "")
    data = None
    if match:
        try:
            data = json.loads(match.group(1))
        except json.JSONDecodeError:
            data = None
    if isinstance(data, dict) and target in data:
        data = data[target]
    if target == DraftingPrompt.Target.CHANGES:
        if isinstance(data, dict):
            data = None
        if data is None:
            data = NUMBERED_LINE.findall(text or "")
        drafts = [d.strip() for d in data or [] if isinstance(d, str) and d.strip()]
    else:
        drafts = _questions(data)
    if not drafts:
        raise DomainError(f"The model's output holds no {target} in the expected JSON form.", field="output")
    return drafts


def draft_job(request: DraftRequest, user=None) -> Job:
    """The request's job (linked to it; one per request, so a redelivered task finds it)."""
    if request.job_id is None:
        target = request.change.text[:80] if request.change_id else request.scene.external_id
        request.job = request_job("drafting", f"draft:{request.pk}", subject=f"{request.template.name}: {target}"[:200],
                                  total=1, user=user).job
        request.save(update_fields=["job"])
    return request.job


@transaction.atomic
def request_drafts(template: DraftingPrompt, model, scenes=(), changes=(), user=None) -> list[DraftRequest]:
    """Queue one keyed request per target, each its job; targets already requested are not asked again."""
    if not template.is_active:
        raise DomainError("This template is switched off.", field="template")
    if template.target == DraftingPrompt.Target.CHANGES:
        targets = [(scene, None) for scene in scenes]
    else:
        targets = [(change.scene, change) for change in changes if change.status == ContextChange.Status.APPROVED]
    if not targets:
        raise DomainError("Pick scenes for change templates, approved changes for question templates.",
                          field="targets")
    requests = []
    for scene, change in targets:
        request, created = DraftRequest.objects.get_or_create(template=template, model=model, scene=scene,
                                                              change=change)
        requests.append(request)
        if created:
            job = draft_job(request, user)
            transaction.on_commit(lambda pk=request.pk, job_id=job.pk: send("annotation.tasks.run_draft_request", pk, job_id))
    return requests


def _running(job_id: int, lock: bool = False) -> bool:
    """Is the request's job still running (not cancelled, not ended by another delivery)? Locked, a
    cancel waits until what is being written is written (and then finds the job ended)."""
    jobs = Job.objects.select_for_update() if lock else Job.objects
    return jobs.filter(pk=job_id, status=Job.Status.RUNNING).values_list("pk", flat=True).first() is not None


def run_draft_request(request_id: int) -> DraftRequest:
    """Call the model once and write its drafts, as the request's job: a queued job is started here (or
    by its task's running_job); one done, cancelled or failed is left as it is (asking for a failed one
    again queues it). A failed call or output fails the job with the reason and writes nothing."""
    request = DraftRequest.objects.select_related("template", "model", "scene__benchmark",
                                                                 "change").get(pk=request_id)
    job_id = draft_job(request).pk
    start_job(job_id, message="Asking the model")  # None: its task's running_job started it, or it ended
    if not _running(job_id):
        return _with_job(request)
    template, prompt = request.template, ""
    try:
        prompt = build_prompt(template, request.scene, request.change)
        output = modeleval_services.complete(request.model, prompt, drafting_images(request.model, request.scene))
        drafts = parse_output(output, template.target)
    except Exception as exc:  # the endpoint or the output failed: record it for the admin, write nothing
        DraftRequest.objects.filter(pk=request.pk).update(prompt=prompt)
        fail_job(job_id, str(exc))
        return _with_job(request)
    with transaction.atomic():
        request = DraftRequest.objects.select_for_update().get(pk=request.pk)
        if not _running(job_id, lock=True):  # a concurrent delivery wrote it, or it was cancelled meanwhile
            return _with_job(request)
        provenance = {"source": "model", "model": request.model.name, "template": template.pk,
                      "draft_request": request.pk}
        if template.target == DraftingPrompt.Target.CHANGES:
            rows = ContextChange.objects.bulk_create([
                ContextChange(scene=request.scene, change_type=template.change_type, raw_text=text,
                              provenance=provenance)
                for text in drafts
            ])
            request.created = {"changes": [row.pk for row in rows]}
        else:
            change = request.change
            rows = Item.objects.bulk_create([
                Item(benchmark=request.scene.benchmark, scene=request.scene, change=change,
                     question=draft["question"], answers=draft["answers"], answer_format=AnswerFormat.OPEN,
                     provenance=provenance,
                     tags={"change_type": change.change_type, "fine_question_type": template.question_type,
                           "question_type": list(HYPO3D.fine_question_types.get(template.question_type, ()))})
                for draft in drafts
            ])
            request.created = {"items": [row.pk for row in rows]}
        request.prompt, request.output = prompt, output
        request.save(update_fields=["prompt", "output", "created"])
        finish_job(job_id, {kind: len(ids) for kind, ids in request.created.items()})
    return _with_job(request)


def _with_job(request: DraftRequest) -> DraftRequest:
    """The request as it now is, with its job (its status, message, report)."""
    return DraftRequest.objects.select_related("template", "model", "scene", "change", "job").get(pk=request.pk)
