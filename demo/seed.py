"""The finished demo: for each of the five families a small benchmark built the way a research team
builds one, through the same importers and services (no row is written around them):

1. `create_benchmark`, then the family's material and item files in their published shapes
   (this package): scans (`import_scan`), image sets (`import_image_set`), paired videos
   (`import_paired_videos`), item files (`import_item_file`);
2. review: reviewer edits (revisions) and a rejection; for Hypo3D a movement campaign whose crowd workers
   arrive from Prolific links, lease rooms, autosave and submit, and whose changes a reviewer refines,
   approves or rejects and asks questions on (a second reviewer approves those); one change is left in the
   review queue and one assignment is still being written;
3. a human study per family, taken by four crowd evaluators who answer plausibly (mostly right, some wrong,
   one timing out), each item on the server's clock;
4. three model runs per family through `launch_run`: the seeded random baseline, Random++ and a
   recorded-outputs model ("Demo VLM") read from a prediction file in the shape its tools write;
5. a release (`export_release`);
6. its results made public (`set_results_public`); and, beside the five, an open study on 3DSRBench's demo
   that the signed-out home links as "Try it as a participant";
7. the two demo reviewers' independent answers on the approved items (`agreement.py`), so that each
   agreement page shows Krippendorff's alpha.

History is given plausible times by a simulated clock (`DemoClock`): everything a service stamps with
`timezone.now()` (leases, autosaves, deadlines, answer times) happens over the last three days, at a human
pace, instead of within the seconds the seeding takes. Deadlines and every other rule are checked against
that clock exactly as they are against the real one; it never runs past the real time.

Each step is skipped when its result is already there, so running the seed twice writes nothing new."""

import io
import random
from collections.abc import Callable
from contextlib import contextmanager
from datetime import timedelta
from unittest import mock

from django.apps import apps
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from annotation import services as annotation_services
from annotation.models import Campaign
from benchmarks import services as benchmark_services
from benchmarks.importers import import_item_file
from benchmarks.models import Benchmark, ContextChange, Item, Release
from benchmarks.releases import life
from core import roles
from crowd import services as crowd_services
from demo.files import FAMILY_NAMES, FAMILY_SLUGS, MODEL_NAME, FamilyFiles
from demo.hypo3d import HYPO3D_CROWD, hypo3d_distractors, hypo3d_prediction_file
from demo.spatial457 import spatial457_pool
from humaneval.models import EvalSession, Study
from humaneval.services import sessions as humaneval_sessions
from humaneval.services.design import StudyDesign, create_study
from modeleval import services as modeleval_services
from modeleval.models import ModelSpec, Run
from review import services as review_services
from scenes.services import NamedFile, import_image_set, import_paired_videos, import_scan

from . import agreement as demo_agreement
from . import campaigns as demo_campaigns
from . import visit as demo_visit
from .causalspatial import causalspatial_files
from .hypo3d import hypo3d_files
from .m3verse import m3verse_files
from .spatial457 import spatial457_files
from .threedsrbench import srbench_files
from .visit import demo_user

# What `seed_demo` imports for each family, in the order a finished benchmark is built.
FAMILY_FILES = {
    "hypo3d": hypo3d_files,
    "3dsrbench": srbench_files,
    "causalspatial": causalspatial_files,
    "spatial457": spatial457_files,
    "m3verse": m3verse_files,
}
SECOND_REVIEWER = "reviewer2"
RANDOM_PLUS_PLUS_NAME = "Random++ (seed 0)"
RELEASE_VERSION = "1.0.0"
STUDY_NAME = "Human baseline (demo)"
CAMPAIGN_NAME = "Movement changes (finished demo)"
EVALUATORS = 4
LETTERS = "ABCDEFGHIJ"

