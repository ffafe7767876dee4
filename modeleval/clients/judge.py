"""The judge of a 3DSRBench run: a language model that reads the chosen option from an output when
the family's rules cannot, asked as VLMEvalKit asks it."""

from scoring.threedsrbench import infer_option, infer_text

from ..models import Run
from ..prompting.prompts import InferenceRequest
from .adapters import load_adapter, model_settings_key

# VLMEvalKit's MMBench choice-extraction prompt (utils/multiple_choice.py build_prompt), which 3DSRBench's
# official evaluation uses when no option can be read from an output by rule: filled verbatim, the
# question as it is (its template adds "?", so a question ending in one reads "??", as VLMEvalKit sends it).
JUDGE_PROMPT = (
    "You are an AI assistant who will help me to match an answer with several options of a single-choice "
    "question. You are provided with a question, several options, and an answer, and you need to find which "
    "option is most similar to the answer. If the meaning of all options are significantly different from the "
    "answer, output Z. Your should output a single uppercase character in A, B, C, D (if they are valid "
    "options), and Z. \n"
    "Example 1: \nQuestion: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: a cute teddy bear\nYour output: A\n"
    "Example 2: \nQuestion: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: Spider\nYour output: Z\n"
    "Example 3: \nQuestion: {question}?\nOptions: {options}\nAnswer: {output}\nYour output: "
)
def option_text(options: dict[str, str]) -> str:
    """The options as VLMEvalKit's build_option_str writes them (vlmeval/smp/vlm.py)."""
    return "There are several options: \n" + "".join(f"{letter}. {text}\n" for letter, text in options.items())


JUDGE_TRIES = 3  # VLMEvalKit asks again when the judge's own reply names no option


def run_judge(run: Run):
    """The scorer's judge(question, {letter: option text}, output) -> letter or None for a run that
    names a judge model: the MMBench extraction prompt sent to it, its reply read by rule."""
    if not run.judge_model_id:
        return None
    adapter = load_adapter(run.judge_model_id, model_settings_key(run.judge_model), run.benchmark_id)

    def judge(question: str, options: dict[str, str], output: str) -> str | None:
        prompt = JUDGE_PROMPT.format(question=question, output=output, options=option_text(options))
        for _ in range(JUDGE_TRIES):
            try:
                reply = adapter.answer(InferenceRequest(prompt=prompt, params={"temperature": 0.0}), item=None)
            except Exception:  # an unreachable judge leaves the answer unread (failed), never a guess
                return None
            letter = infer_option(reply, options) or infer_text(reply, options)
            if letter is not None:
                return letter
        return None

    return judge
