"""Hypo3D collection as the paper ran it (#29): its drafting templates (Figs. 7-9) ship verbatim as the
default templates, and the object list the model reads carries counts ("4 trash can")."""

from pathlib import Path

import pytest

from annotation import drafting
from annotation.models import DraftingPrompt
from benchmarks.models import Item
from benchmarks.services import store_asset
from modeleval.models import ModelSpec
from tests.factories import ChangeFactory, SceneFactory

pytestmark = pytest.mark.django_db

SEED = Path("/work/shared/seeds/000_fbc83d91a9d3b978.txt")
# The paper's Fig. 8, as printed (Hypo3D, Appendix A.2).
FIG8 = """# Proximity Question Generation

# Input and Output

The input consists of a 3D scene description, a context change description, and a question related to the change.

# Your Role

Your task is to assist in generating questions for a 3D Visual Question Answering dataset. The dataset aims to evaluate the model's reasoning ability based on changes in a 3D scene.

# Guidelines for Generating Questions:

- Focus each question on the proximity (close/far) between the added object and the other objects in the scene.
- The 'other objects' should not be the object mentioned in the change description.
- Use various starters such as "what," "where," "which" etc., to ensure diverse question structures.
- Make sure each question has a unique sentence structure and is phrased totally differently from the others.
- Avoid asking questions that can be inferred from the change. For example, if the change is, "A mug is added next to the laptop," avoid questions like, "What object is placed beside the laptop?".
- Each question should have a clear, definitive answer that eliminates ambiguity.

# Example:

Object List: This scene contains 1 kitchen counter, 1 shower, 1 desk, 1 sink, 1 scale, 1 tv, 1 pillow, 1 clock, 1 backpack, 2 couch, 1 refrigerator, 1 coffee table, 1 toilet, 1 bed, 4 trash can.

Context Change: A new coffee machine has been added on the desk in the scene.

# Example questions:

- (1) Of the couch, refrigerator, and clock, which one is situated nearest to the added coffee machine?
- (2) Between the couch and the clock, which item is farther away from the new coffee machine?

Object List for Question Generation {} Context Changes for Question Generation {}

Now, generate three unique and diverse questions for each scene change above. The response should be in JSON format, with each change as a key and its questions as an array of values."""


def test_the_papers_templates_ship_as_the_default_drafting_prompts():
    drafting.ensure_default_prompts()
    shipped = {p.name: p for p in DraftingPrompt.objects.filter(name__startswith="Hypo3D Fig.")}
    assert len(shipped) == 3
    fig8 = shipped["Hypo3D Fig. 8: proximity questions"]
    assert fig8.text == FIG8 and fig8.target == "questions" and fig8.question_type == "Proximity"
    assert shipped["Hypo3D Fig. 7: addition changes"].text.startswith("# Addition Change Generation\n")
    assert shipped["Hypo3D Fig. 9: relative position questions"].question_type == "Relative Position"
    if SEED.exists():  # every shipped template is a verbatim passage of the paper's text
        paper = SEED.read_text(encoding="utf-8")
        assert all(p.text in paper for p in shipped.values())
        assert drafting.paper_prompt("hypo3d/fig6_movement_guidelines.md").split("\n")[0] in paper


def test_the_drafting_prompt_is_the_papers_template_filled_with_counted_objects(chat_servers):
    drafting.ensure_default_prompts()
    scene = SceneFactory(object_labels=["trash can", "desk", "trash can", "couch", "trash can", "couch",
                                        "trash can"])
    store_asset(scene, "topview_semantic", "semantic.png", b"\x89PNG top view")
    change = ChangeFactory(scene=scene, status="approved", change_type="addition",
                           raw_text="A new coffee machine has been added on the desk in the scene.")
    template = DraftingPrompt.objects.get(name="Hypo3D Fig. 8: proximity questions")
    prompt = drafting.build_prompt(template, scene, change)
    expected = FIG8.replace(
        "{}", "This scene contains 2 couch, 1 desk, 4 trash can.", 1
    ).replace("{}", "A new coffee machine has been added on the desk in the scene.", 1)
    assert prompt == expected
    # the model's answer in the figure's shape (each change a key) becomes answerless draft questions
    server = chat_servers('{"A new coffee machine has been added on the desk in the scene.": '
                          '["Which is nearer to the new coffee machine, the couch or a trash can?"]}')
    model = ModelSpec.objects.create(name="drafter", adapter="openai_compatible",
                                     config={"endpoint": server.url, "model": "tiny", "max_retries": 0})
    request = drafting.DraftRequest.objects.create(template=template, model=model, scene=scene, change=change)
    drafting.run_draft_request(request.pk)
    assert server.prompts[0] == expected
    item = Item.objects.get()
    assert item.status == "draft" and item.tags["fine_question_type"] == "Proximity"


def test_named_placeholders_read_counts_too():
    scene = SceneFactory(object_labels=["chair", "chair", "desk"])
    template = DraftingPrompt(name="t", target="changes", change_type="movement", text="Objects: {objects}. {unknown}")
    assert drafting.build_prompt(template, scene, None) == "Objects: 2 chair, 1 desk. {unknown}"


def test_a_new_hypo3d_campaign_starts_from_the_papers_fig6_guidelines(client):
    from core import roles
    from tests.factories import BenchmarkFactory, UserFactory

    client.force_login(UserFactory(role=roles.ADMIN))
    hypo3d = BenchmarkFactory(family="hypo3d")
    page = client.get(f"/manage/{hypo3d.slug}/campaigns/new/").content.decode()
    assert "Explore the given 3D scene visualization and describe five different ways to move objects" in page
    assert "Each description should be more than 10 words." in page
    other = BenchmarkFactory(family="3dsrbench")
    assert "Explore the given 3D scene" not in client.get(f"/manage/{other.slug}/campaigns/new/").content.decode()
