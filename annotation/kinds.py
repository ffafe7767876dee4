"""What a submission of each campaign kind (other than context changes) must contain and what it
creates. Each `submit_*` checks the worker's answer (a dict from the page), raises a DomainError
naming the field and the rule, and returns the ids it wrote for `Assignment.result`."""

from collections import Counter

from benchmarks import overlays, protocols
from benchmarks.importers.causalspatial import parse_options
from benchmarks.models import AnswerFormat, AssetRole, Item, Side, WorldFrame
from core.errors import DomainError

from .checks import check_max_length, check_not_repeating, words
from .families import derived_question_type
from .family_tags import family_tags
from .models import Assignment, Campaign, CrowdAnswer

LETTERS = "ABCDEFGH"
NO_CORRECT_OPTION = "No correct option is listed."
NOT_SURE = "Not sure"
MAX_CHOICES = 7
UNFLIPPED = ("causalspatial", "spatial457")  # families no mirrored-image evaluation reads
# Families whose scorer reads an open answer: the correct choice's text becomes the item's answer.
OPEN_ANSWER_FAMILIES = ("spatial457",)
MAX_ANSWER_WORDS = 10
# Bounds on what a worker types (a pasted page must not reach the review queue): characters.
MAX_QUESTION_CHARS = 300
MAX_ANSWER_CHARS = 100
MAX_CHOICE_CHARS = 200
MAX_FRAME_CHARS = 200


def frame_text(label: str, side: str) -> str:
    """Hypo3D's orientation sentence, generated from the pick; the worker may edit it."""
    return f"The {label} was located at the {side} of the scene."


def _text(answer: dict, key: str, rule: str, what: str, limit: int) -> str:
    value = answer.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DomainError(rule, field=key)
    value = value.strip()
    check_max_length(value, limit, what, key)
    return value


def _question_type(campaign: Campaign, answer: dict, tags: dict | None = None) -> tuple[str | None, list[str]]:
    """The fine question type picked from the campaign's taxonomy and the coarse ones it counts in; a
    campaign without one (the choice families') takes the item's family tag for its question type."""
    if not campaign.question_types:
        return None, derived_question_type(campaign.benchmark.family, tags or {})
    fine = answer.get("question_type")
    if fine not in campaign.question_types:
        raise DomainError(f"Pick a question type from: {', '.join(campaign.question_types)}.", field="question_type")
    return fine, list(campaign.question_types[fine])


def _type_tags(fine: str | None, coarse: list[str]) -> dict:
    return {"question_type": coarse, **({"fine_question_type": fine} if fine else {})}


def _provenance(assignment: Assignment) -> dict:
    return {"source": "crowd", "campaign": assignment.campaign_id, "assignment": assignment.pk}


def submit_world_frame(assignment: Assignment, worker, answer: dict) -> dict:
    """An anchor object (its label unique in the scene, so the frame is unambiguous) and its side."""
    objects = {o.instance_id: o for o in assignment.scene.scene_objects.all()}
    try:
        anchor = objects[int(answer.get("anchor"))]
    except (KeyError, TypeError, ValueError):
        raise DomainError("Pick an anchor object of this scene.", field="anchor") from None
    if Counter(o.label for o in objects.values())[anchor.label] > 1:
        raise DomainError(
            f"There are several objects labelled '{anchor.label}'; pick an anchor whose label occurs once.",
            field="anchor",
        )
    side = answer.get("side")
    if side not in Side.values:
        raise DomainError(f"The side must be one of {', '.join(Side.values)}.", field="side")
    text = (answer.get("text") or "").strip() or frame_text(anchor.label, side)
    check_max_length(text, MAX_FRAME_CHARS, "The frame text")
    lowered = " ".join(words(text))
    if " ".join(words(anchor.label)) not in lowered or side not in lowered.split():
        raise DomainError(f"The frame text must name the {anchor.label} and the {side} side.", field="text")
    frame = WorldFrame.objects.create(scene=assignment.scene, anchor=anchor, side=side, text=text,
                                      status=WorldFrame.Status.SUBMITTED)  # reaches prompts once reviewed
    return {"world_frame": frame.pk}


