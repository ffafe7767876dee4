"""What a run is launched with, each part checked before the run is created: the protocol's variants
of each item (rotated options, mirrored image), a tag subset of the items, a prompt template per tag
value, provider parameters, in-context examples, a judge model and the visual input. A bad part is a
DomainError naming its field."""

from itertools import permutations

from django.db.models import Q

from benchmarks import option_text, protocols
from benchmarks.models import AssetRole, Benchmark, Scene
from benchmarks.protocols import Protocol, Variant
from core.errors import DomainError

from ..clients import secrets as model_secrets
from ..models import ModelSpec
from ..prompting import visual_inputs
from ..prompting.prompts import latest_template
from ..prompting.visual_inputs import VisualInput


def item_variants(protocol: Protocol, choices, tags) -> list[Variant]:
    return protocols.variants(protocol, len(choices), protocols.flip_rule(tags))


def check_protocol(protocol: Protocol, shown: VisualInput, items: list[tuple]) -> None:
    """Refuse a protocol the items or the visual input cannot carry, naming what is wrong: rotated
    options a question spells otherwise than stored (benchmarks.option_text rewrites the ones it
    spells as stored), FlipEval over items without a flip decision (all counted), an answer with no
    mirrored counterpart."""
    if protocol.flip and shown.kind not in visual_inputs.IMAGE_KINDS:
        raise DomainError(f"Flipped images need a model that is shown images, not {shown}.", field="protocol")
    if protocol.flip:
        _check_flip_decisions(items)
    for pk, question, choices, answers, tags in items:
        if protocol.circular and not option_text.reorderable(question, choices):
            raise DomainError(f"Item #{pk} lists options inside its question that are not its stored options, "
                              "so they cannot be rotated.", field="protocol")
        for variant in item_variants(protocol, choices, tags):
            try:
                protocols.variant_answer(choices, answers, variant, protocols.flip_rule(tags))
            except DomainError as error:
                raise DomainError(f"Item #{pk}: {error.message}", field="protocol") from None


def _check_flip_decisions(items: list[tuple]) -> None:
    """FlipEval needs every item's flip decision; items imported with their mirrored rows are left to
    as they are (their FlipEval comes from their ids)."""
    if any((tags or {}).get(protocols.IMAGE_VARIANT) == protocols.FLIPPED for *_, tags in items):
        return
    undecided = protocols.undecided_flips((pk, tags) for pk, *_, tags in items)
    if undecided:
        shown = ", ".join(f"#{pk}" for pk in undecided[:5]) + (", ..." if len(undecided) > 5 else "")
        raise DomainError(
            f"FlipEval needs each item's flip decision (swap, same or none): {len(undecided)} of the "
            f"{len(items)} items have none ({shown}). Set it on review, or launch the run without 'flip'.",
            field="protocol")


ROTATION_ROW = r"-[0-9]$"  # an imported rotated copy of a question (3DSRBench `X-1`..`X-3`, `X-flip-1`)


STORED_VARIANT_FAMILIES = ("3dsrbench",)  # VLMEvalKit's TSV ids say the variant (importers/threedsrbench.py)


def stored_protocol(items) -> Protocol:
    """The variants a 3DSRBench benchmark's items already are: rotations imported as rows (`X-1`),
    mirrored rows (`X-flip`), as VLMEvalKit's published TSV holds them (other families' ids say no
    variant: an M3-Verse `scene_0-1` is a question of its own)."""
    if not items.filter(benchmark__family__in=STORED_VARIANT_FAMILIES).exists():
        return Protocol()
    return Protocol(circular=items.filter(external_id__regex=ROTATION_ROW).exists(),
                    flip=items.filter(**{f"tags__{protocols.IMAGE_VARIANT}": protocols.FLIPPED}).exists())


def asked_rows(protocol: Protocol, items):
    """The items a protocol asks where the benchmark stores its variants: a run without a protocol asks
    every stored row (VLMEvalKit's run of the TSV: each aggregate from the ids); a circular run the
    stored rotations without the mirrored rows, a flip run the mirrored rows without the rotations,
    flip+circular every row."""
    stored = stored_protocol(items)
    left_out = []  # as subqueries: a JSON key's NOT would also drop the items without the key
    if stored.circular and protocol.flip and not protocol.circular:
        left_out.append(items.filter(external_id__regex=ROTATION_ROW))
    if stored.flip and protocol.circular and not protocol.flip:
        left_out.append(items.filter(**{f"tags__{protocols.IMAGE_VARIANT}": protocols.FLIPPED}))
    for rows in left_out:
        items = items.exclude(pk__in=rows.values("pk"))
    return items


def generated_protocol(protocol: Protocol, items) -> Protocol:
    """The variants a run makes of its items: those of its protocol that the items are not stored as
    (stored rows are asked as they are; the scorer groups them by their ids)."""
    stored = stored_protocol(items)
    return Protocol(circular=protocol.circular and not stored.circular, flip=protocol.flip and not stored.flip)


def run_protocol(run) -> Protocol:
    """The variants the run makes of each of its items."""
    return generated_protocol(Protocol.from_data(run.protocol), run.items.all())


MAX_EXAMPLES = 20


MAX_EQUAL_SET = 4  # a list tag equal to a set is matched as each of its orders


def _tag_values(values) -> bool:
    return isinstance(values, list) and bool(values) and all(
        isinstance(v, str | int) and not isinstance(v, bool) for v in values)


