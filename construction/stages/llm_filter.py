"""M3-Verse / Hypo3D style language-model filters over a benchmark's draft and approved items.

params: `filter`, `model` (a language model's ModelSpec id), `prompt_version` (a version in
prompts/<filter>.json; the newest one, listed last, by default), and for the repeated filters
`repeats` (K answers per item) and `threshold`.
- vision_free: M3-Verse's vision-free answerability check as the paper words it (v2, its Fig. 15): the
  model sees question, options and answer and replies "Filter out" (dropped) or "Keep". v1 asked a
  blind answer instead and dropped what the scorer counted right.
- ambiguity: the model says whether the question has exactly one correct answer, as JSON
  {"ambiguous": bool, "reason": str}; an ambiguous item is dropped with the model's reason.
- blind_answer: 2-option items only (a blind guess is right half the time): K blind answers; dropped
  when the share right is above `threshold` (above chance, 0.5).
- difficulty: M3-Verse's multimodal difficulty filter: a light model answers K times (with the scene's
  pictures when `visual_input` is given); an item it always answers right is too easy and dropped.
Every verdict is a filtering decision whose note starts with the filter, prompt version and model,
so a re-run asks only about items not judged that way yet (or edited since). Models are reached
through modeleval.services only."""

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template

import scoring
from benchmarks.models import AnswerFormat, Item
from benchmarks.services import gold_row
from core.errors import DomainError
from core.validation import whole_number
from modeleval import services as modeleval_services
from review import selectors as review_selectors
from review import services as review_services
from scoring.engine import get_family

PROMPTS = Path(__file__).resolve().parent / "prompts"
FILTERS = ("vision_free", "ambiguity", "blind_answer", "difficulty")
REPEATED = ("blind_answer", "difficulty")  # K answers each
VERDICT = re.compile(r"\b(filter out|keep)\b", re.IGNORECASE)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@dataclass(frozen=True)
class Prompt:
    name: str  # "ambiguity/v1": what the report and each decision record
    template: Template
    decision: str = "scored"  # "scored": the family's scorer judges the reply; "verdict": Keep / Filter out


@cache
def prompt_versions(filter_name: str) -> dict[str, dict]:
    return json.loads((PROMPTS / f"{filter_name}.json").read_text(encoding="utf-8"))


def prompt_for(filter_name: str, version: str | None) -> Prompt:
    versions = prompt_versions(filter_name)
    version = version or list(versions)[-1]
    if version not in versions:
        raise DomainError(f"The {filter_name} prompt has versions {', '.join(versions)}.", field="prompt_version")
    entry = versions[version]
    return Prompt(f"{filter_name}/{version}", Template(entry["template"]), entry.get("decision", "scored"))


@dataclass(frozen=True)
class Params:
    filter: str
    model: object  # modeleval's ModelSpec, found through modeleval.services
    prompt: Prompt
    repeats: int = 1
    threshold: float = 1.0
    visual_input: str = ""

    @property
    def stamp(self) -> str:
        """What a decision's note starts with: the same judgement asked again is not asked twice."""
        repeated = f", {self.repeats} answers" if self.filter in REPEATED else ""
        above = f" above {self.threshold:g}" if self.filter == "blind_answer" else ""
        return f"{self.prompt.name}, model #{self.model.pk}{repeated}{above}"


def checked_params(params: dict) -> Params:
    params = params or {}
    if params.get("filter") not in FILTERS:
        raise DomainError(f"The filter is one of {', '.join(FILTERS)}.", field="filter")
    version = params.get("prompt_version")
    if version is not None and not isinstance(version, str):
        raise DomainError("The prompt version is a name such as v1.", field="prompt_version")
    prompt = prompt_for(params["filter"], version)
    repeats = whole_number(params.get("repeats", 5 if params["filter"] in REPEATED else 1), "repeats", 1, 20)
    threshold = params.get("threshold", 0.8)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0.5 < threshold <= 1:
        raise DomainError("The threshold is a share above chance: more than 0.5, at most 1.", field="threshold")
    visual_input = params.get("visual_input") or ""
    if not isinstance(visual_input, str):
        raise DomainError("A visual input such as video_frames.", field="visual_input")
    return Params(params["filter"], modeleval_services.language_model(params.get("model")), prompt,
                  repeats, float(threshold), visual_input)


def _letter(index: int) -> str:
    return chr(ord("A") + index)


def options_text(item: Item) -> str:
    return "\n".join(f"{_letter(i)}. {c}" for i, c in enumerate(item.choices)) or "(none)"


def answer_text(item: Item) -> str:
    if item.answer_format == AnswerFormat.OPEN:
        return " / ".join(item.answers)
    texts = {_letter(i): c for i, c in enumerate(item.choices)}
    return ", ".join(f"{letter}. {texts.get(letter, '')}".strip() for letter in item.answers)


def prompt_text(prompt: Prompt, item: Item) -> str:
    # safe_substitute: a "$" in a question is text, not a placeholder
    return prompt.template.safe_substitute(question=item.question, options=options_text(item),
                                           answer=answer_text(item))


