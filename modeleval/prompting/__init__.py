"""Building a request: what a model is asked and shown for one item. The prompt templates and the
rendered prompt (prompts.py), the visual input named as the papers' tables name it (visual_inputs.py),
what a run adds to or makes of it (run_inputs.py: extra frames, imported item frames, scene states,
chained captions), the generation settings a request carries (generation.py) and the frames imported for
items from elsewhere (item_frames.py)."""
