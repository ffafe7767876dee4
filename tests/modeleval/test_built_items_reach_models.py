"""Items built here reach the model as the evaluator sees them. Per family, items are written through
the crowd path (the authoring API, as annotators submit them) and approved, then the family's recipe
runs against the strict loopback endpoint (tests/chat_server.py) while evaluators take a study of the
same items. For each request, matched to its item and protocol variant by the prompt's hash:

- every option is in the prompt, in the family's wording (CausalSpatial's "(A) x", 3DSRBench's
  VLMEvalKit block "Options:\\nA. x", M3-Verse's "options: A. x\\nB. y"), in the order the evaluator's
  buttons show them for the same variant, whether the author listed the choices or spelled them in
  the question (spelled ones are rewritten in that order, as the evaluator's question is);
- the pictures are the evaluator's stimulus pixel for pixel: the served image with the marks the
  page lays over it (benchmarks.overlays.stimulus_image), mirrored on a flipped variant; the before
  and after videos in the order the page names them.
"""

import base64
import hashlib
import io
from string import ascii_uppercase as LETTERS

import pytest
from PIL import Image

from benchmarks.models import Item
from benchmarks.option_text import lettered
from benchmarks.protocols import Variant
from benchmarks.services import store_asset
from core import roles
from modeleval.models import Prediction
from modeleval.prompting import run_inputs, visual_inputs
from review import services as review_services
from tests.annotation.test_annotation_kinds import enter, submit
from tests.annotation.test_choice_authoring import _campaign
from tests.benchmarks.test_stimulus_parity import as_shown, evaluator_items, served
from tests.factories import ChangeFactory, SceneFactory, UserFactory
from tests.modeleval.test_recipes import endpoint_model, launch

pytestmark = pytest.mark.django_db

RED, GREEN = (255, 59, 48), (52, 199, 89)
ARROW = {"image": 0, "type": "arrow", "from": [0.2, 0.5], "to": [0.8, 0.5]}
START_BOX = {"image": 0, "type": "start_box", "x": 0.05, "y": 0.1, "width": 0.2, "height": 0.3}
LEFT_BOX = {"image": 0, "type": "box", "x": 0.05, "y": 0.5, "width": 0.3, "height": 0.4}


def png(size=(100, 60)) -> bytes:
    """A plain image with a dark corner, so its mirror differs from it."""
    image = Image.new("RGB", size, (240, 240, 240))
    image.paste((20, 20, 120), (0, 0, 12, 12))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def pixel(data: bytes, xy) -> tuple:
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGB").getpixel(xy)


def on_an_image(family: str):
    campaign = _campaign(family)
    store_asset(campaign.scenes.get(), "image", "scene.png", png(), {})
    return campaign


def written(client, campaign, bodies: list[dict]) -> list[Item]:
    """Each body submitted by its own crowd worker and approved by a reviewer, in order."""
    reviewer = UserFactory(role=roles.REVIEWER)
    items = []
    for number, body in enumerate(bodies):
        response = submit(client, enter(client, campaign, f"PID{number}"), body)
        assert response.status_code == 201, response.json()
        item = Item.objects.latest("pk")
        items.append(review_services.approve_item(item.pk, reviewer, item.version))
    client.logout()
    return items


def sent(endpoint) -> list[tuple[str, list[bytes]]]:
    """Each request's prompt text and pictures (data URLs decoded), however its messages are laid out."""
    out = []
    for request in endpoint.requests:
        texts, images = [], []
        for message in request["body"]["messages"]:
            content = message["content"]
            for part in [{"type": "text", "text": content}] if isinstance(content, str) else content:
                if part["type"] == "text":
                    texts.append(part["text"])
                else:
                    images.append(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))
        out.append((texts, images))
    return out


def candidates(endpoint, runs) -> list[tuple[set, str, list[bytes]]]:
    """Each request with the (item, variant) pairs whose recorded prompt hash it carries (a mirrored
    variant of an item whose answer stays reads as its plain one: the pictures tell them apart)."""
    hashes: dict = {}
    for p in Prediction.objects.filter(run__in=runs).exclude(prompt_sha256=""):
        hashes.setdefault(p.prompt_sha256, set()).add((p.item_id, p.variant))
    out = []
    for texts, images in sent(endpoint):
        found = [(text, hashes[digest]) for text in texts
                 if (digest := hashlib.sha256(text.encode()).hexdigest()) in hashes]
        assert found, f"a request matches no prediction's prompt: {texts}"
        out.append((found[0][1], found[0][0], images))
    return out


