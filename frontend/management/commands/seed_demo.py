"""Build the demo: a procedural Hypo3D-style benchmark, a movement campaign, the random
baseline model and one account per role. Safe to run twice."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from annotation import services as annotation_services
from annotation.models import Campaign
from benchmarks import roles
from benchmarks.demo import build_demo_benchmark
from modeleval import services as modeleval_services

DEMO_PASSWORD = "hypolab-demo"
GUIDELINES = """Describe one **movement** of an object in this room, so that anyone can tell what moved and where.

- Good: "The office chair has been moved from the desk to the window next to the bookshelf."
- Bad: "Move it over there." (which object? where?)
- Name objects as they appear in the object list (hover the top-view map), and give an origin and a destination.
"""


class Command(BaseCommand):
    help = "Create the demo benchmark, campaign, baseline model and demo accounts."

    def handle(self, *args, **options):
        roles.ensure_role_groups()
        benchmark = build_demo_benchmark()
        if not Campaign.objects.filter(benchmark=benchmark).exists():
            annotation_services.create_campaign(
                benchmark, "Demo movement changes", "movement", benchmark.scenes.all(), guidelines=GUIDELINES
            )
        modeleval_services.ensure_baseline_model()
        users = get_user_model().objects
        for role in roles.ROLES:
            user, created = users.get_or_create(username=role, defaults={"is_staff": role == roles.ADMIN})
            if created:
                user.set_password(DEMO_PASSWORD)
                user.is_superuser = role == roles.ADMIN
                user.save()
            roles.grant_role(user, role)
        campaign = Campaign.objects.filter(benchmark=benchmark).first()
        self.stdout.write(self.style.SUCCESS(
            f"Demo ready: benchmark '{benchmark.slug}' with {benchmark.scenes.count()} scenes.\n"
            f"Accounts (password '{DEMO_PASSWORD}'): {', '.join(roles.ROLES)}.\n"
            f"Annotator crowd link: /crowd/campaigns/{campaign.pk}/?PROLIFIC_PID=demo-worker-1&STUDY_ID=demo&SESSION_ID=s1"
        ))
