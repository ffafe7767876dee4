"""What a run adds to or makes of its visual input (Run.inputs), checked at launch (a DomainError on
`inputs` naming what is wrong) and applied to each item's request:

- `frames_per_video: N` or `fps: F`: the video frames sampled from each of the scene's videos, N
  each or F per second of the video (M3-Verse: 200 per video, 60 for some models, Gemini 2 fps, the
  frame-count sweep of Fig. 4); the model's config `n_frames` otherwise;
- `extra_frames: SOURCE`: frames produced elsewhere for each item and imported (ItemFrame; CausalSpatial's
  world-model frames), sent after the scene's pictures in their order; every item of the run must have them;
- `chain: {...}`: a chained run (modeleval.prompting.chains: clip captions -> summary -> answer from text);
- `top_view: aligned | not_aligned`: the scene's top-view map whose asset meta says `aligned: true` (a map
  rotated into the world frame, Hypo3D Table 11: made by scenes/aligned_topview.py when the
  scene's world frame is approved, or uploaded), or the latest one that does not;
- `object_captions: N`: the scene text of a caption model made of N of the scene's object captions
  (Scene.meta object_captions, imported from ScanRefer by import_object_captions) joined with ". ", as
  Hypo3D's LLM input is (30 by default; Table 15 tries 30 / 50 / 100 / 200); the sample is seeded by the
  scene and N, so every model reads the same text. A ScanNet scene (`sceneXXXX_XX`) must have its
  captions imported; another scan (3RScan) keeps its scene caption, `captions[0]` of
  3rscan_scene_cap.json as Hypo3D's LLM scripts read it;
- `camera_view: true`: the scene's camera-view image (a `render` asset with meta {"set": "camera_view",
  "side": S}: Hypo3D's camera_view/ images, the side from its axis_definition.csv) sent after the map,
  its side filling the prompt's `{camera_side}` (Hypo3D Table 2 "w. camera", PROTOCOLS 1.3 h);
- `map_first: top_view_semantic | top_view_plain`: the scene's map of that kind sent before the run's
  camera views (Hypo3D Table 14's multi-view input: the top view, then the views around the room);
- `scene_state: imagined | changed` (not in any paper): the scene before its change, to imagine it
  (the default), or every visual input from the item's change's after-state (modeleval.prompting.scene_state)."""

import copy
import random
import re

from benchmarks import protocols
from benchmarks.models import Asset, AssetRole, Item, Scene
from core.errors import DomainError
from scenes.frames import frame_set

from ..models import ItemFrame, ModelSpec
from . import chains, scene_state, visual_inputs
from .prompts import InferenceRequest, build_request
from .visual_inputs import VisualInput

KNOWN = ("frames_per_video", "fps", "extra_frames", "chain", "top_view", "object_captions", "camera_view",
         "map_first", "scene_state")
FRAME_KEYS = ("frames_per_video", "fps")
MAX_FRAMES = 1000  # per video: M3-Verse's frame-count ablation goes up to 1,000
MAX_FPS = 30
MAX_OBJECT_CAPTIONS = 1000
SCANNET_SCENE = r"^scene[0-9]{4}_[0-9]{2}$"  # ScanRefer describes ScanNet's scenes
SOURCE = re.compile(r"^[-a-zA-Z0-9_]{1,50}$")
CAMERA_VIEW_SET = "camera_view"  # the render asset's meta set
CAMERA_SIDES = ("left", "right", "front", "back")  # Hypo3D §4.4: "the X side of the room from its center"
CAMERA_SIDE = "{camera_side}"  # where a prompt names the camera view's side


