"""A study's design: the options it is created with (StudyDesign, checked here and only here), the
stratified sample, familiarisation and attention checks drawn from approved items, what may change
once it runs, and who may take it (no one who wrote, reviewed or answered its items before)."""

import random
import secrets
from collections import Counter
from dataclasses import dataclass, field, fields
from functools import reduce
from operator import or_

from django.db import transaction
from django.db.models import Exists, OuterRef

from benchmarks import protocols
from benchmarks.models import AssetRole, Benchmark, Item
from core.errors import DomainError
from core.sql import locked
from core.validation import whole_number

from ..models import ItemRole, Study, StudyItem
from . import stimuli

MAX_STUDY_TEXT_CHARS = 20_000
# Participants imagine each change on the scene before it (the papers'), or see its after-state
SCENE_STATES = ("imagined", "changed")


def _number(default: int | None, low: int, high: int) -> int | None:
    """A whole-number option and its bounds; a None default makes it optional (blank is None)."""
    return field(default=default, metadata={"bounds": (low, high)})


@dataclass(frozen=True)
class StudyDesign:
    """Everything a study is created with, listed once: the API's serializer and the page's form are
    built from these fields, and every value is checked when the design is made (a refusal is a
    DomainError naming the field). Numbers may come as text (a form's) and ids as any sequence; they
    are kept as checked ints and tuples."""

    name: str
    # the scored items, or with `stratify_by` the pool `per_stratum` items of each tag value are drawn from
    items: tuple[int, ...]
    seconds_per_item: int = _number(120, 5, 3600)
    seconds_per_session: int = _number(1800, 5, 24 * 3600)
    stratify_by: str = ""
    per_stratum: int | None = _number(None, 1, 10_000)  # asked for, and kept, only with stratify_by
    seed: int | None = _number(None, 0, 2**62)  # None: a fresh one is drawn when the study is created
    familiarisation_count: int = _number(0, 0, 100)
    attention_ids: tuple[int, ...] = ()
    attention_failures_allowed: int = _number(0, 0, 100)
    participants_per_item: int = _number(3, 1, 1000)
    items_per_session: int | None = _number(None, 1, 10_000)
    allow_going_back: bool = False
    shuffle_items: bool = False
    shuffle_choices: bool = True
    offer_not_sure: bool = False
    circular_variants: bool = False
    flip_images: bool = False
    scene_state: str = "imagined"
    instructions: str = ""
    consent_text: str = ""

    def __post_init__(self):
        checked = {"name": study_name(self.name)}
        for option in fields(self):
            value = getattr(self, option.name)
            if "bounds" in option.metadata and option.name != "per_stratum":
                low, high = option.metadata["bounds"]
                value = whole_number(value, option.name, low, high, optional=option.default is None)
            elif option.type is bool:
                value = bool(value)
            elif option.name == "scene_state":
                if value not in SCENE_STATES:
                    raise DomainError("scene_state is imagined or changed.", field="scene_state")
            elif option.type is str and option.name != "name":
                value = study_text(value, option.name)
            checked.setdefault(option.name, value)
        if checked["seconds_per_session"] < checked["seconds_per_item"]:
            raise DomainError("A session must last at least one item's time.", field="seconds_per_session")
        checked["items"], checked["attention_ids"] = _ids(self.items, "items"), _ids(self.attention_ids, "attention_ids")
        checked["per_stratum"] = (
            whole_number(self.per_stratum, "per_stratum", 1, 10_000) if checked["stratify_by"] else None
        )
        for name, value in checked.items():
            object.__setattr__(self, name, value)  # frozen: set once, here


def study_name(name) -> str:
    name = study_text(name, "name")
    if not name:
        raise DomainError("Give the study a name.", field="name")
    return name


def study_text(value, field: str) -> str:
    """A name, instructions, consent statement or stratifying tag: stripped, and no longer than the
    study's column holds."""
    value = (value or "").strip()
    limit = Study._meta.get_field(field).max_length or MAX_STUDY_TEXT_CHARS
    if len(value) > limit:
        raise DomainError(f"At most {limit} characters.", field=field)
    return value


def _ids(values, field: str) -> tuple[int, ...]:
    try:
        return tuple(sorted({int(value) for value in values or ()}))
    except (TypeError, ValueError):
        raise DomainError("Item ids are whole numbers.", field=field) from None


