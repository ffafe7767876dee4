"""Model adapters: turn an inference request into a raw output string.

Each worker process builds an adapter once (`load_adapter` is cached), so a real model's weights
load on the first task and are reused; nothing is loaded at import or at worker start."""

import base64
import importlib
import json
import os
import random
import re
import time
from functools import lru_cache

from benchmarks.models import Benchmark, Item, SceneObject
from benchmarks.protocols import Variant
from scoring.spatial457 import random_answer_pool

from ..prompting import generation
from ..prompting.prompts import InferenceRequest
from . import secrets
from .endpoint_client import EndpointClient, answers_in_flight

CAUSALSPATIAL_GUESS = "{{'Reasoning': 'random guess', 'Answer': '({letter})'}}"
SPATIAL457_GUESS = "{{'Reasoning': 'random guess', 'Answer': '{value}'}}"
# An imported rotated copy of a question (3DSRBench `X-1`..`X-3`, `X-flip-1`): the question is `X`.
_ROTATION_SUFFIX = re.compile(r"-\d$")


def question_key(item: Item, variant: str = "") -> str:
    """One question's key across its rotations: the scoring id without a one-digit rotation suffix, the
    mirrored image apart (`X-flip`), whether the rotations were imported as items or are run variants."""
    flipped = "-flip" if Variant.parse(variant).flip else ""
    return _ROTATION_SUFFIX.sub("", item.scoring_id) + flipped


class RandomBaseline:
    """Seeded random answer, in the form the family's extraction reads: a letter for choice items
    (CausalSpatial's `{'Reasoning': ..., 'Answer': '(B)'}`, since its parser cannot read a bare letter),
    Spatial457's JSON answer drawn from the pool of the gold answer's kind (as its reference's random
    answer is), else a draw from the answer vocabulary (Hypo3D).

    The draw depends only on (seed, item's scoring id, repeat, protocol variant), so a retried or
    redelivered batch gives the same output and a rerun, or the same items imported again, reproduce it
    exactly; every variant is its own draw."""

    def __init__(self, seed: int, vocabulary: list[str], latency_ms: int = 0, family: str = ""):
        self.seed = seed
        self.vocabulary = vocabulary
        self.latency_ms = latency_ms  # simulated inference time, for load tests and progress demos
        self.family = family

    def answer(self, request: InferenceRequest, item: Item, repeat: int = 0) -> str:
        if self.latency_ms:
            time.sleep(self.latency_ms / 1000)
        variant = f":{request.variant}" if request.variant else ""
        rng = random.Random(f"{self.seed}:{item.scoring_id}:{repeat}{variant}")
        if request.choices:
            return self.choice(chr(ord("A") + rng.randrange(len(request.choices))))
        if self.family == "spatial457":
            pool = random_answer_pool(str(item.answers[0])) if item.answers else ()
            return SPATIAL457_GUESS.format(value=rng.choice(pool) if pool else "")
        if not self.vocabulary:
            return ""
        return rng.choice(self.vocabulary)

    def choice(self, letter: str) -> str:
        """A chosen option's letter as this family's answers are written."""
        return CAUSALSPATIAL_GUESS.format(letter=letter) if self.family == "causalspatial" else letter


class RandomPlusPlus(RandomBaseline):
    """3DSRBench's Random++: one seeded guess per question that picks the same option text under
    every order of its options, so a circular group is right with chance 1/n, not (1/n)^n. The guess
    is drawn from the sorted option texts, seeded by the question key, so rotations imported as
    separate items (`X`, `X-1`, ...) and rotations run as variants get the same text. The mirrored
    image is another question (a fresh guess), as the paper's FlipEval counts it."""

    def answer(self, request: InferenceRequest, item: Item, repeat: int = 0) -> str:
        if not request.choices:
            return super().answer(request, item, repeat)
        if self.latency_ms:
            time.sleep(self.latency_ms / 1000)
        rng = random.Random(f"{self.seed}:{question_key(item, request.variant)}:{repeat}")
        text = rng.choice(sorted(request.choices))
        return self.choice(chr(ord("A") + request.choices.index(text)))