# How people do on each family (the share of right answers of the best evaluator; the others a little
# less) and how long an answer takes them, in seconds.
HUMAN = {
    "hypo3d": {"accuracy": 0.9, "seconds": (14, 55), "seconds_per_item": 120},
    "3dsrbench": {"accuracy": 0.96, "seconds": (5, 18), "seconds_per_item": 60},
    "causalspatial": {"accuracy": 0.92, "seconds": (8, 30), "seconds_per_item": 90},
    "spatial457": {"accuracy": 0.9, "seconds": (6, 28), "seconds_per_item": 90},
    "m3verse": {"accuracy": 0.88, "seconds": (20, 75), "seconds_per_item": 180},
}
ORDER = ("hypo3d", "3dsrbench", "causalspatial", "spatial457", "m3verse")


# --- the clock --------------------------------------------------------------------------------------

_real_now = timezone.now


class DemoClock:
    """A settable stand-in for `django.utils.timezone.now` while the demo's history is written. Model
    fields whose default is `timezone.now` follow it too. It never goes past the real time."""

    def __init__(self, start):
        self.now = start

    def set(self, when) -> None:
        self.now = min(when, _real_now())

    def advance(self, seconds: float) -> None:
        self.set(self.now + timedelta(seconds=seconds))

    def __call__(self):
        return self.now

    @contextmanager
    def running(self):
        fields = [
            f for model in apps.get_models() for f in model._meta.concrete_fields if f.default is _real_now
        ]
        for f in fields:
            f.default = self
            f.__dict__.pop("_get_default", None)  # Django caches the default's callable
        try:
            with mock.patch.object(timezone, "now", self):
                yield self
        finally:
            for f in fields:
                f.default = _real_now
                f.__dict__.pop("_get_default", None)


# --- accounts -----------------------------------------------------------------------------------------


def crowd_params(worker_id: str, study: str) -> dict:
    return {"PROLIFIC_PID": worker_id, "STUDY_ID": study, "SESSION_ID": f"{worker_id}-session"}


# --- the build ----------------------------------------------------------------------------------------


def build_finished_demo(
    log: Callable[[str], None] = print, movement_guidelines: str = "", points_per_room: int = 220_000
) -> list[str]:
    """Build (or complete) the five finished benchmarks; one summary line each."""
    roles.ensure_role_groups()
    people = {
        "admin": demo_user(roles.ADMIN, roles.ADMIN, staff=True),
        "reviewer": demo_user(roles.REVIEWER, roles.REVIEWER),
        "reviewer2": demo_user(SECOND_REVIEWER, roles.REVIEWER),
    }
    start = _real_now().replace(minute=0, second=0, microsecond=0) - timedelta(days=3)
    summaries = []
    for number, family in enumerate(ORDER):
        builder = FamilyBuild(
            family,
            people,
            DemoClock(start + timedelta(hours=2 * number)),
            log,
            movement_guidelines,
            points_per_room,
        )
        summaries.append(builder.build())
    made = demo_campaigns.seed_campaigns(demo_campaigns.demo_annotator(), log)  # one campaign of every kind
    demo_agreement.seed_independent_answers(SLUGS.values(), [people["reviewer"], people["reviewer2"]], log)
    demo_visit.try_study(people["admin"])
    if made:
        summaries.append(f"Crowd campaigns of every kind: {', '.join(c.name for c in made)}")
    return summaries