# --- creating a study ----------------------------------------------------------------------------


def stratum_label(value) -> str | None:
    """The stratum an item's tag value puts it in; a list (several question types) is one stratum."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, list):
        return "+".join(sorted(map(str, value)))
    return str(value)


def stratified_sample(
    tagged_ids: list[tuple[int, object]], per_stratum: int, seed: int
) -> list[tuple[int, str]]:
    """`per_stratum` item ids drawn from every stratum, reproducible from the seed: the same pool and
    seed always give the same sample. Items without the tag are in no stratum."""
    strata: dict[str, list[int]] = {}
    for item_id, value in sorted(tagged_ids, key=lambda pair: pair[0]):
        label = stratum_label(value)
        if label is not None:
            strata.setdefault(label, []).append(item_id)
    if not strata:
        raise DomainError("No item of the pool has this tag.", field="stratify_by")
    rng = random.Random(seed)
    sample = []
    for label in sorted(strata):
        if len(strata[label]) < per_stratum:
            raise DomainError(
                f"Stratum '{label}' has only {len(strata[label])} items; asked for {per_stratum}.",
                field="per_stratum",
            )
        sample += [(item_id, label) for item_id in sorted(rng.sample(strata[label], per_stratum))]
    return sample


def _approved_items(benchmark: Benchmark, item_ids: tuple[int, ...], field: str) -> list[Item]:
    items = list(Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED, pk__in=item_ids))
    missing = set(item_ids) - {i.pk for i in items}
    if missing:
        raise DomainError(f"Not approved items of this benchmark: {sorted(missing)}.", field=field)
    return items


@transaction.atomic
def create_study(benchmark: Benchmark, design: StudyDesign, created_by) -> Study:
    """A study over approved items of the benchmark, as designed. Familiarisation items are drawn
    from the benchmark's other approved items; attention checks are named. Draws use the design's
    seed (a fresh one when it has none), which is recorded."""
    seed = secrets.randbelow(2**31) if design.seed is None else design.seed
    attention = _approved_items(benchmark, design.attention_ids, "attention_ids")
    attention_pks = {i.pk for i in attention}
    pool = [i for i in _approved_items(benchmark, design.items, "items") if i.pk not in attention_pks]
    if not pool:
        raise DomainError("Pick at least one approved item of this benchmark.", field="items")
    if design.stratify_by:
        tagged = [(i.pk, i.tags.get(design.stratify_by)) for i in pool]
        scored = stratified_sample(tagged, design.per_stratum, seed)
    else:
        scored = [(i.pk, "") for i in sorted(pool, key=lambda i: i.pk)]
    if design.flip_images:  # FlipEval for humans, as for runs (modeleval.runs.run_options): no item silently vanilla
        tags = {i.pk: i.tags for i in pool}
        undecided = protocols.undecided_flips((pk, tags[pk]) for pk, _ in scored)
        if undecided:
            raise DomainError(f"Mirrored images need each item's flip decision (swap, same or none): "
                              f"{len(undecided)} of the {len(scored)} scored items have none (e.g. item "
                              f"#{undecided[0]}).", field="flip_images")
    if design.scene_state == "changed":  # every item's page shows its change's after-state (stimuli)
        stimuli.check_after_states([pk for pk, _ in scored], [i.pk for i in attention])
    if design.items_per_session and design.items_per_session > len(scored):
        raise DomainError(f"The study has only {len(scored)} scored items.", field="items_per_session")

    taken = attention_pks | {pk for pk, _ in scored}
    # Practice gives its answers as feedback: never an item this or any other study of the benchmark grades.
    graded = StudyItem.objects.filter(study__benchmark=benchmark, role__in=[ItemRole.SCORED, ItemRole.ATTENTION])
    spare = sorted(
        Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED)
        .exclude(pk__in=taken)
        .exclude(pk__in=graded.values("item_id"))
        .values_list("pk", flat=True)
    )
    if design.scene_state == "changed":  # practice on changed scenes too
        spare = stimuli.with_after_state(spare)
    if design.familiarisation_count > len(spare):
        raise DomainError(
            f"Only {len(spare)} approved items are left outside the sample for familiarisation.",
            field="familiarisation_count",
        )
    familiarisation = sorted(random.Random(f"{seed}:familiarisation").sample(spare, design.familiarisation_count))

    # The model's fields carry the design's names; the item lists become the study's entries below.
    options = {option.name: getattr(design, option.name) for option in fields(design)}
    for drawn in ("items", "attention_ids", "familiarisation_count", "seed"):
        del options[drawn]
    study = Study.objects.create(benchmark=benchmark, created_by=created_by, sample_seed=seed, **options)
    if study.flip_images:
        _store_flipped_images([pk for pk, _ in scored])
    entries = [(pk, ItemRole.FAMILIARISATION, "") for pk in familiarisation]
    entries += [(pk, ItemRole.SCORED, stratum) for pk, stratum in scored]
    entries += [(i.pk, ItemRole.ATTENTION, "") for i in sorted(attention, key=lambda i: i.pk)]
    StudyItem.objects.bulk_create(
        StudyItem(study=study, item_id=pk, role=role, stratum=stratum, position=position)
        for position, (pk, role, stratum) in enumerate(entries)
    )
    return study


def _store_flipped_images(item_ids: list[int]) -> None:
    """Mirrored twins of the images of every flip-tagged item, so participants' pages can show them."""
    items = Item.objects.filter(pk__in=item_ids).exclude(scene=None).select_related("scene")
    scenes = {item.scene for item in items if protocols.flip_rule(item.tags)}
    for scene in scenes:
        for asset in scene.assets.filter(role=AssetRole.IMAGE):
            protocols.ensure_flipped_twin(asset)