def assert_options_in_order(prompt: str, family: str, shown: list[str]) -> None:
    """Every option in the prompt, in the family's wording, lettered in the order shown."""
    assert shown, "a choice item shows its options"
    if family == "causalspatial":
        marks = [f"({LETTERS[i]}) {text}" for i, text in enumerate(shown)]
    else:
        marks = [f"{LETTERS[i]}. {text}" for i, text in enumerate(shown)]
        block = {"3dsrbench": f"Options:\n{lettered(shown)}\n", "m3verse": f"options: {lettered(shown)}\n"}[family]
        assert block in prompt, prompt
    missing = [mark for mark in marks if mark not in prompt]
    assert not missing, f"options missing from the prompt: {missing}\n{prompt}"
    positions = [prompt.rindex(mark) for mark in marks]
    assert positions == sorted(positions), prompt


def humans(client, items, **design) -> dict[tuple[int, str], tuple[dict, object]]:
    """What evaluators were shown of each item, per variant: (the session API's item, the plan entry)."""
    shown = {}
    for item in items:
        for human, entry in evaluator_items(client, item, **design):
            shown[(item.pk, entry.variant)] = (human, entry)
    return shown


def model_saw_what_the_human_saw(client, family, endpoint, runs, shown, pictures=True) -> dict:
    """Each request as the evaluator of its item and variant saw it: the options in order, the question,
    the pictures; every variant the runs predicted was asked. The requests of each (item, variant)."""
    stimulus = {}
    for key, (human, entry) in shown.items():
        client.force_login(entry.session.participant)
        stimulus[key] = [as_shown(client, image) for image in human["images"]]
    requests: dict = {}
    for keys, prompt, images in candidates(endpoint, runs):
        fits = sorted(key for key in keys if not pictures or stimulus[key] == images)
        assert fits, f"{sorted(keys)}: the model's pixels are not the evaluator's"
        for key in fits:
            human, _ = shown[key]
            assert_options_in_order(prompt, family, human["choices"])
            assert human["question"] in prompt
            requests.setdefault(key, []).append((prompt, images))
    predicted = set(Prediction.objects.filter(run__in=runs).values_list("item_id", "variant"))
    assert predicted == set(requests), "every variant predicted was asked as the evaluator saw it"
    return requests


# --- CausalSpatial -------------------------------------------------------------------------------------


def test_causalspatial_items_however_written_reach_the_model_with_every_option_and_the_arrow(
        client, chat_servers, django_capture_on_commit_callbacks):
    campaign = on_an_image("causalspatial")
    tags = {"level": "L2", "task": "collision"}
    listed = ["Remove the moon vase", "There is no collision", "Remove the yellow vase", "It is sufficient",
              "Remove the white vase"]
    spelled, five, yes_no = written(client, campaign, [
        {"question": "If the ball rolls along the arrow, will it hit the vase? Answer by (A) Yes, (B) No or "
                     "(C) Not sure.", "correct": ["A"], "question_type": "causal",
         "tags": {"level": "L1", "task": "collision"}, "overlays": [ARROW, START_BOX]},
        {"question": "If the car moves along the arrow, what else should be removed to avoid collisions?",
         "choices": listed, "not_sure": True, "correct": ["C"], "question_type": "causal", "tags": tags,
         "overlays": [ARROW]},
        {"question": "Could the cart bump into the shelf if it moves along the arrow?", "choices": ["Yes", "No"],
         "not_sure": True, "correct": ["B"], "question_type": "causal", "tags": {"level": "L1", "task": "collision"},
         "overlays": [ARROW, START_BOX]},
    ])
    assert five.choices == [*listed, "Not sure"] and "(A)" not in five.question
    endpoint = chat_servers(reply="{'Reasoning': 'it rolls into it', 'Answer': '(A)'}")
    runs = launch("causalspatial-table2", campaign.benchmark, [endpoint_model(endpoint, "gpt-5-mini", "image")],
                  django_capture_on_commit_callbacks)
    assert endpoint.refused == [] and len(endpoint.requests) == 3 * 5  # five repeats each
    shown = humans(client, [spelled, five, yes_no], participants=1, shuffle_choices=False)
    requests = model_saw_what_the_human_saw(client, "causalspatial", endpoint, runs, shown)

    # eval.py's prompt is the question (with the options) and its JSON suffix; the listed options come
    # after the question in the paper's wording, a list for long options, a sentence for short ones
    [(prompt, [image])] = requests[(five.pk, "")][:1]
    assert prompt.startswith(f"{five.question}\n\n- (A) Remove the moon vase;\n- (B) There is no collision;\n")
    assert "- (F) Not sure.\n\nWrite your response into this json template:" in prompt
    [(prompt, _)] = requests[(yes_no.pk, "")][:1]
    assert f"{yes_no.question}\n\nAnswer by (A) Yes, (B) No or (C) Not sure.\n\nWrite your response" in prompt
    [(prompt, _)] = requests[(spelled.pk, "")][:1]
    assert prompt.count("(A)") == 1  # spelled once, never listed twice
    # the marks are in the pixels: the arrow from (20, 30) to (80, 30), the green start box's left edge
    [(_, [image])] = requests[(spelled.pk, "")][:1]
    assert pixel(image, (50, 30)) == RED and pixel(image, (5, 15)) == GREEN and pixel(image, (50, 5)) != RED