def checked(inputs, model: ModelSpec, benchmark, shown: VisualInput, items) -> dict:
    """The run's inputs, each checked against the model, what it is shown and its items (a queryset)."""
    inputs = inputs or {}
    if not isinstance(inputs, dict):
        raise DomainError('inputs is an object, e.g. {"frames_per_video": 32}.', field="inputs")
    unknown = sorted(set(inputs) - set(KNOWN))
    if unknown:
        raise DomainError(f"Unknown input(s): {', '.join(unknown)}; known: {', '.join(KNOWN)}.", field="inputs")
    out = {}
    if set(FRAME_KEYS) <= set(inputs):
        raise DomainError("frames_per_video and fps: give one.", field="inputs")
    for name in FRAME_KEYS:
        if name not in inputs:
            continue
        if shown.kind != ModelSpec.Modality.VIDEO_FRAMES:
            raise DomainError(f"{name} samples video frames; {model.name} is shown {shown}.", field="inputs")
        value = inputs[name]
        if name == "frames_per_video" and (type(value) is not int or not 1 <= value <= MAX_FRAMES):
            raise DomainError(f"frames_per_video is a whole number from 1 to {MAX_FRAMES}.", field="inputs")
        if name == "fps" and (type(value) not in (int, float) or not 0 < value <= MAX_FPS):
            raise DomainError(f"fps is a number above 0, at most {MAX_FPS}.", field="inputs")
        out[name] = value
    if "extra_frames" in inputs:
        out["extra_frames"] = _checked_source(inputs["extra_frames"], model, shown, items)
    if "chain" in inputs:
        out["chain"] = chains.checked(inputs["chain"], model, benchmark, shown)
    if "top_view" in inputs:
        out["top_view"] = _checked_top_view(inputs["top_view"], model, shown, items)
    if "object_captions" in inputs:
        out["object_captions"] = _checked_object_captions(inputs["object_captions"], model, shown, items)
    if "camera_view" in inputs:
        out["camera_view"] = _checked_camera_view(inputs["camera_view"], model, shown, items)
    if "map_first" in inputs:
        out["map_first"] = _checked_map_first(inputs["map_first"], model, shown, items)
    if "scene_state" in inputs:  # last: it is checked against the others
        out["scene_state"] = scene_state.checked(inputs["scene_state"], model, shown, items, out)
    return out


def _checked_top_view(value, model: ModelSpec, shown: VisualInput, items) -> str:
    if value not in ("aligned", "not_aligned"):
        raise DomainError("top_view is aligned or not_aligned.", field="inputs")
    if shown.kind not in visual_inputs.TOP_VIEW_ROLES:
        raise DomainError(f"top_view chooses a top-view map; {model.name} is shown {shown}.", field="inputs")
    scene_ids = set(items.exclude(scene=None).values_list("scene_id", flat=True))
    found = set(visual_inputs.top_view_maps(scene_ids, shown.kind, value == "aligned").values_list("scene_id", flat=True))
    missing = Scene.objects.filter(pk__in=scene_ids - found).values_list("external_id", flat=True).first()
    if missing is not None:
        if value == "aligned":
            raise DomainError(f"Scene {missing} has no aligned {shown} map: it is made when the scene's world frame "
                              "is approved (manage.py make_aligned_topviews for frames approved before; an uploaded "
                              'top-view asset with meta {"aligned": true} counts too).', field="inputs")
        raise DomainError(f"Scene {missing} has no not-aligned {shown} map.", field="inputs")
    return value


def _checked_object_captions(value, model: ModelSpec, shown: VisualInput, items) -> int:
    if type(value) is not int or not 1 <= value <= MAX_OBJECT_CAPTIONS:
        raise DomainError(f"object_captions is a whole number from 1 to {MAX_OBJECT_CAPTIONS}.", field="inputs")
    if shown.kind != ModelSpec.Modality.CAPTION_ONLY:
        raise DomainError(f"object_captions make a caption model's scene text; {model.name} is shown {shown}.",
                          field="inputs")
    without = Scene.objects.filter(pk__in=items.values_list("scene_id", flat=True), external_id__regex=SCANNET_SCENE
                                   ).exclude(meta__has_key="object_captions").values_list("external_id", flat=True).first()
    if without is not None:
        raise DomainError(f"Scene {without} has no object captions: import them (import_object_captions).",
                          field="inputs")
    return value


def _camera_views(scene_ids):
    return Asset.objects.filter(scene_id__in=scene_ids, role=AssetRole.RENDER, meta__set=CAMERA_VIEW_SET,
                                meta__side__in=CAMERA_SIDES)


def _checked_camera_view(value, model: ModelSpec, shown: VisualInput, items) -> bool:
    if value is not True:
        raise DomainError("camera_view is true (the scene's camera-view image after its map).", field="inputs")
    if model.withhold_stimulus or shown.kind not in visual_inputs.TOP_VIEW_ROLES:
        raise DomainError(f"camera_view goes with a top-view map; {model.name} is shown {shown}.", field="inputs")
    scene_ids = set(items.exclude(scene=None).values_list("scene_id", flat=True))
    found = set(_camera_views(scene_ids).values_list("scene_id", flat=True))
    missing = Scene.objects.filter(pk__in=scene_ids - found).values_list("external_id", flat=True).first()
    if missing is not None:
        raise DomainError(f'Scene {missing} has no camera view: upload it as a render asset with meta {{"set": '
                          f'"{CAMERA_VIEW_SET}", "side": one of {", ".join(CAMERA_SIDES)}}} (Hypo3D\'s '
                          "camera_view/ image, its side from axis_definition.csv).", field="inputs")
    return True