@transaction.atomic
def update_study(study_id: int, name: str, instructions: str = "", consent_text: str = "", is_open=True) -> Study:
    """What may change once a study exists: its name, the texts participants read first, and whether
    it takes new participants. The sample and the timing are the design, fixed at creation."""
    study = locked(Study, study_id, "study")
    study.name = study_name(name)
    study.instructions = study_text(instructions, "instructions")
    study.consent_text = study_text(consent_text, "consent_text")
    study.is_open = bool(is_open)
    study.save(update_fields=["name", "instructions", "consent_text", "is_open"])
    return study


def study_design(study: Study) -> dict:
    """The design as recorded, for the admin and the export."""
    entries = StudyItem.objects.filter(study=study)
    roles = Counter(entries.values_list("role", flat=True))
    return {
        "seed": study.sample_seed,
        "stratify_by": study.stratify_by or None,
        "per_stratum": study.per_stratum,
        "strata": dict(
            Counter(
                entries.filter(role=ItemRole.SCORED).exclude(stratum="").values_list("stratum", flat=True)
            )
        ),
        "scored_items": roles[ItemRole.SCORED],
        "familiarisation_items": roles[ItemRole.FAMILIARISATION],
        "attention_items": roles[ItemRole.ATTENTION],
        "attention_failures_allowed": study.attention_failures_allowed,
        "participants_per_item": study.participants_per_item,
        "items_per_session": study.items_per_session,
        "seconds_per_item": study.seconds_per_item,
        "seconds_per_session": study.seconds_per_session,
        "allow_going_back": study.allow_going_back,
        "shuffle_items": study.shuffle_items,
        "shuffle_choices": study.shuffle_choices,
        "offer_not_sure": study.offer_not_sure,
        "circular_variants": study.circular_variants,
        "flip_images": study.flip_images,
        "scene_state": study.scene_state,
    }


# --- eligibility ---------------------------------------------------------------------------------

# Who has seen an item's answer before the study, as paths from the item: its author, revisers and
# reviewers, whoever answered it for consensus (a reviewer's independent answer or an answer-only
# campaign's crowd answer), and the author, revisers and reviewers of the change it rests on.
_ITEM_HELPERS = (
    "author",
    "revisions__author",
    "decisions__reviewer",
    "independent_answers__answerer",
    "crowd_answers__worker",
    "change__author",
    "change__revisions__author",
    "change__decisions__reviewer",
)


def is_contaminated(study: Study, user) -> bool:
    """Whether the user wrote, reviewed or answered for consensus any item of the study, or wrote or
    reviewed the change it rests on. One query for the one user entering, whatever the study's size;
    each path is its own EXISTS so that joining them never multiplies rows."""
    helped = [Exists(Item.objects.filter(pk=OuterRef("pk"), **{path: user})) for path in _ITEM_HELPERS]
    return Item.objects.filter(studies=study).filter(reduce(or_, helped)).exists()