class RecordedOutputs:
    """A model run elsewhere: each answer is the output recorded for the item (its variant and repeat),
    read from a file by `modeleval.services.register_recorded_outputs`. No prompt is sent and no
    stimulus is read; an item the file has no output for fails with a clear error, which the run
    records on that prediction (scored as wrong, like a missing prediction)."""

    reads_prompts = False

    def __init__(self, outputs: dict[tuple[str, str, int], str], source: str = ""):
        self.outputs = outputs
        self.source = source

    @classmethod
    def of_model(cls, model) -> "RecordedOutputs":
        from ..models import RecordedOutput

        rows = RecordedOutput.objects.filter(model=model).values_list("item_key", "variant", "repeat", "output")
        return cls({(key, variant, repeat): output for key, variant, repeat, output in rows},
                   (model.config or {}).get("file", model.name))

    def answer(self, request: InferenceRequest, item: Item, repeat: int = 0) -> str:
        key = (item.scoring_id, request.variant, repeat)
        if key not in self.outputs:
            what = f"item {item.scoring_id!r}" + (f" variant {request.variant!r}" if request.variant else "")
            raise LookupError(f"{self.source} has no output for {what}" + (f" repeat {repeat}" if repeat else ""))
        return self.outputs[key]


def ordered_parts(layout: dict, pictures: list, text, default: str) -> list:
    """A user turn's parts in the layout's order (the adapter's `default` where it names none): the
    pictures before the text (VLMEvalKit, CausalSpatial's eval.py), or after it (Hypo3D's GPT-4o scripts)."""
    return [text, *pictures] if layout.get("images", default) == generation.TEXT_FIRST else [*pictures, text]


def resized(image: bytes, size: int) -> bytes:
    """The picture fitted within size x size and sent as JPEG, as VLMEvalKit's encode_image_to_base64
    does for its GPT wrapper's img_size (vlmeval/smp/vlm.py)."""
    from io import BytesIO

    from PIL import Image

    picture = Image.open(BytesIO(image))
    picture = picture.convert("RGB") if picture.mode in ("RGBA", "P", "LA") else picture
    picture.thumbnail((size, size))
    buffer = BytesIO()
    picture.save(buffer, format="JPEG")
    return buffer.getvalue()


class OpenAICompatible:
    """Chat completions over HTTP (a vLLM server or a hosted API); images go as data URLs.

    Sent by endpoint_client.EndpointClient: up to `max_in_flight` requests at once (a run's items go
    through `answers_in_flight`), 429 and 5xx answers and refused connections retried with backoff
    (honouring Retry-After), redirects never followed; a timeout or a final failure raises, and the run
    records it as this item's error and goes on."""

    def __init__(self, endpoint: str, model: str, api_key_env: str = "", max_new_tokens: int = 128,
                 temperature: float = 0.0, seed: int = 0, timeout_s: float = 60.0, max_retries: int = 3,
                 backoff_s: float = 1.0, max_in_flight: int = 16, provider: str = generation.OPENAI,
                 reasoning_model: bool = False):
        # The secrets rule again at load time: a row stored before it, or written around the API and
        # the admin, still cannot send a secret that is not a model key, or send to another host.
        endpoint = secrets.check_endpoint(endpoint)
        api_key_env = secrets.check_api_key_env(api_key_env)
        self.url = endpoint.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = os.environ.get(api_key_env, "") if api_key_env else ""
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.seed = seed
        self.provider, self.reasoning_model = provider, reasoning_model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.client = EndpointClient(self.url, self.api_key, timeout_s, max_retries, backoff_s, max_in_flight)

    def payload(self, request: InferenceRequest) -> dict:
        # the request's settings (the run's, with the repeat's seed) over the model's defaults
        params = {"temperature": self.temperature, "max_tokens": self.max_new_tokens, "seed": self.seed,
                  **request.params}
        pictures = []
        for image in request.images:
            image = resized(image, params["image_size"]) if params.get("image_size") else image
            mime = "image/jpeg" if image[:3] == b"\xff\xd8\xff" else "image/png"
            part = {"url": f"data:{mime};base64,{base64.b64encode(image).decode()}"}
            if params.get("image_detail"):
                part["detail"] = params["image_detail"]
            pictures.append({"type": "image_url", "image_url": part})
        layout = params.get("layout") or {}
        content = ordered_parts(layout, pictures, {"type": "text", "text": request.prompt}, generation.TEXT_FIRST)
        system = [{"role": "system", "content": layout["system"]}] if layout.get("system") else []
        return {"model": self.model, "messages": [*system, {"role": "user", "content": content}],
                **generation.chat_fields(params, self.provider, self.reasoning_model)}

    def answer(self, request: InferenceRequest, item: Item, repeat: int = 0) -> str:
        return self.client.answer(self.payload(request))

    def answers_in_flight(self, jobs):
        """(key, output, error, latency_ms) for each (key, request) job, up to `max_in_flight` requests
        open at once, in the order the answers come; a job whose request is an Exception (it could not
        be built) comes back as that error."""

        def bodies():
            for key, request in jobs:
                try:
                    yield key, request if isinstance(request, Exception) else self.payload(request)
                except Exception as exc:  # a request the payload cannot carry fails its item only
                    yield key, exc

        return answers_in_flight(self.client, bodies())