def submit_question(assignment: Assignment, worker, answer: dict) -> dict:
    """A question on the approved change with a short open answer, tagged with its question type."""
    question = _text(answer, "question", "Write the question.", "A question", MAX_QUESTION_CHARS)
    if not question.endswith("?") or len(words(question)) < 4:
        raise DomainError("A question has at least four words and ends with '?'.", field="question")
    check_not_repeating(question, "question")
    reply = _text(answer, "answer", "Write the answer.", "The answer", MAX_ANSWER_CHARS)
    if len(words(reply)) > MAX_ANSWER_WORDS:
        raise DomainError(f"The answer is a short phrase of at most {MAX_ANSWER_WORDS} words.", field="answer")
    fine, coarse = _question_type(assignment.campaign, answer)
    change = assignment.change
    item = Item.objects.create(
        benchmark=assignment.campaign.benchmark, scene=change.scene, change=change, question=question,
        answers=[reply], answer_format=AnswerFormat.OPEN, author=worker, provenance=_provenance(assignment),
        tags={"change_type": change.change_type, "question_type": coarse, "fine_question_type": fine},
    )
    return {"items": [item.pk]}


def _choices(answer: dict, allowed_counts) -> list[str]:
    choices = answer.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, str) and c.strip() for c in choices):
        raise DomainError("Write every choice.", field="choices")
    choices = [c.strip() for c in choices]
    for choice in choices:
        check_max_length(choice, MAX_CHOICE_CHARS, "A choice", "choices")
    if len(choices) not in allowed_counts:
        allowed = list(allowed_counts)
        counts = f"{allowed[0]} to {allowed[-1]}" if len(allowed) > 2 else " or ".join(map(str, allowed))
        raise DomainError(f"An item here has {counts} choices; this one has {len(choices)}.", field="choices")
    if len({c.lower() for c in choices}) != len(choices):
        raise DomainError("Two choices say the same thing.", field="choices")
    return choices


def _authored_choices(answer: dict) -> tuple[list[str], str | None]:
    """2-7 choices, written one by one or inside the question as the papers do ("Answer by (A) Yes,
    (B) No or (C) Not sure."), and the letter of the "Not sure" choice: the one written, or one added
    last when `not_sure` asks for it."""
    if not answer.get("choices") and isinstance(answer.get("question"), str):
        answer = {**answer, "choices": parse_options(answer["question"])}
    choices = _choices(answer, range(2, MAX_CHOICES + 1))
    not_sure = [i for i, c in enumerate(choices) if c.rstrip(".").lower() == NOT_SURE.lower()]
    if answer.get("not_sure") and not not_sure:
        choices = _choices({"choices": [*choices, NOT_SURE]}, range(3, MAX_CHOICES + 1))
        not_sure = [len(choices) - 1]
    return choices, (LETTERS[not_sure[0]] if not_sure else None)


def checked_choices(choices, correct) -> tuple[list[str], list[str], str | None]:
    """A choice item's choices, its correct letters and the letter of its "Not sure" choice, by the
    authoring rules (a reviewer's edit is held to them too)."""
    choices, not_sure = _authored_choices({"choices": choices})
    return choices, _correct({"correct": correct}, choices, not_sure), not_sure


def _correct(answer: dict, choices: list[str], not_sure: str | None) -> list[str]:
    correct = _letters(answer.get("correct"), choices)
    if not_sure in correct:
        raise DomainError("'Not sure' is never the correct choice.", field="correct")
    return correct


def _letters(correct, choices: list[str], field: str = "correct") -> list[str]:
    letters = LETTERS[: len(choices)]
    if not isinstance(correct, list) or not correct or any(c not in letters for c in correct):
        raise DomainError(f"Mark the chosen choice(s) by letter ({', '.join(letters)}).", field=field)
    return sorted(set(correct))


def _family_tags(assignment: Assignment, answer: dict, not_sure: str | None) -> dict:
    tags = family_tags(assignment.campaign.benchmark.family, answer.get("tags"))
    return {**tags, "not_sure": not_sure} if not_sure else tags


def _flip_decision(answer: dict, family: str) -> str | None:
    """How the item reads on the mirrored image (3DSRBench's FlipEval): `flip` swap / same / none (no
    mirrored copy), or the older `flip_swaps` true / false; families never scored on mirrored images
    may leave it out."""
    flip, swaps = answer.get("flip"), answer.get("flip_swaps")
    if flip in protocols.FLIP_DECISIONS:
        return flip
    if flip in (None, "") and isinstance(swaps, bool):
        return protocols.FLIP_SWAPS if swaps else protocols.FLIP_SAME
    if flip in (None, "") and swaps is None and family in UNFLIPPED:
        return None
    raise DomainError("Say how the answer reads on the mirrored image: swap (left and right exchange), same, "
                      "or none (the item has no mirrored copy).", field="flip_swaps" if flip in (None, "") else "flip")


