"""Randomly initialised Qwen2-VL checkpoints saved like released ones (no download): a word-level
tokenizer with Qwen's special tokens, a chat template and the real processor classes.

`build_tiny_qwen2_vl` is what the CPU tests load; `build_qwen2_vl_2b` has Qwen2-VL-2B's real sizes
(about 2.2 B parameters) for the GPU throughput bench."""

from pathlib import Path

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
            "<|image_pad|>", "<|video_pad|>"]
WORDS = ["user", "assistant", "window", "desk", "chair", "left", "right", "front", "back", "the", "answer"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<|vision_start|><|image_pad|>"
    "<|vision_end|>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TINY_TEXT = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
             "num_key_value_heads": 1, "max_position_embeddings": 1024,
             "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]}}
TINY_VISION = {"depth": 1, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2}
# Qwen2-VL-2B-Instruct's config.json (vocabulary size, text tower, vision tower).
QWEN2_VL_2B_VOCAB = 151936
QWEN2_VL_2B_TEXT = {"hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28,
                    "num_attention_heads": 12, "num_key_value_heads": 2, "max_position_embeddings": 32768,
                    "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "tie_word_embeddings": True,
                    "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}
QWEN2_VL_2B_VISION = {"depth": 32, "embed_dim": 1280, "hidden_size": 1536, "num_heads": 16, "mlp_ratio": 4}


def build_qwen2_vl(folder: Path, text: dict, vision: dict, vocab_size: int | None = None,
                   max_pixels: int = 112 * 112, fixed_new_tokens: int | None = None, dtype=None) -> Path:
    """Save a random Qwen2-VL with these tower sizes; `vocab_size` pads the tokenizer with filler tokens
    so every id the model can emit decodes; `fixed_new_tokens` makes generation always that long."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        GenerationConfig,
        PreTrainedTokenizerFast,
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    tokens = SPECIALS + WORDS + [chr(c) for c in range(33, 127)]
    tokens += [f"<filler{i}>" for i in range((vocab_size or len(tokens)) - len(tokens))]
    vocab = {token: i for i, token in enumerate(tokens)}
    eos = vocab["<|im_end|>"]
    word_level = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<|endoftext|>"))
    word_level.pre_tokenizer = pre_tokenizers.Split(pattern=r"\w+|[^\w\s]", behavior="isolated")
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=word_level, eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>", additional_special_tokens=SPECIALS[1:])
    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=max_pixels),
        video_processor=Qwen2VLVideoProcessor(), tokenizer=tokenizer, chat_template=CHAT_TEMPLATE,
    )
    config = Qwen2VLConfig(
        text_config={"vocab_size": len(vocab), "bos_token_id": None, "eos_token_id": eos, "pad_token_id": 0, **text},
        vision_config={**vision, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2,
                       "in_chans": 3},
        image_token_id=vocab["<|image_pad|>"], video_token_id=vocab["<|video_pad|>"],
        vision_start_token_id=vocab["<|vision_start|>"], vision_end_token_id=vocab["<|vision_end|>"],
        eos_token_id=eos, pad_token_id=0,
    )
    with torch.device("cuda" if dtype is not None and torch.cuda.is_available() else "cpu"):
        model = Qwen2VLForConditionalGeneration(config)
    if dtype is not None:
        model = model.to(dtype)
    if fixed_new_tokens:
        model.generation_config = GenerationConfig(
            min_new_tokens=fixed_new_tokens, max_new_tokens=fixed_new_tokens, eos_token_id=eos, pad_token_id=0)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def build_tiny_qwen2_vl(folder: Path) -> Path:
    return build_qwen2_vl(folder, TINY_TEXT, TINY_VISION)


def build_qwen2_vl_2b(folder: Path, fixed_new_tokens: int, max_pixels: int) -> Path:
    import torch

    return build_qwen2_vl(folder, QWEN2_VL_2B_TEXT, QWEN2_VL_2B_VISION, vocab_size=QWEN2_VL_2B_VOCAB,
                          max_pixels=max_pixels, fixed_new_tokens=fixed_new_tokens, dtype=torch.bfloat16)
