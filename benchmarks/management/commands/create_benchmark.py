"""Create a benchmark of a family (idempotent): one JSON line, a non-zero exit when refused."""

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_slug
from django.db import IntegrityError, transaction

from benchmarks.models import Benchmark, Family


def family_value(given: str) -> str | None:
    """`hypo3d`, `3DSRBench`, `M3-Verse`...: a family's value or label, case, dashes and spaces aside."""
    def squash(text):
        return "".join(ch for ch in text.lower() if ch.isalnum())

    wanted = squash(given or "")
    return next((value for value, label in Family.choices if wanted in (squash(value), squash(label))), None)


class Command(BaseCommand):
    help = "create_benchmark SLUG --family FAMILY [--name NAME]"

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--family", required=True, help=f"One of {', '.join(Family.values)}.")
        parser.add_argument("--name", default="", help="Display name (default: the slug).")

    def handle(self, *args, **options):
        slug, name = options["slug"].strip(), (options["name"] or "").strip()
        family = family_value(options["family"])
        line = {"benchmark": slug, "family": family or options["family"], "name": name or slug}
        try:
            result = self._create(slug, family, name or slug, options["family"])
        except CommandError as exc:
            self.stdout.write(json.dumps({**line, "created": False, "errors": [str(exc)]}))
            raise
        self.stdout.write(json.dumps(result))

    def _create(self, slug: str, family: str | None, name: str, given_family: str) -> dict:
        if family is None:
            raise CommandError(f"Unknown family {given_family!r}; choose one of {', '.join(Family.values)}.")
        try:
            validate_slug(slug)
        except ValidationError:
            raise CommandError(f"{slug!r} is not a slug (letters, digits, '-' and '_' only).") from None
        if len(slug) > Benchmark._meta.get_field("slug").max_length:
            raise CommandError(f"The slug {slug!r} is longer than 100 characters.")
        if len(name) > Benchmark._meta.get_field("name").max_length:
            raise CommandError("The name is longer than 200 characters.")
        try:
            with transaction.atomic():
                benchmark, created = Benchmark.objects.get_or_create(slug=slug,
                                                                     defaults={"family": family, "name": name})
        except IntegrityError:
            raise CommandError(f"Another benchmark is already named {name!r}; give --name.") from None
        if benchmark.family != family:
            raise CommandError(f"Benchmark {slug!r} exists as a {benchmark.family} benchmark, not {family}.")
        return {"benchmark": benchmark.slug, "family": benchmark.family, "name": benchmark.name, "created": created}
