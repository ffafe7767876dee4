"""Run a registered model on a benchmark's approved items and print the scores (JSON)."""

import json
import time

from django.core.management.base import BaseCommand, CommandError

from benchmarks.errors import DomainError
from benchmarks.models import Benchmark
from modeleval import services
from modeleval.models import ModelSpec, Run


class Command(BaseCommand):
    help = "Launch a model run and wait for its scores: run_eval --benchmark SLUG --model NAME_OR_ID"

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True, help="Benchmark slug.")
        parser.add_argument("--model", required=True, help="Registered model name or id.")
        parser.add_argument("--repeats", type=int, default=1)
        parser.add_argument("--condition", default="main", help="Prompt template condition.")
        parser.add_argument("--circular", action="store_true", help="Every rotation of the options (CircularEval).")
        parser.add_argument("--flip", action="store_true",
                            help="The mirrored image too, on items tagged flip: swap/same (FlipEval).")
        parser.add_argument("--batch-size", type=int, default=8)
        parser.add_argument("--timeout", type=float, default=3600, help="Seconds to wait for the run.")

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
        key = options["model"]
        model = ModelSpec.objects.filter(pk=int(key)).first() if key.isdigit() else None
        model = model or ModelSpec.objects.filter(name=key).first()
        if model is None:
            raise CommandError(f"No registered model {key!r}.")
        try:
            run = services.launch_run(model.pk, benchmark, None, options["batch_size"], options["repeats"],
                                      options["condition"], {"circular": options["circular"], "flip": options["flip"]})
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        deadline = time.monotonic() + options["timeout"]
        while True:
            run.refresh_from_db()
            progress = services.run_progress(run)
            self.stderr.write(f"run {run.pk}: {progress['done']}/{progress['total']} {run.status}")
            if run.status in (Run.Status.FINISHED, Run.Status.FAILED, Run.Status.CANCELLED):
                break
            if time.monotonic() > deadline:
                raise CommandError(f"run {run.pk} did not finish within {options['timeout']:g} s")
            time.sleep(2)
        self.stdout.write(json.dumps({"run": run.pk, "status": run.status, **(run.scores or {})}))