def test_causalspatial_spelled_options_follow_a_shuffle_on_the_study_page(client):
    """The study page rewrites the options a question spells in the shuffled order; options spelled
    otherwise than stored (a reviewer edited the choices only) are never shuffled."""
    [item] = written(client, on_an_image("causalspatial"), [
        {"question": "Will it hit the vase? Answer by (A) Yes, (B) No or (C) Not sure.", "correct": ["A"],
         "question_type": "causal", "tags": {"level": "L1", "task": "collision"}}])
    orders = set()
    for human, _ in evaluator_items(client, item, participants=6, shuffle_choices=True):
        letters = [f"({LETTERS[i]}) {text}" for i, text in enumerate(human["choices"])]
        assert human["question"] == f"Will it hit the vase? Answer by {letters[0]}, {letters[1]} or {letters[2]}."
        assert sorted(human["choices"]) == sorted(item.choices)
        orders.add(tuple(human["choices"]))
    assert len(orders) > 1  # shuffled indeed
    Item.objects.filter(pk=item.pk).update(choices=["It will", "It won't", "Not sure"])
    item.refresh_from_db()
    for human, _ in evaluator_items(client, item, participants=4, shuffle_choices=True):
        assert human["choices"] == item.choices and human["question"] == item.question


# --- 3DSRBench -----------------------------------------------------------------------------------------


def test_3dsrbench_items_reach_the_model_in_every_rotation_and_mirror_the_evaluator_saw(
        client, chat_servers, django_capture_on_commit_callbacks):
    campaign = on_an_image("3dsrbench")
    left_right, highest = written(client, campaign, [
        {"question": "Is the cup in the red box on the left or the right of the plate?", "choices": ["left", "right"],
         "correct": ["A"], "flip": "swap", "question_type": "causal",
         "tags": {"subtype": "orientation_on_the_left"}, "overlays": [LEFT_BOX]},
        {"question": "Which object is the highest?", "choices": ["cup", "plate", "lamp", "table"], "correct": ["C"],
         "flip": "same", "question_type": "causal", "tags": {"subtype": "height_higher"}},
    ])
    assert (left_right.tags["flip"], highest.tags["flip"]) == ("swap", "same")
    endpoint = chat_servers(reply="A")
    # gpt-4o-mini: VLMEvalKit sends its pictures as they are (gpt-4o's it fits within 512 px)
    runs = launch("3dsrbench-table2", campaign.benchmark, [endpoint_model(endpoint, "gpt-4o-mini", "image")],
                  django_capture_on_commit_callbacks)
    assert endpoint.refused == []
    # evaluators: each new one gets the item's next variant, so eight cover every rotation and mirror
    shown = humans(client, [left_right, highest], participants=8, circular_variants=True, flip_images=True)
    asked = [run for run in runs if run.model.name == "gpt-4o-mini"]
    requests = model_saw_what_the_human_saw(client, "3dsrbench", endpoint, asked, shown)
    # vanilla, circular (2 + 4 rotations) and flip (2 x 2): every variant of each item is asked
    assert {variant for pk, variant in requests if pk == highest.pk} == {"", "1", "2", "3", "flip"}
    assert {variant for pk, variant in requests if pk == left_right.pk} == {"", "1", "flip"}
    [(prompt, _)] = requests[(highest.pk, "2")][:1]
    assert prompt == ("Question: Which object is the highest?\nOptions:\nA. lamp\nB. table\nC. cup\nD. plate\n"
                      "Please select the correct answer from the options above. \n")
    # the red box on the left (x 5-35 of 100) is on the right of the mirrored image
    [(_, [plain])], [(_, [mirrored])] = requests[(left_right.pk, "")][:1], requests[(left_right.pk, "flip")][:1]
    assert pixel(plain, (5, 40)) == RED != pixel(mirrored, (5, 40))
    assert pixel(mirrored, (94, 40)) == RED and Variant.parse("flip").flip


# --- Spatial457 ----------------------------------------------------------------------------------------