def answered_right(family: str, item: Item, output: str) -> bool:
    """Whether the benchmark's own scorer counts `output` as the right answer to `item`."""
    gold = gold_row(item)
    result = scoring.score(family, [gold], [{"id": gold["id"], "output": output}], sbert=False)
    return result["overall"].get(get_family(family).primary_metric) == 100.0


def ambiguity_verdict(reply: str) -> tuple[bool, str] | None:
    """(ambiguous, reason) from the model's JSON, fenced or not; None when the reply is not that JSON."""
    found = _JSON_OBJECT.search(reply or "")
    try:
        verdict = json.loads(found.group(0)) if found else None
    except json.JSONDecodeError:
        return None
    if not isinstance(verdict, dict) or not isinstance(verdict.get("ambiguous"), bool):
        return None
    reason = verdict.get("reason")
    return verdict["ambiguous"], reason.strip() if isinstance(reason, str) else ""


def _entry(item: Item, **extra) -> dict:
    return {"item": item.pk, "id": item.scoring_id, **extra}


def _to_judge(benchmark, stamp: str) -> tuple[list[Item], int]:
    """(the draft and approved items not judged under `stamp` yet, how many were). An item a reviewer
    approved again after a drop counts as judged: the filter does not overrule the person."""
    items = Item.objects.filter(benchmark=benchmark, status__in=[Item.Status.DRAFT, Item.Status.APPROVED])
    judged = review_selectors.stage_judged(items, stamp)
    return [item for item in items.order_by("pk") if item.pk not in judged], len(judged)


def _pictures(params: Params, item: Item) -> list[bytes]:
    if not (params.visual_input and item.scene_id):
        return []
    return modeleval_services.scene_pictures(params.model, item.scene, params.visual_input)


def _repeated(params: Params, family: str, item: Item, report: dict) -> tuple[bool, str]:
    """K answers, each scored: blind_answer drops above the threshold, difficulty when always right."""
    prompt, pictures = prompt_text(params.prompt, item), _pictures(params, item)
    right = sum(answered_right(family, item, modeleval_services.complete(params.model, prompt, pictures))
                for _ in range(params.repeats))
    report["answers"] = report.get("answers", 0) + params.repeats
    if params.filter == "difficulty":
        drop = right == params.repeats
        return drop, f"too easy: answered right {right} of {params.repeats} times" if drop else ""
    drop = right / params.repeats > params.threshold
    return drop, f"answered right without vision {right} of {params.repeats} times" if drop else ""


def _judge(params: Params, family: str, item: Item, report: dict) -> tuple[bool, str] | None:
    """(drop, reason) from the model's reply; None, noted in the report, when there is no verdict."""
    scored = params.prompt.decision == "scored"
    if scored and not item.answers:
        report["skipped"].append(_entry(item, reason="no gold answer to score against"))
        return None
    if params.filter == "blind_answer" and len(item.choices) != 2:
        report["skipped"].append(_entry(item, reason="blind answering judges 2-option items only"))
        return None
    report["asked"] += 1
    if params.filter in REPEATED:
        return _repeated(params, family, item, report)
    reply = modeleval_services.complete(params.model, prompt_text(params.prompt, item))
    if params.filter == "vision_free" and scored:
        right = answered_right(family, item, reply)
        return right, f"answered right without vision: {reply.strip()[:200]}" if right else ""
    if params.filter == "vision_free":
        said = VERDICT.findall(reply or "")
        if len({word.lower() for word in said}) != 1:
            report["undecided"].append(_entry(item, reply=reply[:500]))
            return None
        drop = said[0].lower() == "filter out"
        return drop, "answerable without visual information (the model said Filter out)" if drop else ""
    verdict = ambiguity_verdict(reply)
    if verdict is None:
        report["undecided"].append(_entry(item, reply=reply[:500]))
        return None
    return verdict[0], f"ambiguous: {verdict[1] or 'no reason given'}" if verdict[0] else ""


def llm_filter_stage(stage, progress) -> dict:
    params = checked_params(stage.params)
    stamp = params.stamp
    items, already = _to_judge(stage.benchmark, stamp)
    report = {"stage": "llm_filter", "filter": params.filter, "prompt_version": params.prompt.name,
              "model": {"id": params.model.pk, "name": params.model.name}, "already_judged": already,
              "asked": 0, "kept": 0, "dropped": [], "undecided": [], "skipped": [], "changed": []}
    progress(0, len(items), f"{len(items)} items to ask {params.model.name}")
    for done, item in enumerate(items, start=1):
        verdict = _judge(params, stage.benchmark.family, item, report)
        if verdict is not None:
            drop, reason = verdict
            note = f"{stamp}: {reason if drop else 'kept'}"
            criteria = [params.filter] if drop else []
            if review_services.stage_verdict(item.pk, item.version, drop=drop, note=note, criteria=criteria) is None:
                report["changed"].append(_entry(item))  # edited while the model answered: asked again next run
            elif drop:
                report["dropped"].append(_entry(item, reason=reason))
            else:
                report["kept"] += 1
        progress(done, len(items), f"{len(report['dropped'])} dropped")
    return report
