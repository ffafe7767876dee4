"""People's words for code names: the one place a key, a kind or an id that pages would otherwise
show (a job's kind, a visual input, a tag, a metric, a campaign's kind) becomes words. `words(name)`
looks the name up and spells one it does not know out from its code form ("question_family_index" ->
"Question family index"); templates reach it through the `words` filter (frontend/templatetags)."""

import re

ACRONYMS = {"url": "URL", "id": "ID", "pid": "ID", "llm": "LLM", "vlm": "VLM", "sbert": "SBERT", "em": "EM",
            "pm": "PM", "json": "JSON", "ci": "CI"}
WORDS = {
    # job kinds (core.jobs)
    "model_run": "Model run",
    "release_export": "Release export",
    "dedup": "Near-duplicate search",
    "drafting": "Model drafting",
    "polish": "Polish",
    "prolific_places": "Prolific places",
    "prolific_sync": "Prolific sync",
    "prolific_review": "Prolific review",
    "prolific_pay": "Prolific bonuses",
    "render": "Render",
    "scene_processing": "Scene processing",
    "stage": "Pipeline stage",
    "upload_check": "Upload check",
    # campaign kinds (annotation.models.Campaign.Kind), without the choice labels' placeholders
    "context_change": "Context changes",
    "world_frame": "World-frame anchors",
    "question_answer": "Questions and answers",
    "choice_image": "Multiple-choice items on images",
    "choice_video": "Multiple-choice items on paired videos",
    "answer_only": "Independent answers",
    # 3DSRBench protocols and formats named as their authors name them
    "vanilla": "Vanilla",
    "circular": "CircularEval",
    "flip": "FlipEval",
    "flip_circular": "FlipEval + CircularEval",
    "lmms_eval": "lmms-eval",
    "not_sure": "Not sure",
    "top_p": "Top-p",
}
def spelled_out(name: str) -> str:
    """A code name in words: `seconds_per_session` -> "Seconds per session", `maxTokens` -> "Max tokens"."""
    parts = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").strip().lower().split()
    text = " ".join(ACRONYMS.get(part, part) for part in parts)
    return text[:1].upper() + text[1:]


def words(name) -> str:
    """A code name in people's words; a name that is no code name (a paper's own column title) as it is."""
    name = str(name)
    if name in WORDS:
        return WORDS[name]
    return spelled_out(name) if "_" in name else name