def test_spatial457_items_ask_openly_and_show_the_bounding_box(client, chat_servers,
                                                             django_capture_on_commit_callbacks):
    campaign = on_an_image("spatial457")
    [item] = written(client, campaign, [
        {"question": "Which direction is the bus in the red box facing?", "choices": ["left", "right", "front"],
         "correct": ["B"], "question_type": "causal", "tags": {"level": "L4_pose"}, "overlays": [LEFT_BOX]}])
    assert item.choices == [] and item.answers == ["right"]  # its paper asks without options
    endpoint = chat_servers(reply="{'Reasoning': 'the nose points right', 'Answer': 'right'}")
    runs = launch("spatial457-levels", campaign.benchmark, [endpoint_model(endpoint, "gpt-4o", "image")],
                  django_capture_on_commit_callbacks)
    [(_, prompt, images)] = candidates(endpoint, runs)
    [(human, entry)] = evaluator_items(client, item, shuffle_choices=False)
    # the paper's System block goes as the system message, the question as the user turn
    assert human["choices"] == [] and prompt == human["question"]
    system = endpoint.requests[0]["body"]["messages"][0]
    assert system["role"] == "system" and system["content"].endswith("'direction': '<direction>', ...]")
    assert "identify attributes of multiple objects and their facing direction" in system["content"]  # L4_pose
    client.force_login(entry.session.participant)
    assert images == [as_shown(client, image) for image in human["images"]]
    assert pixel(images[0], (5, 40)) == RED


# --- M3-Verse ------------------------------------------------------------------------------------------


def test_m3verse_items_reach_the_model_with_lettered_statements_and_both_videos(
        client, chat_servers, monkeypatch, django_capture_on_commit_callbacks):
    campaign = _campaign("m3verse", kind="choice_video")
    scene = campaign.scenes.get()
    store_asset(scene, "video", "before.mp4", b"the room before", {"which": "before", "fps": 25.0})
    store_asset(scene, "video", "after.mp4", b"the room after", {"which": "after", "fps": 25.0})
    tags = {"state_type": "inter-states", "capabilities": ["reasoning"]}
    listed, spelled = written(client, campaign, [
        {"question": "Which objects moved between the two videos?", "choices": ["Mug", "Apple", "Book"],
         "correct": ["A", "C"], "question_type": "causal", "tags": tags},
        {"question": "Which object was switched on? A. Lamp; B. Kettle; C. Nothing was switched on.",
         "correct": ["A"], "question_type": "causal", "tags": tags},
    ])
    assert spelled.choices == ["Lamp", "Kettle", "Nothing was switched on"]
    # each video stands for its frames: the model's pictures are its videos' bytes, before then after
    for module in (visual_inputs, run_inputs):  # the recipe's frames per video are sampled by run_inputs
        monkeypatch.setattr(module, "frame_set", lambda video, n, size: [video.file.open("rb").read()])
    endpoint = chat_servers(reply="A")
    runs = launch("m3verse-table2", campaign.benchmark, [endpoint_model(endpoint, "Qwen3-VL-8B", "video_frames")],
                  django_capture_on_commit_callbacks)
    shown = humans(client, [listed, spelled], participants=1, shuffle_choices=False)
    requests = model_saw_what_the_human_saw(client, "m3verse", endpoint, runs, shown, pictures=False)
    for (pk, _), [(prompt, images)] in requests.items():
        human, entry = shown[(pk, "")]
        client.force_login(entry.session.participant)
        assert images == [served(client, human["videos"]["before"]), served(client, human["videos"]["after"])]
        assert human["answer_count_note"] in prompt.replace("There are more", "There is more")
    [(prompt, _)] = requests[(listed.pk, "")]
    assert "options: A. Mug\nB. Apple\nC. Book\n" in prompt


# --- Hypo3D --------------------------------------------------------------------------------------------


def test_hypo3d_questions_reach_the_model_with_the_change_as_the_evaluator_reads_them(
        client, chat_servers, django_capture_on_commit_callbacks):
    from tests.annotation.test_annotation_kinds import campaign_of

    scene = SceneFactory(meta={"object_captions": ["a desk by the window.", "a chair at the desk."]})  # ScanRefer's
    change = ChangeFactory(scene=scene, status="approved")
    campaign = campaign_of("question_answer", [scene])
    [item] = written(client, campaign, [
        {"question": "What is directly to the left of the chair now?", "answer": "window",
         "question_type": next(iter(campaign.question_types))}])
    assert item.change == change and item.choices == []  # Hypo3D's items have no options
    endpoint = chat_servers(reply="window")
    runs = launch("hypo3d-table1", campaign.benchmark, [endpoint_model(endpoint, "Llama-3.2-3B", "caption_only")],
                  django_capture_on_commit_callbacks)
    [(_, prompt, images)] = candidates(endpoint, runs)
    [(human, _)] = evaluator_items(client, item)
    assert human["choices"] == [] and images == []
    assert f"Context Change: {human['context_change']} Question: {human['question']}\n\n" in prompt
