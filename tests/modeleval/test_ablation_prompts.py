"""Ablation prompts name the input the run really shows, the 3D scene intro is the paper's, and a
rotation that cannot rotate every place the options appear is refused."""

import pytest

from core.errors import DomainError
from modeleval import services
from modeleval.prompting.prompts import latest_template, render_prompt
from tests.factories import BenchmarkFactory, ItemFactory

pytestmark = pytest.mark.django_db


def test_hypo3d_ablation_prompts_name_what_the_run_shows():
    item = ItemFactory()
    no_frame = latest_template("hypo3d", "no-world-frame")
    assert render_prompt(no_frame, item, "caption_only").startswith(
        "Given a 3D scene description and a context change, imagine how the scene would appear")
    assert render_prompt(no_frame, item, "top_view_semantic").startswith(
        "Given a top-view of a 3D scene and a context change, imagine how the scene would appear")
    assert render_prompt(no_frame, item, "point_cloud").startswith("Given a 3D scene and a context change,")
    no_change = render_prompt(latest_template("hypo3d", "no-context-change"), item, "multi_view")
    assert no_change.startswith("Given a 3D scene, mentally rotate the scene to align with the specified orientation.")
    # Fig. 11's 3D VLM line, verbatim
    assert render_prompt(latest_template("hypo3d"), item, "point_cloud").startswith(
        "Given a 3D scene, mentally rotate the scene to align with the specified orientation.\n\nScene Orientation:")


def test_a_circular_run_is_refused_when_the_question_lists_other_options_than_its_own():
    """Options the question spells as stored are rewritten in each rotation (benchmarks.option_text);
    options spelled otherwise cannot follow the rotation, so the run is refused."""
    benchmark = BenchmarkFactory(family="causalspatial")
    item = ItemFactory(benchmark=benchmark, scene=None, change=None, answer_format="single", answers=["A"],
                       choices=["Yes", "No", "Not sure"], external_id="Collision_Level_2_0",
                       question="Will the ball hit anything? - A. Yes; - B. No; - C. Not sure;")
    baseline = services.ensure_baseline_model().pk
    assert services.launch_run(baseline, benchmark, None, protocol={"circular": True}).total == 3
    item.question = "Will the ball hit anything? - A. It will; - B. It won't; - C. Not sure;"
    item.save(update_fields=["question"])
    with pytest.raises(DomainError, match="not its stored options, so they cannot be rotated"):
        services.launch_run(baseline, benchmark, None, protocol={"circular": True})
