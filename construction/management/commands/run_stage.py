"""Run a benchmark's pipeline stages (construction/pipeline.py) and wait for their jobs.

    run_stage SLUG POSITION|NAME [--again]     one stage
    run_stage SLUG --all [--again]             every stage in order

One JSON line per stage as its job ends (job id, status, message, report); the exit status is non-zero
when a stage failed. In the embedded mode the jobs run in this process; otherwise a worker runs them."""

import json
import time

from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Benchmark
from construction import pipeline, selectors
from core.errors import DomainError
from core.models import Job


class Command(BaseCommand):
    help = "run_stage SLUG [POSITION|NAME] [--all] [--again] [--timeout SECONDS]"

    def add_arguments(self, parser):
        parser.add_argument("benchmark", help="The benchmark's slug.")
        parser.add_argument("stage", nargs="?", help="The stage's position (1, 2, ...) or name.")
        parser.add_argument("--all", action="store_true", help="Every stage, in order.")
        parser.add_argument("--again", action="store_true", help="Run finished work again.")
        parser.add_argument("--timeout", type=float, default=3600, help="Seconds to wait for each job.")

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
        if options["all"] == bool(options["stage"]):
            raise CommandError("Name one stage (its position or name), or give --all.")
        try:
            if options["all"]:
                stages = list(selectors.stages_of(benchmark))
                jobs = pipeline.run_pipeline(benchmark, None, again=options["again"])
            else:
                stages = [self._stage(benchmark, options["stage"])]
                jobs = [pipeline.run_stage(stages[0], None, again=options["again"])]
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        failed = 0
        for stage, job in zip(stages, jobs, strict=True):
            job = self._ended(job, options["timeout"])
            failed += job.status == Job.Status.FAILED
            self.stdout.write(json.dumps({"stage": stage.position, "name": stage.name, "kind": stage.kind,
                                          "job": job.pk, "status": job.status, "message": job.message,
                                          "report": job.report}))
        if failed:
            raise CommandError(f"{failed} stage(s) failed.")

    @staticmethod
    def _stage(benchmark, wanted: str):
        stages = selectors.stages_of(benchmark)
        found = list(stages.filter(position=int(wanted)) if wanted.isdigit() else stages.filter(name=wanted))
        if len(found) != 1:
            raise CommandError(f"No stage {wanted!r} in {benchmark.slug}'s pipeline." if not found else
                               f"{len(found)} stages are named {wanted!r}: give its position.")
        return found[0]

    @staticmethod
    def _ended(job: Job, timeout: float) -> Job:
        deadline = time.monotonic() + timeout
        while True:
            job.refresh_from_db()
            if job.status in pipeline.ENDED:
                return job
            if time.monotonic() > deadline:
                raise CommandError(f"Job {job.pk} has not ended after {timeout:g} s (it is {job.status}).")
            time.sleep(0.5)