def local_checkpoints_here() -> bool:
    """Whether this process may load a local checkpoint: a GPU worker (LOCAL_CHECKPOINTS=1), or a process
    that runs its tasks itself (the embedded default). Web processes and default-queue workers never do:
    their prompts go to a GPU worker (dispatch.complete_on_gpu_worker)."""
    from celery import current_app
    from django.conf import settings

    return settings.LOCAL_CHECKPOINTS or bool(current_app.conf.task_always_eager)


@lru_cache(maxsize=4)
def loaded_checkpoint(checkpoint: str, dtype: str, device: str):
    """(processor, model) of a checkpoint, loaded once per worker process for each dtype and device:
    every run of every benchmark, the judge and drafting share one copy of the weights, whichever model
    row (its seed, temperature, max tokens) names the checkpoint."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    if not local_checkpoints_here():
        raise RuntimeError("Local checkpoints load only on GPU workers (LOCAL_CHECKPOINTS=1), not in this process.")
    processor = AutoProcessor.from_pretrained(checkpoint)
    processor.tokenizer.padding_side = "left"  # batched generation continues every row at its end
    model = AutoModelForImageTextToText.from_pretrained(checkpoint, dtype=getattr(torch, dtype))
    return processor, model.to(device).eval()


class HFLocal:
    """A local transformers image-text-to-text checkpoint (Qwen2-VL, Qwen2.5-VL, LLaVA-OneVision...),
    loaded through AutoProcessor / AutoModelForImageTextToText as any released checkpoint is.

    Loaded lazily by the first task of a worker process (never at import, never in the parent
    before the pool forks, so CUDA is first touched inside the worker)."""

    def __init__(self, checkpoint: str, max_new_tokens: int = 128, temperature: float = 0.0, seed: int = 0,
                 device: str = "auto"):
        import torch

        self.torch = torch
        self.device = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
        dtype = "bfloat16" if self.device.startswith("cuda") else "float32"
        self.processor, self.model = loaded_checkpoint(checkpoint, dtype, self.device)
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.seed = seed

    def settings(self, request: InferenceRequest) -> dict:
        """The request's settings (the run's, with the repeat's seed) over the model's defaults."""
        return {"temperature": self.temperature, "max_tokens": self.max_new_tokens, "seed": self.seed,
                **request.params}

    def answer(self, request: InferenceRequest, item: Item, repeat: int = 0) -> str:
        return self.answer_batch([request], [item], [repeat])[0]

    def answer_batch(self, requests: list[InferenceRequest], items: list[Item], repeats: list[int]) -> list[str]:
        """Prompts that share their settings go through one generate call (left-padded), as a GPU
        worker wants it; a sampled prompt is generated under its own repeat's seed."""
        groups: dict[str, list[int]] = {}
        for index, request in enumerate(requests):
            params = self.settings(request)
            greedy = params["temperature"] == 0  # the seed changes nothing there: batch across repeats
            groups.setdefault(json.dumps({**params, "seed": None if greedy else params["seed"]}, sort_keys=True),
                              []).append(index)
        outputs = [""] * len(requests)
        for indexes in groups.values():
            texts = self.generate([requests[i] for i in indexes], self.settings(requests[indexes[0]]))
            for index, text in zip(indexes, texts, strict=True):
                outputs[index] = text
        return outputs

    def generate(self, requests: list[InferenceRequest], params: dict) -> list[str]:
        from io import BytesIO

        from PIL import Image

        template = {"enable_thinking": params["enable_thinking"]} if "enable_thinking" in params else {}
        layout = params.get("layout") or {}
        system = [{"role": "system", "content": layout["system"]}] if layout.get("system") else []
        texts, images = [], []
        for request in requests:
            data = [resized(d, params["image_size"]) if params.get("image_size") else d for d in request.images]
            pictures = [Image.open(BytesIO(d)).convert("RGB") for d in data]
            content = ordered_parts(layout, [{"type": "image"} for _ in pictures],
                                    {"type": "text", "text": request.prompt}, generation.IMAGES_FIRST)
            texts.append(self.processor.apply_chat_template([*system, {"role": "user", "content": content}],
                                                            add_generation_prompt=True, tokenize=False, **template))
            images += pictures
        inputs = self.processor(text=texts, images=images or None, padding=True, return_tensors="pt")
        inputs = inputs.to(self.device)
        if params.get("seed") is not None:
            self.torch.manual_seed(params["seed"])
        # temperature 0 is greedy; unsent (None), the checkpoint's generation config decides
        sampling = {"do_sample": False} if params["temperature"] == 0 else {}
        if params["temperature"]:
            sampling = {"do_sample": True, "temperature": params["temperature"]}
            if params.get("top_p", 1.0) is not None:
                sampling["top_p"] = params.get("top_p", 1.0)
        if params["max_tokens"] is not None:
            sampling["max_new_tokens"] = params["max_tokens"]
        stop = params.get("stop") or []
        if stop:
            sampling.update(stop_strings=stop, tokenizer=self.processor.tokenizer)
        with self.torch.inference_mode():
            output = self.model.generate(**inputs, **sampling)
        new_tokens = output[:, inputs["input_ids"].shape[1]:]
        decoded = self.processor.batch_decode(new_tokens, skip_special_tokens=True)
        return [_before_stop(text, stop).strip() for text in decoded]