class FamilyBuild:
    def __init__(
        self, family: str, people: dict, clock: DemoClock, log, movement_guidelines: str, points_per_room: int
    ):
        self.family, self.people, self.clock, self.log = family, people, clock, log
        self.movement_guidelines = movement_guidelines
        self.points_per_room = points_per_room
        self._files: FamilyFiles | None = None
        self.slug = SLUGS[family]

    @property
    def files(self) -> FamilyFiles:
        """The family's generated files, made only when a step needs them (a second seed needs none)."""
        if self._files is None:
            make = FAMILY_FILES[self.family]
            self._files = make(self.points_per_room) if self.family == "hypo3d" else make()
        return self._files

    def build(self) -> str:
        with self.clock.running():
            benchmark = self.create_benchmark()
            if not benchmark.items.exists():
                self.import_material(benchmark)
                self.import_items(benchmark)
                self.review_items(benchmark)
            if self.family == "hypo3d":
                self.clock.advance(1800)
                self.crowd_campaign(benchmark)
            self.clock.set(self.clock.now + timedelta(days=1))
            study = self.human_study(benchmark)
            self.clock.set(self.clock.now + timedelta(days=1))
            runs = self.model_runs(benchmark)
            release = self.release(benchmark)
        if not benchmark.public:
            benchmark_services.set_results_public(benchmark, True)
        approved = benchmark.items.filter(status=Item.Status.APPROVED).count()
        return (
            f"{benchmark.name}: /benchmarks/{benchmark.slug}/results/ ({approved} approved items, study "
            f"#{study.pk}, runs {', '.join(f'#{r.pk}' for r in runs)}, release {release.version})"
        )

    # 1. benchmark, material, items -------------------------------------------------------------------

    def create_benchmark(self) -> Benchmark:
        spec = NAMES[self.family]
        call_command(
            "create_benchmark", self.slug, "--family", self.family, "--name", spec[0], stdout=io.StringIO()
        )
        benchmark = Benchmark.objects.get(slug=self.slug)
        if not benchmark.description:
            benchmark.description = spec[1]
            benchmark.save(update_fields=["description"])
        return benchmark

    def import_material(self, benchmark: Benchmark) -> None:
        files = self.files
        for scan in files.scans:
            if not benchmark.scenes.filter(external_id=scan.scene_id).exists():
                import_scan(
                    benchmark,
                    scan.scene_id,
                    NamedFile(f"{scan.scene_id}.ply", scan.ply),
                    boxes=NamedFile(f"{scan.scene_id}_boxes.json", scan.boxes),
                    caption=scan.caption,
                    world_frame=scan.world_frame,
                )
        if files.image_set and not benchmark.scenes.exists():
            report = import_image_set(benchmark, [NamedFile(n, b) for n, b in files.image_set])
            self.log(f"  {self.slug}: {report.images} images, {report.items} items from the image set")
        if files.videos and not benchmark.scenes.exists():
            scenes = import_paired_videos(benchmark, [NamedFile(n, b) for n, b in files.videos])
            self.log(f"  {self.slug}: {len(scenes)} scenes of paired videos")

    def import_items(self, benchmark: Benchmark) -> None:
        for name, content in self.files.item_files:
            report = import_item_file(benchmark, name, content)
            if not report.ok:
                raise RuntimeError(f"{self.slug}: {'; '.join(report.errors)}")
            self.log(f"  {self.slug}: {name}: {report.created} created, {report.unchanged} unchanged")

    def review_items(self, benchmark: Benchmark) -> None:
        """Reviewer edits (new revisions, the imported text kept as revision 1) and a rejection."""
        reviewer = self.people["reviewer"]
        self.clock.advance(4 * 3600)
        for external_id, question, answers in EDITS.get(self.family, []):
            item = benchmark.items.get(external_id=external_id)
            self.clock.advance(random.Random(external_id).randint(60, 300))
            review_services.edit_item(
                item.pk, reviewer, item.version, question or item.question, answers or item.answers
            )
        for external_id, criteria, note in REJECTIONS.get(self.family, []):
            item = benchmark.items.get(external_id=external_id)
            self.clock.advance(120)
            review_services.reject_item(item.pk, reviewer, item.version, criteria, note)

    # 2. crowd work and its review (Hypo3D) -------------------------------------------------------------

    def crowd_campaign(self, benchmark: Benchmark) -> None:
        if Campaign.objects.filter(benchmark=benchmark, name=CAMPAIGN_NAME).exists():
            return
        campaign = annotation_services.create_campaign(
            benchmark,
            CAMPAIGN_NAME,
            "movement",
            benchmark.scenes.order_by("external_id"),
            guidelines=self.movement_guidelines,
            descriptions_per_assignment=1,
        )
        reviewer, second = self.people["reviewer"], self.people["reviewer2"]
        submitted = []
        for number, (worker_id, scene_id, text, outcome) in enumerate(HYPO3D_CROWD):
            if outcome == "draft":
                # still being written: leased a few minutes ago, so the lease is live when the demo starts
                self.clock.set(_real_now() - timedelta(minutes=4))
            else:
                self.clock.set(campaign.created_at + timedelta(minutes=20 + 25 * number))
            worker, _ = crowd_services.enter_from_crowd_link(
                crowd_params(worker_id, "demo-campaign"), role=roles.ANNOTATOR
            )
            assignment = annotation_services.lease_assignment(campaign, worker)
            if assignment.scene.external_id != scene_id:
                raise RuntimeError(f"{worker_id} leased {assignment.scene.external_id}, not {scene_id}")
            words = text.split()
            for cut in (len(words) // 3, 2 * len(words) // 3):
                self.clock.advance(70 + 13 * number)
                annotation_services.save_draft(assignment.pk, worker, " ".join(words[:cut]))
            if outcome == "draft":
                continue
            self.clock.advance(95 + 11 * number)
            annotation_services.save_draft(assignment.pk, worker, text)
            self.clock.advance(20)
            annotation_services.submit_assignment(assignment.pk, worker, text)
            submitted.append((worker, outcome))
        self.clock.set(campaign.created_at + timedelta(hours=4))
        for worker, outcome in submitted:
            if outcome == "queue":
                continue  # left in the reviewers' queue
            change = ContextChange.objects.get(author=worker, provenance__campaign=campaign.pk)
            self.clock.advance(150)
            if outcome[0] == "reject":
                review_services.reject_change(change.pk, reviewer, change.version, outcome[1], outcome[2])
                continue
            _, refined, questions = outcome
            if refined:
                change = review_services.refine_change(change.pk, reviewer, refined, change.version)
                self.clock.advance(40)
            change = review_services.approve_change(change.pk, reviewer, change.version)
            for question, answer, question_types in questions:
                self.clock.advance(90)
                item = review_services.author_question(change.pk, reviewer, question, answer, question_types)
                if item.status == Item.Status.DRAFT:  # waits for a second reviewer
                    self.clock.advance(600)
                    review_services.approve_item(item.pk, second, item.version)

    # 3. the human study ------------------------------------------------------------------------------

    def human_study(self, benchmark: Benchmark) -> Study:
        study = Study.objects.filter(benchmark=benchmark, name=STUDY_NAME).first()
        human = HUMAN[self.family]
        if study is None:
            ids = list(benchmark.items.filter(status=Item.Status.APPROVED).values_list("pk", flat=True))
            design = StudyDesign(STUDY_NAME, ids, seconds_per_item=human["seconds_per_item"], seconds_per_session=3600,
                                 participants_per_item=EVALUATORS, shuffle_choices=True, seed=2024)
            study = create_study(benchmark, design, self.people["admin"])
        for number in range(1, EVALUATORS + 1):
            worker_id = f"demo-{self.family}-eval-{number}"
            done = EvalSession.objects.filter(
                study=study,
                participant__username__endswith=f"-{worker_id}",
                status=EvalSession.Status.FINISHED,
            )
            if done.exists():
                continue
            self.clock.set(study.created_at + timedelta(minutes=30 + 40 * number))
            with transaction.atomic():  # one participant's session, written whole (and one commit, not 200)
                user, session = humaneval_sessions.enter_study_from_crowd_link(
                    study.pk, crowd_params(worker_id, f"demo-{self.slug}"), ask_prolific=False
                )
                self.take_session(study, session, user, number)
        if study.is_open:
            # full: closed, as the admin's "open" switch does
            Study.objects.filter(pk=study.pk).update(is_open=False)
            study.refresh_from_db()
        return study

    def take_session(self, study: Study, session: EvalSession, user, number: int) -> None:
        human = HUMAN[self.family]
        accuracy = human["accuracy"] - 0.05 * (number - 1)
        rng = random.Random(f"{self.family}:evaluator:{number}")
        vocabulary = answer_vocabulary(study.benchmark)
        shown = 0
        while True:
            on_screen = humaneval_sessions.current_item(session.pk, user).on_screen
            if on_screen is None:
                return
            shown += 1
            if self.family == "hypo3d" and number == EVALUATORS and shown == 5:
                self.clock.advance(study.seconds_per_item + 10)  # left the tab open: the item times out
                continue
            seconds = rng.uniform(*human["seconds"])
            self.clock.advance(seconds)
            answer = human_answer(self.family, on_screen.entry, rng, accuracy, vocabulary)
            humaneval_sessions.answer_item(
                session.pk,
                user,
                on_screen.response.item_id,
                answer,
                client_latency_ms=int(seconds * 1000) - rng.randint(80, 400),
            )
            self.clock.advance(rng.uniform(1, 4))

    # 4. model runs -------------------------------------------------------------------------------------

    def model_runs(self, benchmark: Benchmark) -> list[Run]:
        admin = self.people["admin"]
        repeats = 5 if self.family == "causalspatial" else 1
        baseline = modeleval_services.ensure_baseline_model()
        plus, _ = ModelSpec.objects.get_or_create(
            name=RANDOM_PLUS_PLUS_NAME, defaults={"adapter": ModelSpec.Adapter.RANDOM_PLUS_PLUS, "seed": 0}
        )
        runs = []
        for model in (baseline, plus):
            runs.append(
                self.finished_run(model, benchmark)
                or self.launch(
                    lambda model=model: modeleval_services.launch_run(model.pk, benchmark, admin, 64, repeats)
                )
            )
        name = f"{MODEL_NAME} ({benchmark.name})"
        recorded_model = ModelSpec.objects.filter(name=name).first()
        run = self.finished_run(recorded_model, benchmark) if recorded_model else None
        if run is None:
            outputs = self.recorded_outputs(benchmark)
            recorded = modeleval_services.read_recorded_outputs(benchmark, outputs)
            # The outputs cover the published file; an item the reviewer rejected is left out, as
            # `run_eval --allow-partial` leaves it out. Anything else would be a fault in the demo's files.
            rejected = benchmark.items.filter(status=Item.Status.REJECTED).values_list(
                "external_id", flat=True
            )
            unexpected = [p for p in recorded.problems if not any(f"'{r}'" in p for r in rejected)]
            if unexpected:
                raise RuntimeError(f"{self.slug}: {'; '.join(unexpected[:5])}")
            model = modeleval_services.register_recorded_outputs(
                benchmark, name, recorded, ", ".join(n for n, _ in outputs)
            )
            run = self.launch(
                lambda: modeleval_services.launch_run(
                    model.pk, benchmark, admin, 64, recorded.repeats, "main", recorded.protocol.as_data()
                )
            )
        runs.append(run)
        return runs

    def recorded_outputs(self, benchmark: Benchmark) -> list[tuple[str, bytes]]:
        """Demo VLM's outputs. On Hypo3D it also answered the questions reviewers wrote here (keyed by
        their release id), so its row covers every approved item as the others do."""
        if self.family != "hypo3d":
            return self.files.outputs
        written = (
            benchmark.items.filter(status=Item.Status.APPROVED, external_id="")
            .select_related("scene", "change")
            .order_by("pk")
        )
        return [
            hypo3d_prediction_file(
                [
                    (
                        item.scene.external_id,
                        item.change.text,
                        item.change.change_type,
                        item.release_id,
                        " ".join(item.tags.get("question_type") or []),
                        item.question,
                        item.answers[0],
                    )
                    for item in written
                ]
            )
        ]

    @staticmethod
    def finished_run(model, benchmark) -> Run | None:
        """The model's run on the benchmark, finished or still with the workers (a broker's queue)."""
        return (
            Run.objects.filter(model=model, benchmark=benchmark)
            .exclude(status__in=[Run.Status.FAILED, Run.Status.CANCELLED])
            .order_by("pk")
            .first()
        )

    def launch(self, start) -> Run:
        """Tasks run in-process in the embedded default, so the run is finished when launch_run returns;
        with a broker (REDIS_URL) the workers finish it and its row joins the table then."""
        self.clock.advance(600)
        run = start()
        run.refresh_from_db()
        if run.status != Run.Status.FINISHED:
            self.log(
                f"  {self.slug}: run #{run.pk} ({run.model.name}) is {run.status}: the workers finish it"
            )
        return run

    # 5. the release ------------------------------------------------------------------------------------

    def release(self, benchmark: Benchmark) -> Release:
        release = Release.objects.filter(benchmark=benchmark, version=RELEASE_VERSION).first()
        if release is None:
            self.clock.advance(3600)
            release = life.export_release(
                benchmark,
                RELEASE_VERSION,
                self.people["admin"],
                notes="The finished demo's first release: every approved item with its scenes and files.",
            )
        return release


# --- plausible human answers ------------------------------------------------------------------------


def answer_vocabulary(benchmark: Benchmark) -> list[str]:
    answers = set()
    for values in benchmark.items.filter(status=Item.Status.APPROVED).values_list("answers", flat=True):
        answers.update(a for a in values if isinstance(a, str))
    return sorted(answers)


def human_answer(family: str, entry, rng: random.Random, accuracy: float, vocabulary: list[str]) -> str:
    """What a person types or clicks for one plan entry: mostly the right answer (in their own words for
    open answers), otherwise a plausible wrong one; on CausalSpatial sometimes its Not sure option."""
    item = entry.item
    draw = rng.random()
    if item.choices:
        order = entry.choice_order  # shown position -> canonical option index
        right = [LETTERS.index(a) for a in item.answers]
        not_sure = benchmark_services.not_sure_letter(item)
        unsure = LETTERS.index(not_sure) if not_sure else None
        if unsure is not None and draw > accuracy + (1 - accuracy) / 2:
            chosen = [unsure]
        elif draw < accuracy:
            chosen = (
                right if len(right) == 1 or rng.random() > 0.15 else right[:1]
            )  # sometimes half the truth
        else:
            wrong = [i for i in range(len(item.choices)) if i not in right and i != unsure]
            chosen = [rng.choice(wrong)] if wrong else right
        return ", ".join(sorted(LETTERS[order.index(i)] for i in chosen))
    gold = str(item.answers[0])
    if draw < accuracy:
        if family == "hypo3d":  # people write it their own way; the official normalisation reads it
            return rng.choice([gold, gold, gold.capitalize(), f"the {gold}", f"{gold}."])
        return gold
    if family == "hypo3d":
        wrong = hypo3d_distractors(item.scene.external_id, gold) if item.scene else []
    else:
        wrong = [a for a in spatial457_pool(gold) if a != gold]
    wrong = wrong or [a for a in vocabulary if a != gold] or ["not sure"]
    return rng.choice(wrong)


# --- what each family's demo holds ------------------------------------------------------------------

SLUGS = {family: FAMILY_SLUGS[family] for family in ORDER}
NAMES = FAMILY_NAMES

# Reviewer edits: (external id, new question or None, new answers or None).
EDITS = {
    "hypo3d": [("00009", None, ["nothing", "no object"])],
    "3dsrbench": [
        ("DMSR0003", "Which object is closer to the camera, the yellow box or the purple sphere?", None),
        ("DMSR0003-1", "Which object is closer to the camera, the yellow box or the purple sphere?", None),
    ],
    "causalspatial": [
        (
            "Collision_Level_1_0",
            "The red ball rolls along the arrow. Will it hit the blue box? (A) Yes (B) No (C) Not sure",
            None,
        ),
    ],
    "spatial457": [("L2_objects/2", "How many vehicles are there in the image?", None)],
    "m3verse": [("scene_801-0", "Which object is missing from the second video?", None)],
}
# Reviewer rejections: (external id, criteria, note).
REJECTIONS = {
    "3dsrbench": [
        (
            "DMSR0010",
            ["unambiguous"],
            "'Next to' is not defined here: every object on this floor could be said to be next to the "
            "sphere.",
        )
    ],
}
