"""What the demo shows a first visitor: its accounts (made here, named on the login page), and an open study
the signed-out home links as "Try it as a participant". Seeded by demo/seed.py; the home and login
pages read them here, and find nothing where the demo was not seeded."""

from functools import cache

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password

from benchmarks.models import Benchmark, Item
from core import roles
from demo.files import FAMILY_SLUGS
from humaneval.models import Study
from humaneval.services.design import StudyDesign, create_study

DEMO_PASSWORD = "hypolab-demo"  # every demo account's
# The group the demo's accounts are put in: the login page names them only where the demo seeded them.
DEMO_ACCOUNTS_GROUP = "demo accounts"
ACCOUNT_USES = {  # what each demo account is for, as the login page says it
    roles.ADMIN: "builds benchmarks, runs models, exports releases",
    roles.REVIEWER: "reviews changes and items",
    "reviewer2": "the second reviewer a reviewer's own question waits for",
    roles.ANNOTATOR: "writes changes, questions and answers",
    roles.EVALUATOR: "takes the studies it is invited to",
}
TRY_STUDY_NAME = "Try it as a participant (demo)"
TRY_STUDY_ID = "demo-try"  # the STUDY_ID of the home page's participant link
TRY_STUDY_ITEMS = 5


@cache
def _password_hash() -> str:
    return make_password(DEMO_PASSWORD)  # hashed once (about half a second) for every demo account


def demo_user(username: str, role: str, staff: bool = False):
    """A demo account (password hypolab-demo) with its role; staff accounts are superusers."""
    user, created = get_user_model().objects.get_or_create(username=username, defaults={"is_staff": staff})
    if created:
        user.password = _password_hash()
        user.is_superuser = staff
        user.save()
    roles.grant_role(user, role)
    roles.grant_role(user, DEMO_ACCOUNTS_GROUP)  # a group, not a role: marks the account the demo's
    return user


def demo_accounts() -> list[dict]:
    """The demo's accounts (username, what it is for) where the demo seeded them, else none."""
    names = (get_user_model().objects.filter(groups__name=DEMO_ACCOUNTS_GROUP).order_by("pk")
             .values_list("username", flat=True))
    return [{"username": name, "use": ACCOUNT_USES.get(name, "")} for name in names]


def try_study(admin) -> Study:
    """The open study of the home's "Try it as a participant": a few of the 3DSRBench demo's approved items,
    as many participants as come (each visitor's link carries an id of its own)."""
    study = Study.objects.filter(name=TRY_STUDY_NAME).first()
    if study is None:
        benchmark = Benchmark.objects.get(slug=FAMILY_SLUGS["3dsrbench"])
        ids = list(benchmark.items.filter(status=Item.Status.APPROVED).order_by("pk")
                   .values_list("pk", flat=True)[:TRY_STUDY_ITEMS])
        design = StudyDesign(TRY_STUDY_NAME, ids, seconds_per_item=60, seconds_per_session=1800,
                             participants_per_item=1000, seed=2024,
                             instructions="Answer each question about the image as well as you can.")
        study = create_study(benchmark, design, admin)
    return study


def try_study_open() -> Study | None:
    return Study.objects.filter(is_open=True, name=TRY_STUDY_NAME).order_by("pk").first()