def _before_stop(text: str, stop: list[str]) -> str:
    """The text up to its first stop sequence, which is left out as an endpoint leaves it out."""
    cut = min((text.find(s) for s in stop if s in text), default=-1)
    return text if cut < 0 else text[:cut]


class PointCloudModel:
    """The interface of a 3D-input model (3D-LLM, LEO, ...) plugged in as a `point_cloud_python`
    ModelSpec: config `class` names an importable subclass (`package.module:Class`), built once per
    worker process with config `options` as keyword arguments and the model's `seed`,
    `max_new_tokens` and `temperature`. Runs with the `point_cloud` input give it each item's
    request with `request.point_cloud` (visual_inputs.PointCloudInput: xyz, rgb, instance arrays in
    the aligned frame) beside the prompt and the choices shown; it returns the raw output."""

    def __init__(self, *, seed: int = 0, max_new_tokens: int = 128, temperature: float = 0.0, **options):
        self.seed, self.max_new_tokens, self.temperature, self.options = seed, max_new_tokens, temperature, options

    def answer(self, request: InferenceRequest, item: Item, repeat: int = 0) -> str:
        raise NotImplementedError


def point_cloud_model_class(name) -> type[PointCloudModel]:
    """The class `module:Class` names; only a PointCloudModel may be built (an admin names the class,
    and nothing else importable is called)."""
    module, colon, attribute = str(name or "").partition(":")
    if not (module and colon and attribute):
        raise ValueError(f"config class is a point-cloud model class as module:Class, not {name!r}")
    found = getattr(importlib.import_module(module), attribute, None)
    if not (isinstance(found, type) and issubclass(found, PointCloudModel)):
        raise ValueError(f"{name} is not a subclass of modeleval.clients.adapters.PointCloudModel")
    return found


