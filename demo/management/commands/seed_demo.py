"""Build the demo: one account per role, the Hypo3D sandbox (three procedural rooms, a movement campaign,
the random baseline) and a finished benchmark of each of the five families, built through the importers
and services a researcher uses (demo/seed.py). Safe to run twice."""

from django.core.management.base import BaseCommand

from annotation import services as annotation_services
from annotation.models import Campaign
from core import roles
from demo import seed as demo_seed
from demo import visit as demo_visit
from demo.sandbox import build_demo_benchmark
from humaneval.models import Study
from humaneval.services import invitations
from modeleval import services as modeleval_services

DEMO_PASSWORD = demo_visit.DEMO_PASSWORD
GUIDELINES = """Describe one **movement** of an object in this room, so that anyone can tell what moved and where.

- Good: "The lamp has been moved from beside the door to the corner under the window."
- Bad: "Move it over there." (which object? where?)
- Name objects as they appear in the object list (hover the top-view map), and give an origin and a destination.
"""


class Command(BaseCommand):
    help = ("Create the demo accounts, the Hypo3D sandbox (rooms, campaign, baseline model) and a finished "
            "benchmark per family (items, review, human study, three model runs, release).")

    def add_arguments(self, parser):
        parser.add_argument("--sandbox-only", action="store_true",
                            help="Only the accounts and the Hypo3D sandbox, as before the finished demo.")

    def handle(self, *args, **options):
        roles.ensure_role_groups()
        benchmark = build_demo_benchmark()
        if not Campaign.objects.filter(benchmark=benchmark).exists():
            annotation_services.create_campaign(
                benchmark, "Demo movement changes", "movement", benchmark.scenes.all(), guidelines=GUIDELINES
            )
        modeleval_services.ensure_baseline_model()
        for role in roles.ROLES:
            demo_visit.demo_user(role, role, staff=role == roles.ADMIN)
        campaign = Campaign.objects.filter(benchmark=benchmark).order_by("pk").first()
        finished = [] if options["sandbox_only"] else demo_seed.build_finished_demo(
            log=lambda line: self.stdout.write(line), movement_guidelines=GUIDELINES)
        for study in Study.objects.filter(is_open=True):  # the demo evaluator is invited to every study
            invitations.invite(study.pk, roles.EVALUATOR)
        self.stdout.write(self.style.SUCCESS(
            f"Demo ready: benchmark '{benchmark.slug}' with {benchmark.scenes.count()} scenes.\n"
            f"Accounts (password '{DEMO_PASSWORD}'): {', '.join(roles.ROLES)}.\n"
            f"Annotator crowd link: /crowd/campaigns/{campaign.pk}/?PROLIFIC_PID=demo-worker-1&STUDY_ID=demo&SESSION_ID=s1"
        ))
        if finished:
            self.stdout.write(f"Finished benchmarks (and a second reviewer account, '{demo_seed.SECOND_REVIEWER}', "
                              "same password):")
            for summary in finished:
                self.stdout.write(f"  {summary}")
