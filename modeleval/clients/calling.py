"""The model-calling facade: what another stage (model-drafted raw items, polishing, filters) asks of a
registered language model, reached through modeleval.services: the model chosen (`language_model`), one
prompt answered with pictures if given (`complete`; a local checkpoint's on a GPU worker that holds it), a
scene's pictures as a visual input shows them to that model (`scene_pictures`)."""

from benchmarks.models import Scene
from core.errors import DomainError

from .. import dispatch
from ..models import ModelSpec
from ..prompting import visual_inputs
from ..prompting.prompts import InferenceRequest
from ..prompting.visual_inputs import VisualInput
from .adapters import HFLocal, OpenAICompatible, load_adapter, local_checkpoints_here, model_settings_key


def complete(model: ModelSpec, prompt: str, images: list[bytes] = ()) -> str:
    """One prompt, with pictures if given, through a language model's adapter (model-drafted raw
    items, polishing, filters). Only endpoint and local checkpoints write text; the baselines answer
    benchmark items, not prompts."""
    if model.adapter == ModelSpec.Adapter.HF_LOCAL and not local_checkpoints_here():
        return dispatch.complete_on_gpu_worker(model, prompt, list(images))
    adapter = load_adapter(model.pk, model_settings_key(model), 0)
    if not isinstance(adapter, OpenAICompatible | HFLocal):
        raise DomainError("This needs a language model (an OpenAI-compatible endpoint or a local checkpoint).",
                          field="model")
    return adapter.answer(InferenceRequest(prompt=prompt, images=list(images)), item=None)


def scene_pictures(model: ModelSpec, scene: Scene, visual_input: str) -> list[bytes]:
    """A scene's pictures as the visual input named (`top_view_semantic`, `video_frames`, ...) shows
    them to this model: what another stage sends with its prompt (model drafting)."""
    return visual_inputs.scene_images(VisualInput.parse(visual_input), model, scene)


TEXT_ADAPTERS = (ModelSpec.Adapter.OPENAI_COMPATIBLE, ModelSpec.Adapter.HF_LOCAL)


def language_model(model_id) -> ModelSpec:
    """The registered model that writes text for another stage (polishing, drafting)."""
    # a row id, never anything a bigint cannot hold (PostgreSQL would refuse the query)
    known = str(model_id).isdigit() and int(model_id) < 2**63
    model = ModelSpec.objects.filter(pk=int(model_id) if known else None, adapter__in=TEXT_ADAPTERS).first()
    if model is None:
        raise DomainError("Choose a language model (an OpenAI-compatible endpoint or a local checkpoint).",
                          field="model")
    return model