def answer_vocabulary(benchmark: Benchmark) -> list[str]:
    """Every distinct gold answer of the benchmark's approved open items and every object label of
    its scenes (Hypo3D answers are mostly object names), sorted."""
    answers = set(SceneObject.objects.filter(scene__benchmark=benchmark).values_list("label", flat=True))
    for values in Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).values_list(
        "answers", flat=True
    ):
        answers.update(a for a in values if isinstance(a, str) and a)
    return sorted(answers)


def model_settings_key(model) -> str:
    """Every setting of a model row that changes what its adapter does (its name is the served model an
    endpoint is sent where config names none): `load_adapter`'s cache key."""
    return json.dumps([model.name, model.adapter, model.modality, model.withhold_stimulus, model.seed, model.max_new_tokens,
                       model.temperature, model.config], sort_keys=True, default=str)


def load_adapter(model_id: int, settings_key: str, benchmark_id: int):
    """The model's adapter for a benchmark. A random baseline is made anew each time (a few queries): its
    vocabulary and family are the benchmark's as it is now, where a cached one kept the answers of the
    items it first saw, and, on SQLite, which gives a deleted row's id to the next one, another
    benchmark's family. Real models are cached per process (`_cached_adapter`)."""
    from ..models import ModelSpec

    model = ModelSpec.objects.get(pk=model_id)
    if model.adapter in ModelSpec.BASELINE_ADAPTERS:
        benchmark = Benchmark.objects.get(pk=benchmark_id)
        guesser = RandomPlusPlus if model.adapter == ModelSpec.Adapter.RANDOM_PLUS_PLUS else RandomBaseline
        return guesser(model.seed, answer_vocabulary(benchmark), latency_ms=int((model.config or {}).get("latency_ms", 0)),
                       family=benchmark.family)
    return _cached_adapter(model_id, settings_key)


@lru_cache(maxsize=8)
def _cached_adapter(model_id: int, settings_key: str):
    """Cached per process; `settings_key` changes when the model is edited, so edits take effect."""
    from ..models import ModelSpec

    model = ModelSpec.objects.get(pk=model_id)
    config = model.config or {}
    if model.adapter == ModelSpec.Adapter.RECORDED_OUTPUTS:
        return RecordedOutputs.of_model(model)
    if model.adapter == ModelSpec.Adapter.OPENAI_COMPATIBLE:
        return OpenAICompatible(
            endpoint=config.get("endpoint"), model=config.get("model", model.name),
            api_key_env=config.get("api_key_env", ""), max_new_tokens=model.max_new_tokens,
            temperature=model.temperature, seed=model.seed, timeout_s=float(config.get("timeout_s", 60)),
            max_retries=int(config.get("max_retries", 3)), backoff_s=float(config.get("backoff_s", 1.0)),
            # checked on save and launch (secrets.check_model_config); a row stored before still gets a window
            max_in_flight=min(max(int(config.get("max_in_flight", 16)), 1), secrets.MAX_IN_FLIGHT),
            provider=generation.provider(model), reasoning_model=generation.is_reasoning_model(model),
        )
    if model.adapter == ModelSpec.Adapter.HF_LOCAL:
        return HFLocal(config["checkpoint"], max_new_tokens=model.max_new_tokens, temperature=model.temperature,
                       seed=model.seed, device=config.get("device", "auto"))
    if model.adapter == ModelSpec.Adapter.POINT_CLOUD_PYTHON:
        return point_cloud_model_class(config.get("class"))(
            seed=model.seed, max_new_tokens=model.max_new_tokens, temperature=model.temperature,
            **config.get("options", {}))
    raise ValueError(f"Unknown adapter {model.adapter!r}")
