"""3DSRBench's complementary image pairs: the same question asked of another image on which the
answer is the opposite (the paper's Fig. 2b, "complementary images that lead to opposite answers
given the same question"), so that no answer prior (pedestrians lower than street lights, higher in
3D means higher in the image) pays. The complement is written here as a draft for review beside the
original, linked to it (`Item.complement_of`); each is its own question in the paper's tables (its
own CircularEval group, same category and subtype)."""

import io

from django.db import transaction
from PIL import Image, UnidentifiedImageError

from benchmarks.models import AnswerFormat, AssetRole, Item, Scene
from benchmarks.services import store_asset
from core.errors import Conflict, DomainError, NotFound

from .selectors import flipped_answers

PAIR = "image"  # provenance["pair"]: the same question on another image
MAX_IMAGE_BYTES = 20 * 1024 * 1024
MAX_IMAGE_PIXELS = 40_000_000  # checked from the header before anything is decoded (a small PNG can claim 30000x30000)
# tags of the original's image that do not hold for the complement's
IMAGE_TAGS = ("image_variant", "image_source", "viewpoint")


def _answers(item: Item, answers) -> list[str]:
    """The complement's gold: as given, else the other of a two-way answer; never the original's."""
    if answers in (None, []):
        answers = flipped_answers(item)
        if answers is None:
            raise DomainError("Give the complementary image's answer: only a two-option or yes/no item's "
                              "opposite answer is known without it.", field="answers")
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) and a.strip() for a in answers):
        raise DomainError("The answers are a list of the correct choice letters (or texts).", field="answers")
    answers = [a.strip() for a in answers]
    if item.choices:
        letters = [chr(ord("A") + i) for i in range(len(item.choices))]
        if any(a not in letters for a in answers) or (item.answer_format != AnswerFormat.MULTI and len(answers) != 1):
            raise DomainError(f"Mark the complementary image's answer by letter ({', '.join(letters)}).",
                              field="answers")
        answers = sorted(set(answers))
    if sorted(answers) == sorted(item.answers):
        raise DomainError("A complementary image leads to a different answer from the original's.", field="answers")
    return answers


def _image_scene(item: Item, image: bytes) -> Scene:
    if len(image) > MAX_IMAGE_BYTES:
        raise DomainError(f"The image is larger than {MAX_IMAGE_BYTES // 2**20} MB.", field="image")
    try:
        with Image.open(io.BytesIO(image)) as opened:
            if opened.size[0] * opened.size[1] > MAX_IMAGE_PIXELS:
                raise DomainError(f"The image has {opened.size[0]}x{opened.size[1]} pixels; at most "
                                  f"{MAX_IMAGE_PIXELS // 10**6} million are taken.", field="image")
            opened.verify()
            kind, size = (opened.format or "png").lower(), opened.size
    except Image.DecompressionBombError:
        raise DomainError(f"The image has more than {MAX_IMAGE_PIXELS // 10**6} million pixels.", field="image") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        raise DomainError("The image is not a picture this site can read (PNG or JPEG).", field="image") from None
    base = f"{item.scene.external_id if item.scene else item.scoring_id}~complement"
    taken = set(Scene.objects.filter(benchmark=item.benchmark, external_id__startswith=base)
                .values_list("external_id", flat=True))
    external_id = next(f"{base}{n or ''}" for n in range(len(taken) + 1) if f"{base}{n or ''}" not in taken)
    scene = Scene.objects.create(benchmark=item.benchmark, external_id=external_id[:100])
    suffix = "jpg" if kind == "jpeg" else kind
    store_asset(scene, AssetRole.IMAGE, f"{external_id}.{suffix}", image,
                {"width": size[0], "height": size[1], "complement_of": item.pk})
    return scene


@transaction.atomic
def add_complementary_image(item_id: int, author, scene_id=None, image: bytes | None = None,
                            answers=None) -> Item:
    """The original's question on another image (a scene of the benchmark holding it, or an uploaded
    picture that becomes one) with the opposite answer: a draft linked to the original."""
    item = Item.objects.select_for_update(of=("self",)).select_related("scene", "benchmark").filter(pk=item_id).first()
    if item is None:
        raise NotFound("No such item.", field="item")
    if not item.choices and not flipped_answers(item):
        raise DomainError("Only a choice or yes/no item has a complementary image.", field="item")
    if item.complements.filter(provenance__pair=PAIR).exclude(status=Item.Status.REJECTED).exists():
        raise Conflict("This item already has a complementary image; review or reject that one first.",
                       field="item")
    answers = _answers(item, answers)
    if (scene_id is None) == (image is None):
        raise DomainError("Give either the scene holding the complementary image or the image.", field="scene")
    if image is not None:
        scene = _image_scene(item, image)
    else:
        scene = Scene.objects.filter(pk=scene_id, benchmark=item.benchmark).first() if str(scene_id).isdigit() else None
        if scene is None:
            raise DomainError("Pick a scene of this benchmark holding the complementary image.", field="scene")
        if scene.pk == item.scene_id:
            raise DomainError("The complementary image is another image than the original's.", field="scene")
        if not scene.assets.filter(role=AssetRole.IMAGE).exists():
            raise DomainError("That scene holds no image.", field="scene")
    tags = {k: v for k, v in (item.tags or {}).items() if k not in IMAGE_TAGS}
    return Item.objects.create(
        benchmark=item.benchmark, scene=scene, question=item.question, choices=list(item.choices),
        answers=answers, answer_format=item.answer_format, tags=tags, status=Item.Status.DRAFT,
        author=author, complement_of=item, overlays=[],
        provenance={"source": "authored", "pair": PAIR, "complement_of": item.pk,
                    "author": getattr(author, "pk", None)},
    )
