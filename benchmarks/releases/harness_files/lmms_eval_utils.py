"""lmms-eval task functions for a HypoLab release, written beside the task's YAML as utils.py (HypoLab never
imports this file). The prompt, the scene intro and the answer-count sentences come from the YAML's
lmms_eval_specific_kwargs; images arrive as PIL images, M3-Verse's videos as {bytes, path} and are written
to temporary files for the model. The accuracy here is a quick check; the official numbers come from
`python -m scoring` on the predictions."""

import hashlib
import json
import os
import re
import tempfile

LETTERS = "ABCDEFGHIJ"
JSON_ANSWER = re.compile(r"""['"]Answer['"]\s*:\s*['"]([^'"]*)['"]""")


def doc_to_visual(doc):
    if doc.get("image") is not None:
        return [doc["image"].convert("RGB")]
    return [_video_file(doc[name]) for name in ("video_before", "video_after") if doc.get(name)]


def _video_file(video):
    content = video["bytes"]
    suffix = os.path.splitext(video.get("path") or "")[1] or ".mp4"
    path = os.path.join(tempfile.gettempdir(), f"hypolab-{hashlib.sha256(content).hexdigest()[:16]}{suffix}")
    if not os.path.exists(path):
        with open(path, "wb") as handle:
            handle.write(content)
    return path


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kwargs = lmms_eval_specific_kwargs or {}
    choices = "\n".join(f"{LETTERS[k]}. {choice}" for k, choice in enumerate(doc.get("choices") or []))
    fields = {
        "scene_intro": kwargs.get("scene_intro", ""), "scene_text": "",
        "world_frame": " ".join(doc.get("world_frame") or []), "change": doc.get("context_change") or "",
        "question": doc.get("prompt_question") or doc["question"], "choices": choices,
        "answer_count": (kwargs.get("answer_count") or {}).get(doc["answer_format"], ""),
    }
    prompt = kwargs["prompt"]
    if kwargs.get("prompts_by"):  # a prompt per value of one tag (Spatial457: per level)
        tags = doc.get("tags") or "{}"
        value = (json.loads(tags) if isinstance(tags, str) else tags).get(kwargs["prompts_by"])
        prompt = kwargs.get("prompts", {}).get(value, prompt)
    return kwargs.get("pre_prompt", "") + prompt.format(**fields) + kwargs.get("post_prompt", "")


def doc_to_target(doc):
    return ",".join(doc["answers"])


def _normalised(text):
    return " ".join(str(text).lower().strip().rstrip(".").split())


def process_results(doc, results):
    reply = results[0] if results else ""
    found = JSON_ANSWER.search(reply)
    answer = found.group(1) if found else reply
    if doc["answer_format"] == "open":
        correct = _normalised(answer) in {_normalised(a) for a in doc["answers"]}
    else:
        letters = re.findall(r"\b([A-J])\b", answer.upper())
        picked = set(letters[:1]) if doc["answer_format"] == "single" else set(letters)
        correct = picked == set(doc["answers"])
    return {"accuracy": float(correct)}
