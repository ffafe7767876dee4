"""Run a campaign or study on Prolific from the command line (an admin's tool; crowd.prolific_services
does the work): publish, sync, review, pay, message, and setup-hooks for the workspace's webhooks.
Sync, review and pay run here as their core.Job (crowd/prolific_jobs.py: listed in /api/v1/jobs/) and print
its report. --dry-run prints the requests it would send and sends none (no job). Needs PROLIFIC_API_TOKEN."""

import json

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from core.models import Job
from crowd import prolific_jobs, prolific_services

ACTIONS = ("publish", "sync", "review", "pay", "message", "setup-hooks")


class Command(BaseCommand):
    help = ("prolific publish --scope campaign:ID --site-url URL | sync --scope S | review --scope S "
            "[--reject-message TEXT --rejection-category CAT] | pay --scope S | message --scope S --participant PID "
            "--body TEXT | setup-hooks --workspace ID --target-url URL; any with --dry-run")

    def add_arguments(self, parser):
        parser.add_argument("action", choices=ACTIONS)
        parser.add_argument("--scope", default="", help='What runs on Prolific: "campaign:<id>".')
        parser.add_argument("--site-url", default="", help="This site's public address (publish).")
        parser.add_argument("--reject-message", default="", help="review: at least 100 characters, to the participant.")
        parser.add_argument("--rejection-category", default="", help="review: e.g. LOW_EFFORT, FAILED_CHECK.")
        parser.add_argument("--participant", action="append", default=[], help="message: a PROLIFIC_PID (repeatable).")
        parser.add_argument("--body", default="", help="message: the text.")
        parser.add_argument("--workspace", default="", help="setup-hooks: the Prolific workspace id.")
        parser.add_argument("--target-url", default="",
                            help="setup-hooks: https://<site>/api/v1/crowd/prolific/webhook/")
        parser.add_argument("--dry-run", action="store_true", help="Print the requests instead of sending them.")

    def handle(self, *args, action, dry_run, **options):
        scope = options["scope"]
        if action in prolific_jobs.KINDS and not dry_run:
            return self.run_as_job(action, scope, {"reject_message": options["reject_message"],
                                                   "rejection_category": options["rejection_category"]})
        calls = {
            "publish": lambda: prolific_services.publish(scope, options["site_url"], dry_run),
            "sync": lambda: prolific_services.sync_submissions(scope, dry_run),
            "review": lambda: prolific_services.review(scope, options["reject_message"],
                                                       options["rejection_category"], dry_run),
            "pay": lambda: prolific_services.pay_bonuses(scope, dry_run),
            "message": lambda: prolific_services.message(scope, options["participant"], options["body"], dry_run),
            "setup-hooks": lambda: prolific_services.set_up_hooks(options["workspace"], options["target_url"], dry_run),
        }
        try:
            result = calls[action]()
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        self.stdout.write(json.dumps(result, indent=2))

    def run_as_job(self, verb: str, scope: str, options: dict) -> None:
        try:
            job = prolific_jobs.start_prolific_job(verb, scope, options=options, send=False)
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        if prolific_jobs.run_prolific_job(job.pk, verb, scope, options) is None:
            raise CommandError(f"Job {job.pk} already runs this {verb} of {scope}: follow it at /api/v1/jobs/{job.pk}/.")
        job.refresh_from_db()
        if job.status != Job.Status.DONE:
            raise CommandError(f"Job {job.pk} {job.get_status_display().lower()}: {job.message}")
        self.stdout.write(json.dumps({"job": job.pk, **job.report}, indent=2))
