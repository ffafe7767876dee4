"""Test data: small scenes with objects, users with roles, changes, items."""

import functools

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password

from benchmarks.models import Benchmark, ContextChange, Item, Scene, SceneObject
from core import roles


@functools.cache
def password_hash() -> str:
    """Every test user's password is "pw": hashed once, not once per user."""
    return make_password("pw")


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.LazyFunction(password_hash)

    @factory.post_generation
    def role(self, create, extracted, **kwargs):
        if extracted:
            roles.grant_role(self, extracted)


class BenchmarkFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Benchmark

    name = factory.Sequence(lambda n: f"Bench {n}")
    slug = factory.Sequence(lambda n: f"bench-{n}")
    family = "hypo3d"


class SceneFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Scene
        skip_postgeneration_save = True

    benchmark = factory.SubFactory(BenchmarkFactory)
    external_id = factory.Sequence(lambda n: f"scene{n:04d}_00")
    caption = "A small office."

    @factory.post_generation
    def object_labels(self, create, extracted, **kwargs):
        labels = extracted if extracted is not None else ["desk", "chair", "window", "bookshelf"]
        for i, label in enumerate(labels, start=1):
            SceneObject.objects.create(
                scene=self, instance_id=i, label=label, center_x=i, center_y=1.0, center_z=0.5,
                size_x=1.0, size_y=1.0, size_z=1.0,
            )


class ChangeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ContextChange

    scene = factory.SubFactory(SceneFactory)
    change_type = "movement"
    raw_text = "The chair has been moved from the desk to the window next to the bookshelf."
    author = factory.SubFactory(UserFactory, role=roles.ANNOTATOR)


class ItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Item

    change = factory.SubFactory(ChangeFactory, status="approved")
    scene = factory.SelfAttribute("change.scene")
    benchmark = factory.SelfAttribute("change.scene.benchmark")
    question = "What is directly to the left of the chair now?"
    answers = ["window"]
    answer_format = "open"
    tags = {"change_type": "movement", "question_type": ["Direction"]}
    status = "approved"
