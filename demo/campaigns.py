"""The demo's crowd campaigns beyond Hypo3D's movement campaign: one campaign of every kind on
the finished benchmarks whose material holds it (world frames, questions on the approved changes and
independent answers on Hypo3D's; choice items on CausalSpatial's, 3DSRBench's and Spatial457's images and
on M3-Verse's paired videos), each with a live lease of the demo annotator's, so the annotator's home
links every authoring page (and the accessibility crawl reaches them). Made through
`annotation.services` as an admin would; skipped when already there."""

from annotation import services as annotation_services
from annotation.models import Campaign
from benchmarks.models import Benchmark
from core import roles
from core.errors import DomainError

# (benchmark slug, kind, name, guidelines): the tasks as each paper's annotators were told them.
CAMPAIGNS = (
    ("hypo3d-finished", Campaign.Kind.WORLD_FRAME, "Demo world frames",
     "Pick an object whose label occurs once in the room and say which side of the scene it is on."),
    ("hypo3d-finished", Campaign.Kind.QUESTION_ANSWER, "Demo questions on approved changes",
     "Write a question that needs both the scene and the change to answer, with a short answer."),
    ("hypo3d-finished", Campaign.Kind.ANSWER_ONLY, "Demo independent answers",
     "Answer the question on the changed scene in a word or a short phrase."),
    ("causalspatial-demo", Campaign.Kind.CHOICE_IMAGE, "Demo CausalSpatial items",
     "Draw the motion arrow and the start box, ask what the motion causes (collision, compatibility, "
     "occlusion, trajectory), list the options with a \"Not sure\", and tag the level and task."),
    ("3dsrbench-demo", Campaign.Kind.CHOICE_IMAGE, "Demo 3DSRBench items",
     "Ask a 3D spatial question about the image (height, location, orientation, several objects), tag its "
     "subtype, and say whether the answer swaps on the mirrored image."),
    ("spatial457-demo", Campaign.Kind.CHOICE_IMAGE, "Demo Spatial457 items",
     "Ask about the objects in the image at one of Spatial457's levels; the correct choice is the answer."),
    ("m3verse-demo", Campaign.Kind.CHOICE_VIDEO, "Demo M3-Verse items",
     "Watch both videos, ask about one state or the change between them, and tag the state type and "
     "capabilities; a hallucination item's only correct choice is \"No correct option is listed.\""),
)
LEASE_MINUTES = 24 * 60  # the demo annotator's lease lasts the day the demo is shown


def seed_campaigns(annotator, log=print) -> list[Campaign]:
    """Create the campaigns that are missing, each with the annotator's lease; the created ones."""
    made = []
    for slug, kind, name, guidelines in CAMPAIGNS:
        benchmark = Benchmark.objects.filter(slug=slug).first()
        if benchmark is None or Campaign.objects.filter(benchmark=benchmark, name=name).exists():
            continue
        campaign = annotation_services.create_campaign(
            benchmark, name, "", benchmark.scenes.order_by("external_id"), kind=kind, guidelines=guidelines,
            lease_minutes=LEASE_MINUTES, descriptions_per_assignment=1)
        try:
            annotation_services.lease_assignment(campaign, annotator)
        except DomainError as exc:  # nothing to lease (no approved change, no item): the campaign still shows
            log(f"  {slug}: {name}: no lease ({exc.message})")
        made.append(campaign)
    return made


def demo_annotator():
    from .visit import demo_user

    return demo_user(roles.ANNOTATOR, roles.ANNOTATOR)
