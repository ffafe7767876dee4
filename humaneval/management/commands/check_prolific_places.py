"""Check who holds a study's places against Prolific's submissions (humaneval.services.prolific_places):
sessions with no Prolific submission, or a returned, rejected or timed-out one, are ended and listed.
Each check is the study's job, as when it is started from the study's page, run here in-process."""

import json

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from core.models import Job
from humaneval.services import prolific_places


class Command(BaseCommand):
    help = "check_prolific_places STUDY_ID [STUDY_ID ...]: needs PROLIFIC_API_TOKEN."

    def add_arguments(self, parser):
        parser.add_argument("study", nargs="+", type=int)

    def handle(self, *args, study, **options):
        report = {}
        try:
            for pk in study:
                job = prolific_places.start_places_check(pk, None, send=False)
                prolific_places.run_places_check(job.pk, pk)
                job.refresh_from_db()
                report[pk] = job.report if job.status == Job.Status.DONE else {"job": job.pk, "status": job.status,
                                                                               "message": job.message}
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        self.stdout.write(json.dumps(report, indent=2))