def _checked_map_first(value, model: ModelSpec, shown: VisualInput, items) -> str:
    if value not in visual_inputs.TOP_VIEW_ROLES:
        raise DomainError(f"map_first is one of {', '.join(visual_inputs.TOP_VIEW_ROLES)}.", field="inputs")
    if model.withhold_stimulus or not shown.is_rendered:
        raise DomainError(f"map_first goes before camera views; {model.name} is shown {shown}.", field="inputs")
    scene_ids = set(items.exclude(scene=None).values_list("scene_id", flat=True))
    found = set(Asset.objects.filter(scene_id__in=scene_ids, role=visual_inputs.TOP_VIEW_ROLES[value])
                .values_list("scene_id", flat=True))
    missing = Scene.objects.filter(pk__in=scene_ids - found).values_list("external_id", flat=True).first()
    if missing is not None:
        raise DomainError(f"Scene {missing} has no {value} map to send before its views.", field="inputs")
    return value


def _read(stored) -> bytes:
    """The bytes of a stored file (an Asset's, an ItemFrame's)."""
    with stored.file.open("rb") as handle:
        return handle.read()


def object_caption_text(scene: Scene, n: int) -> str:
    """N of the scene's object captions (all when it has fewer), sampled with a seed of the scene and N."""
    captions = [str(c).strip().rstrip(".") for c in (scene.meta or {}).get("object_captions") or []]
    chosen = random.Random(f"{scene.external_id}:{n}").sample(captions, min(n, len(captions)))
    return ". ".join(chosen)


def _with_caption(item: Item, text: str) -> Item:
    """A copy of the item whose scene caption is `text` (the stored item and scene are left as they are)."""
    item, scene = copy.copy(item), copy.copy(item.scene)
    scene.caption = text
    item.scene = scene
    return item


def _checked_source(source, model: ModelSpec, shown: VisualInput, items) -> str:
    if not isinstance(source, str) or not SOURCE.match(source):
        raise DomainError("extra_frames names the source of imported item frames (a slug, e.g. cow).",
                          field="inputs")
    if model.withhold_stimulus or shown.kind not in visual_inputs.IMAGE_KINDS:
        raise DomainError(f"extra_frames are pictures; {model.name} is shown {shown}.", field="inputs")
    missing = items.exclude(extra_frames__source=source).values_list("external_id", "pk").first()
    if missing is not None:
        raise DomainError(f"Item {missing[0] or '#' + str(missing[1])} has no {source} frames: import them first "
                          "(import_item_frames).", field="inputs")
    return source


def label_value(inputs: dict | None) -> dict:
    """The inputs as a run's label and ablation tables name them (the chain by its captioning model)."""
    value = {name: v for name, v in (inputs or {}).items() if name not in ("chain", "views")
             and (name, v) != ("scene_state", scene_state.IMAGINED)}  # the default, left unsaid
    posed = ((inputs or {}).get("views") or {}).get("posed_frames")
    if posed:  # renders are the default view set, left unsaid (visual_inputs.view_sources)
        rendered = len(inputs["views"].get("renders") or [])
        value["views"] = "posed frames" + (f" for {len(posed)} of {len(posed) + rendered} scenes" if rendered else "")
    chain = (inputs or {}).get("chain")
    if chain:
        clips = f"clip length {chain['clip_length']}" if chain.get("clip_length") else f"{chain['clips']} clips"
        value["chain"] = f"captions by {chain['caption_model']['name']}, {clips}, {chain['clip_frames']} frames each"
    return value


def frame_count(video, model: ModelSpec, frames: dict) -> int:
    """Frames sampled from one video: `fps` x its duration, else `frames_per_video`, else the model's n_frames."""
    if frames.get("fps"):
        return max(1, min(MAX_FRAMES, round(float((video.meta or {}).get("duration") or 0) * frames["fps"])))
    return int(frames.get("frames_per_video") or (model.config or {}).get("n_frames", 8))