def checked_subset(subset) -> dict:
    """{tag: [values]}: items whose tag has one of the values; {tag: {"equals": [values]}}: items whose
    list tag is exactly that set (Hypo3D Table 2's pure direction questions: question_type equals
    [Direction]). Every tag named must match."""
    subset = subset or {}
    if not isinstance(subset, dict) or not all(
        isinstance(tag, str) and tag and (_tag_values(values) or (
            isinstance(values, dict) and set(values) == {"equals"} and _tag_values(values["equals"])
            and len(set(map(str, values["equals"]))) <= MAX_EQUAL_SET))
        for tag, values in subset.items()
    ):
        raise DomainError('The subset is {tag: [values]} or {tag: {"equals": [values]}} (a set of at most '
                          f'{MAX_EQUAL_SET}), e.g. {{"level": ["L1_single"]}}.', field="subset")
    return {tag: {"equals": sorted(set(map(str, values["equals"])))} if isinstance(values, dict)
            else [str(v) for v in values] for tag, values in subset.items()}


def subset_filter(items, subset: dict):
    """Items whose tag is one of the values, or, for a list-valued tag (Hypo3D's question_type),
    holds one of them; with {"equals": set}, items whose list tag is that set, in any order."""
    for tag, values in subset.items():
        if isinstance(values, dict):
            equal = Q(pk__in=[])
            for order in permutations(values["equals"]):
                equal |= Q(**{f"tags__{tag}": list(order)})
            items = items.filter(equal)
            continue
        holds = Q(**{f"tags__{tag}__in": values})
        for value in values:
            holds |= Q(**{f"tags__{tag}__holds": value})
        items = items.filter(holds)
    return items


def checked_prompts(prompts, family: str) -> dict:
    """{"by": tag, "templates": {value: condition}} resolved to the latest version of each condition."""
    if not prompts:
        return {}
    if not isinstance(prompts, dict) or not isinstance(prompts.get("by"), str) or not prompts["by"] or not (
        isinstance(prompts.get("templates"), dict) and prompts["templates"]
    ):
        raise DomainError('Prompts per tag are {"by": tag, "templates": {value: condition}}.', field="prompts")
    resolved = {}
    for value, condition in prompts["templates"].items():
        template = latest_template(family, condition) if isinstance(condition, str) else None
        if template is None:
            raise DomainError(f"No prompt template {condition!r} for {family} (for {prompts['by']} {value}).",
                              field="prompts")
        resolved[str(value)] = {"id": template.pk, "condition": template.condition, "version": template.version}
    return {"by": prompts["by"], "templates": resolved}


def checked_examples(examples) -> list[dict]:
    examples = examples or []
    if not isinstance(examples, list) or len(examples) > MAX_EXAMPLES or not all(
        isinstance(e, dict) and isinstance(e.get("question"), str) and e["question"].strip()
        and isinstance(e.get("answer"), str) and e["answer"].strip() for e in examples
    ):
        raise DomainError(f"In-context examples are a list of at most {MAX_EXAMPLES} "
                          "{question, answer} texts.", field="examples")
    return [{"question": e["question"].strip(), "answer": e["answer"].strip()} for e in examples]


def checked_judge(judge_model, benchmark: Benchmark) -> ModelSpec | None:
    if judge_model in (None, ""):
        return None
    judge = ModelSpec.objects.filter(pk=judge_model).first() if str(judge_model).isdigit() else None
    if judge is None or judge.adapter != ModelSpec.Adapter.OPENAI_COMPATIBLE:
        raise DomainError("The judge is a registered OpenAI-compatible model.", field="judge_model")
    if benchmark.family not in ("3dsrbench", "hypo3d"):
        raise DomainError("A judge reads choices of 3DSRBench runs or rates Hypo3D answers (Table 10).",
                          field="judge_model")
    model_secrets.check_model_config(judge.adapter, judge.config)
    return judge


IMAGE_TEXT_ADAPTERS = (ModelSpec.Adapter.OPENAI_COMPATIBLE, ModelSpec.Adapter.HF_LOCAL)


def checked_visual_input(value, model: ModelSpec, benchmark: Benchmark, scene_ids) -> VisualInput:
    """The run's visual input (default: the model's modality), refused when the benchmark's family,
    the model's adapter or a scene of the run (`scene_ids`) cannot serve it."""
    try:
        shown = VisualInput.parse(value or visual_inputs.model_default(model))
    except ValueError as error:
        raise DomainError(str(error), field="visual_input") from None
    if shown.kind in visual_inputs.SCAN_KINDS and benchmark.family not in visual_inputs.SCAN_FAMILIES:
        raise DomainError(f"{shown} is made from 3D scans; {benchmark.get_family_display()} scenes are not scans.",
                          field="visual_input")
    if model.adapter == ModelSpec.Adapter.POINT_CLOUD_PYTHON and shown.kind != ModelSpec.Modality.POINT_CLOUD:
        raise DomainError(f"{model.name} is a point-cloud model: it is shown point_cloud, not {shown}.",
                          field="visual_input")
    if model.adapter in IMAGE_TEXT_ADAPTERS and shown.kind == ModelSpec.Modality.POINT_CLOUD:
        raise DomainError(f"{model.name} reads text and images, not a point cloud: choose a point-cloud model.",
                          field="visual_input")
    if shown.is_rendered or shown.kind == ModelSpec.Modality.POINT_CLOUD:
        unscanned = (Scene.objects.filter(pk__in=scene_ids).exclude(assets__role=AssetRole.POINT_CLOUD)
                     .values_list("external_id", flat=True).first())
        if unscanned is not None:
            raise DomainError(f"Scene {unscanned} has no scan to show as {shown}.", field="visual_input")
    return shown