def submit_choice_on_image(assignment: Assignment, worker, answer: dict) -> dict:
    """3DSRBench and CausalSpatial style: 2-7 choices, one or several correct, an optional "Not sure"
    choice, the family's tags, and whether the answer swaps left/right on the mirrored image
    (3DSRBench's FlipEval needs to know; families never scored on mirrored images may leave it out),
    and the marks drawn on the images (CausalSpatial's motion arrow and start box, bounding boxes)."""
    question = _text(answer, "question", "Write the question.", "A question", MAX_QUESTION_CHARS)
    choices, not_sure = _authored_choices(answer)
    correct = _correct(answer, choices, not_sure)
    family = assignment.campaign.benchmark.family
    flip = _flip_decision(answer, family)
    tags = _family_tags(assignment, answer, not_sure)
    tags = {**_type_tags(*_question_type(assignment.campaign, answer, tags)), **tags}
    if flip:
        tags["flip"] = flip
    # the arrows, start boxes and bounding boxes drawn on the scene's images (benchmarks/overlays.py)
    marks = overlays.validate(answer.get("overlays"), assignment.scene.assets.filter(role=AssetRole.IMAGE).count())
    answer_format = AnswerFormat.MULTI if len(correct) > 1 else AnswerFormat.SINGLE
    if family in OPEN_ANSWER_FAMILIES:  # its paper asks without options and scores the answer's words
        if len(correct) != 1 or not_sure:
            raise DomainError("A Spatial457 item has one correct answer and no 'Not sure'.", field="correct")
        choices, correct, answer_format = [], [choices[LETTERS.index(correct[0])]], AnswerFormat.OPEN
    item = Item.objects.create(
        benchmark=assignment.campaign.benchmark, scene=assignment.scene, question=question, choices=choices,
        answers=correct, answer_format=answer_format,
        author=worker, provenance=_provenance(assignment), tags=tags, overlays=marks,
    )
    return {"items": [item.pk]}


def submit_choice_on_videos(assignment: Assignment, worker, answer: dict) -> dict:
    """M3-Verse style: 2-7 choices, one or several correct, the family's tags; a hallucination item's
    only correct choice is 'No correct option is listed.'"""
    question = _text(answer, "question", "Write the question.", "A question", MAX_QUESTION_CHARS)
    choices, not_sure = _authored_choices(answer)
    correct = _correct(answer, choices, not_sure)
    hallucination = bool(answer.get("hallucination"))
    if hallucination:
        listed = [LETTERS[i] for i, c in enumerate(choices) if c.rstrip(".").lower() == NO_CORRECT_OPTION[:-1].lower()]
        if correct != listed or len(listed) != 1:
            raise DomainError(f"A hallucination item's only correct choice is '{NO_CORRECT_OPTION}'.",
                              field="correct")
    tags = _family_tags(assignment, answer, not_sure)
    item = Item.objects.create(
        benchmark=assignment.campaign.benchmark, scene=assignment.scene, question=question, choices=choices,
        answers=correct, answer_format=AnswerFormat.MULTI if len(correct) > 1 else AnswerFormat.SINGLE,
        author=worker, provenance=_provenance(assignment),
        tags={**_type_tags(*_question_type(assignment.campaign, answer, tags)), "hallucination": hallucination,
              **tags},
    )
    return {"items": [item.pk]}


def submit_answer(assignment: Assignment, worker, answer: dict) -> dict:
    """An independent answer to an existing item, in the item's own format."""
    item = assignment.item
    if item.choices:
        chosen = _letters(answer.get("answer"), item.choices, field="answer")
        if item.answer_format != AnswerFormat.MULTI and len(chosen) != 1:
            raise DomainError("Pick exactly one choice.", field="answer")
        value = chosen
    else:
        value = _text(answer, "answer", "Write your answer.", "The answer", MAX_ANSWER_CHARS)
        if len(words(value)) > MAX_ANSWER_WORDS:
            raise DomainError(f"The answer is a short phrase of at most {MAX_ANSWER_WORDS} words.", field="answer")
    crowd_answer = CrowdAnswer.objects.create(assignment=assignment, item=item, worker=worker, answer=value)
    return {"crowd_answer": crowd_answer.pk}


SUBMITTERS = {
    Campaign.Kind.WORLD_FRAME: submit_world_frame,
    Campaign.Kind.QUESTION_ANSWER: submit_question,
    Campaign.Kind.CHOICE_IMAGE: submit_choice_on_image,
    Campaign.Kind.CHOICE_VIDEO: submit_choice_on_videos,
    Campaign.Kind.ANSWER_ONLY: submit_answer,
}