def video_frames(model: ModelSpec, scene: Scene, frames: dict, mirrored: bool = False) -> list[bytes]:
    """Each of the scene's videos (before, then after) sampled as `frames` says, at the model's frame size."""
    size = tuple((model.config or {}).get("frame_size", (448, 448)))
    videos = scene.assets.filter(role=AssetRole.VIDEO).order_by("id")
    if not videos:
        raise LookupError(f"scene {scene.external_id} has no video")
    sampled = []
    for video in videos:  # each set decoded once and stored (scenes/frames.py)
        sampled += frame_set(video, frame_count(video, model, frames), size)
    return [protocols.mirror_image(frame) for frame in sampled] if mirrored else sampled


def item_frames(item: Item, source: str) -> list[bytes]:
    pictures = [_read(frame) for frame in ItemFrame.objects.filter(item=item, source=source).order_by("index")]
    if not pictures:
        raise LookupError(f"item {item.scoring_id} has no {source} frames")
    return pictures


def request(run, template, item: Item, variant, params: dict) -> InferenceRequest:
    """One item's request under the run's inputs: a chained answer, or the prompt and pictures of
    prompts.build_request with the run's frame sampling and the item's imported frames."""
    inputs = run.inputs or {}
    if inputs.get("chain"):
        return chains.request(run, template, item, variant, params)
    frames = {name: inputs[name] for name in FRAME_KEYS if name in inputs}
    shown_model = run.model
    if frames:  # the prompt as build_request writes it; the frames sampled here, once
        shown_model = copy.copy(run.model)
        shown_model.withhold_stimulus = True
    if inputs.get("object_captions") and item.scene is not None and "object_captions" in (item.scene.meta or {}):
        item = _with_caption(item, object_caption_text(item.scene, inputs["object_captions"]))
    camera_view = None
    if inputs.get("camera_view") and item.scene is not None:
        camera_view = _camera_views([item.scene_id]).order_by("-id").first()
        if camera_view is None:
            raise LookupError(f"scene {item.scene.external_id} has no camera view")
    if template is not None and CAMERA_SIDE in template.text:
        if camera_view is None:
            raise LookupError("the prompt names the camera view's side: launch the run with inputs camera_view")
        template = copy.copy(template)  # the side is a plain word: the text stays a template
        template.text = template.text.replace(CAMERA_SIDE, camera_view.meta["side"])
    built = build_request(shown_model, template, item, variant, run.examples, params, run.visual_input)
    changed = scene_state.is_changed(inputs)
    if changed:  # every picture or point from the change's after-state; the prompt as it is
        scene_state.apply(built, run, item, variant)
    if inputs.get("top_view") and item.scene is not None and built.images and not changed:
        kind = VisualInput.parse(run.visual_input).kind
        chosen = visual_inputs.latest_top_view(item.scene_id, kind, inputs["top_view"] == "aligned")
        if chosen is None:
            raise LookupError(f"scene {item.scene.external_id} has no {inputs['top_view']} {kind} map")
        built.images = [_read(chosen)]
    if camera_view is not None and built.images:  # the map, then the camera view (GPT-4o script @ d51a478)
        built.images = built.images + [_read(camera_view)]
    if inputs.get("map_first") and item.scene is not None and built.images:
        if changed:
            built.images = [scene_state.after_state_map(item, inputs["map_first"])] + built.images
        else:
            chosen = visual_inputs.latest_top_view(item.scene_id, inputs["map_first"])
            if chosen is None:
                raise LookupError(f"scene {item.scene.external_id} has no {inputs['map_first']} map")
            built.images = [_read(chosen)] + built.images
    if frames and item.scene is not None and not run.model.withhold_stimulus:
        built.images = video_frames(run.model, item.scene, frames, protocols.shows_mirrored(item.tags, variant))
    if inputs.get("extra_frames"):
        built.images = built.images + item_frames(item, inputs["extra_frames"])
    if (built.params.get("layout") or {}).get("system_from_prompt"):
        system_from_prompt(built, item.question)
    return built


def system_from_prompt(built: InferenceRequest, question: str) -> None:
    """The prompt's part before the item's question goes as the system message, the question on as the
    user turn (Spatial457's System block and User question, Supp. Figs. 9-15)."""
    at = built.prompt.rfind(question) if question else -1
    if at <= 0:
        raise LookupError("the prompt has no text before the question to send as the system message")
    layout = {name: value for name, value in built.params["layout"].items() if name != "system_from_prompt"}
    built.params = {**built.params, "layout": {**layout, "system": built.prompt[:at].rstrip()}}
    built.prompt = built.prompt[at:]
