"""A sample of a benchmark's scenes, for a recipe run that names one as {"scenes": N, "seed": S}
(Hypo3D Table 14: its multi-view row is scored on "50 randomly sampled scenes", App. B.3.5; the
paper does not give its sample). N of the scenes of the run's approved items (of its subset) are drawn
with the seed from their external ids in order; the run leaves out the items of every other scene."""

import random

from benchmarks.models import Benchmark, Item
from core.errors import DomainError

from ..runs import run_options

MAX_SCENES = 10_000


def left_out(sample, benchmark: Benchmark, subset: dict | None = None) -> tuple[list[int], list[str]]:
    """(the items outside the sampled scenes, the sampled scenes' external ids); nothing without a sample."""
    if not sample:
        return [], []
    if not isinstance(sample, dict) or set(sample) - {"scenes", "seed"} or type(sample.get("scenes")) is not int \
            or not 1 <= sample["scenes"] <= MAX_SCENES or type(sample.get("seed", 0)) is not int:
        raise DomainError(f'A scene sample is {{"scenes": 1-{MAX_SCENES}, "seed": S}}.', field="scene_sample")
    count, seed = sample["scenes"], sample.get("seed", 0)
    items = run_options.subset_filter(Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED),
                                      run_options.checked_subset(subset))
    scenes = sorted(set(items.exclude(scene=None).values_list("scene__external_id", flat=True)))
    drawn = sorted(random.Random(seed).sample(scenes, min(count, len(scenes))))
    return list(items.exclude(scene__external_id__in=drawn).values_list("pk", flat=True)), drawn
