"""A tiny, randomly initialised Qwen2-VL saved like a released checkpoint (no download):
a word-level tokenizer with Qwen's special tokens, a chat template, the real processor classes."""

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


def build_tiny_qwen2_vl(folder: Path) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    vocab = {token: i for i, token in enumerate(SPECIALS + WORDS + [chr(c) for c in range(33, 127)])}
    word_level = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<|endoftext|>"))
    word_level.pre_tokenizer = pre_tokenizers.Split(pattern=r"\w+|[^\w\s]", behavior="isolated")
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=word_level, eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>", additional_special_tokens=SPECIALS[1:])
    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=112 * 112),
        video_processor=Qwen2VLVideoProcessor(), tokenizer=tokenizer, chat_template=CHAT_TEMPLATE,
    )
    config = Qwen2VLConfig(
        text_config={"vocab_size": len(vocab), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 1024,
                     "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]}},
        vision_config={"depth": 1, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2,
                       "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2, "in_chans": 3},
        image_token_id=vocab["<|image_pad|>"], video_token_id=vocab["<|video_pad|>"],
        vision_start_token_id=vocab["<|vision_start|>"], vision_end_token_id=vocab["<|vision_end|>"],
        eos_token_id=vocab["<|im_end|>"], pad_token_id=0,
    )
    Qwen2VLForConditionalGeneration(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder
