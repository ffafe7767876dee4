"""Check who holds a study's places against Prolific's submissions (humaneval.services.prolific_places):
sessions with no Prolific submission, or a returned, rejected or timed-out one, are ended and listed."""

import json

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from humaneval.services import prolific_places


class Command(BaseCommand):
    help = "check_prolific_places STUDY_ID [STUDY_ID ...]: needs PROLIFIC_API_TOKEN."

    def add_arguments(self, parser):
        parser.add_argument("study", nargs="+", type=int)

    def handle(self, *args, study, **options):
        try:
            report = {pk: prolific_places.check_places(pk) for pk in study}
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        self.stdout.write(json.dumps(report, indent=2))
