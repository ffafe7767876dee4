"""HypoLab's scoring library: one exact scorer for human and model answers.

Pure Python, importing nothing from Django or the rest of the project. Each family
reproduces its benchmark's official or reference evaluation by default; see
docs/METRICS.md for every rule, its source and its quirks.
"""

from .chance import chance_levels
from .engine import FAMILIES, score

__all__ = ["FAMILIES", "chance_levels", "score"]
