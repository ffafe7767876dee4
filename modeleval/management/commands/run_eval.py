"""Run a model on a benchmark's approved items and print the scores (JSON): a registered model, or a
file of outputs produced elsewhere, registered as a recorded-outputs model and run the same way."""

import json
import time

from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Benchmark
from core.errors import DomainError
from modeleval.models import ModelSpec, Run
from modeleval.recipes.report import as_text, recipe_report
from scoring.predfiles import PredictionFileError

from ... import recipes, services
from ...prompting import generation
from ...prompting.generation import REASONING_EFFORTS
from ...runs import run_scoring
from .score_predictions import read_files

SHOWN_PROBLEMS = 20


class Command(BaseCommand):
    help = (
        "Launch a model run and wait for its scores: run_eval --benchmark SLUG --model NAME_OR_ID, or "
        "run_eval --benchmark SLUG --outputs FILE [--outputs FILE]... [--name NAME] [--by TAG]... "
        "[--allow-partial] (a file of outputs in any shape score_predictions reads; it prints what "
        "`python -m scoring` prints for the run's gold and predictions)"
    )

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True, help="Benchmark slug.")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--model", action="append",
                            help="Registered model name or id (repeatable with --recipe: every run for each).")
        source.add_argument("--outputs", action="append",
                            help="A file of outputs produced elsewhere (repeatable: one repeat per file).")
        parser.add_argument("--recipe", metavar="NAME_OR_FILE",
                            help="Launch every run of a recipe (a shipped name, or a JSON file of one recipe) for "
                            "each --model, wait, and print the paper's tables and the ablations.")
        parser.add_argument("--json", action="store_true", help="--recipe: print the tables as JSON.")
        parser.add_argument("--name", help="Recorded-outputs model name (default: the file's name).")
        parser.add_argument("--by", action="append", default=[], metavar="TAG",
                            help="--outputs: also report per value of this tag (repeatable).")
        parser.add_argument("--profile", help="--outputs: scoring profile (default: the official evaluation).")
        parser.add_argument("--no-sbert", action="store_true", help="--outputs, hypo3d: skip SBERT, as python -m scoring.")
        parser.add_argument("--allow-partial", action="store_true",
                            help="--outputs: run even when records were left out (unknown ids, invalid or "
                            "duplicate lines).")
        parser.add_argument("--repeats", type=int, default=1)
        parser.add_argument("--condition", default="main", help="Prompt template condition.")
        parser.add_argument("--circular", action="store_true", help="Every rotation of the options (CircularEval).")
        parser.add_argument("--flip", action="store_true",
                            help="The mirrored image too, on items tagged flip: swap/same (FlipEval).")
        parser.add_argument("--batch-size", type=int, default=8)
        parser.add_argument("--subset", action="append", default=[], metavar="TAG=V1,V2",
                            help="Only items whose TAG is one of the values (repeatable: every tag must match).")
        parser.add_argument("--prompt-by", metavar="TAG", help="Choose the prompt template by this tag's value.")
        parser.add_argument("--prompt", action="append", default=[], metavar="VALUE=CONDITION",
                            help="With --prompt-by: the template condition for items with this value (repeatable).")
        parser.add_argument("--temperature", type=float, help="Generation setting sent with every request.")
        parser.add_argument("--top-p", type=float, help="Generation setting sent with every request.")
        parser.add_argument("--max-tokens", type=int, help="Generation setting sent with every request.")
        parser.add_argument("--seed", type=int, help="The run's seed; repeat k of item i is sent a seed derived "
                            "from it, the item and k.")
        parser.add_argument("--stop", action="append", help="A stop sequence (repeatable, up to 4).")
        parser.add_argument("--reasoning-effort", choices=REASONING_EFFORTS)
        parser.add_argument("--thinking-budget", type=int, help="Thinking tokens (Anthropic thinking.budget_tokens, "
                            "Gemini thinking_config.thinking_budget).")
        parser.add_argument("--enable-thinking", choices=("true", "false"),
                            help="vLLM chat_template_kwargs.enable_thinking (Qwen3), or a local chat template's.")
        parser.add_argument("--examples", metavar="FILE",
                            help="In-context examples: a JSON list of {question, answer}, put before each prompt.")
        parser.add_argument("--judge", metavar="MODEL",
                            help="3DSRBench: a registered OpenAI-compatible model (name or id) reading choices.")
        parser.add_argument("--visual-input", metavar="INPUT",
                            help="What the model is shown (default: its modality): caption_only, top_view_plain, "
                            "top_view_semantic, multi_view:N, egocentric:N, point_cloud, image, video_frames.")
        parser.add_argument("--frames-per-video", type=int, help="video_frames: frames sampled from each video.")
        parser.add_argument("--fps", type=float, help="video_frames: frames sampled per second of each video.")
        parser.add_argument("--extra-frames", metavar="SOURCE", help="Send each item's imported frames of this "
                            "source after the scene's pictures (import_item_frames).")
        parser.add_argument("--chain", metavar="JSON", help='A chained run: {"caption_model": NAME_OR_ID, "clips": '
                            'K or "clip_length": L, "clip_frames": F} (captions -> summary -> answer; stored, reused).')
        parser.add_argument("--timeout", type=float, default=3600, help="Seconds to wait for the run.")

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
        if options["outputs"]:
            return self.run_recorded(benchmark, options)
        models = [self.registered(key) for key in options["model"]]
        if options.get("recipe"):
            return self.run_recipe(benchmark, models, options)
        if len(models) > 1:
            raise CommandError("One --model per run; several go with --recipe.")
        model = models[0]
        run = self.launch(model, benchmark, options, options["repeats"],
                          {"circular": options["circular"], "flip": options["flip"]})
        self.stdout.write(json.dumps({"run": run.pk, "status": run.status, **(run.scores or {})}))

    def registered(self, key: str) -> ModelSpec:
        model = ModelSpec.objects.filter(pk=int(key)).first() if key.isdigit() else None
        model = model or ModelSpec.objects.filter(name=key).first()
        if model is None:
            raise CommandError(f"No registered model {key!r}.")
        return model

    def run_recipe(self, benchmark: Benchmark, models: list[ModelSpec], options):
        recipe = options["recipe"]
        if recipe.endswith(".json"):
            try:
                with open(recipe, encoding="utf-8") as handle:
                    recipe = json.load(handle)
            except (OSError, ValueError) as exc:
                raise CommandError(f"--recipe: {exc}") from None
        try:
            judge = self.registered(options["judge"]).pk if options.get("judge") else None
            runs = recipes.launch_recipe(recipe, benchmark, [model.pk for model in models],
                                         batch_size=options["batch_size"], judge_model=judge)
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        for run in runs:
            for warning in generation.launch_warnings(run.model, run.repeats, run.settings):
                self.stderr.write(f"warning: run {run.pk}: {warning}")
        finished = [self.wait(run, options) for run in runs]
        report = recipe_report(finished)
        self.stdout.write(json.dumps(report) if options["json"] else as_text(report))

    def run_recorded(self, benchmark: Benchmark, options):
        files = read_files(options["outputs"])
        try:
            recorded = services.read_recorded_outputs(benchmark, files)
        except PredictionFileError as exc:
            raise CommandError(str(exc)) from None
        if recorded.problems and not options["allow_partial"]:
            shown = "\n".join(recorded.problems[:SHOWN_PROBLEMS])
            more = len(recorded.problems) - SHOWN_PROBLEMS
            raise CommandError(
                f"{len(recorded.problems)} record(s) left out; pass --allow-partial to run the rest:\n{shown}"
                + (f"\n... and {more} more" if more > 0 else "")
            )
        name = options["name"] or files[0][0]
        try:
            model = services.register_recorded_outputs(benchmark, name, recorded, ", ".join(n for n, _ in files))
            protocol = recorded.protocol.as_data()
            run = self.launch(model, benchmark, options, recorded.repeats, protocol)
            result = run_scoring.rescore_run(run, options["by"], options["profile"],
                                          sbert=False if options["no_sbert"] else None)
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        except ValueError as exc:  # an unknown profile
            raise CommandError(str(exc)) from None
        if run.status != Run.Status.FINISHED:
            raise CommandError(f"run {run.pk} ended {run.status}")
        # the records the file had but the run could not take, as `python -m scoring` reports them
        result["n_dropped"] += len(recorded.problems)
        result["errors"] = recorded.problems + result["errors"]
        self.stderr.write(f"model {model.name!r}, run {run.pk}")
        self.stdout.write(json.dumps(result))

    def run_options(self, options) -> dict:
        """The run's subset, prompts per tag value, provider parameters, examples and judge."""
        def pairs(values, flag):
            for value in values:
                key, sep, rest = value.partition("=")
                if not sep or not key or not rest:
                    raise CommandError(f"{flag} takes KEY=VALUE, not {value!r}.")
                yield key, rest

        subset = {tag: values.split(",") for tag, values in pairs(options.get("subset") or [], "--subset")}
        templates = dict(pairs(options.get("prompt") or [], "--prompt"))
        if bool(templates) != bool(options.get("prompt_by")):
            raise CommandError("--prompt-by and --prompt go together.")
        prompts = {"by": options["prompt_by"], "templates": templates} if templates else {}
        names = ("temperature", "top_p", "max_tokens", "seed", "stop", "reasoning_effort", "thinking_budget")
        settings = {name: options[name] for name in names if options.get(name) is not None}
        if options.get("enable_thinking"):
            settings["enable_thinking"] = options["enable_thinking"] == "true"
        examples = []
        if options.get("examples"):
            try:
                with open(options["examples"], encoding="utf-8") as handle:
                    examples = json.load(handle)
            except (OSError, ValueError) as exc:
                raise CommandError(f"--examples: {exc}") from None
        judge = None
        if options.get("judge"):
            key = options["judge"]
            found = ModelSpec.objects.filter(pk=int(key)).first() if key.isdigit() else None
            found = found or ModelSpec.objects.filter(name=key).first()
            if found is None:
                raise CommandError(f"No registered model {key!r} (--judge).")
            judge = found.pk
        inputs = {name: options[name] for name in ("frames_per_video", "fps", "extra_frames")
                  if options.get(name) is not None}
        if options.get("chain"):
            try:
                inputs["chain"] = json.loads(options["chain"])
            except ValueError as exc:
                raise CommandError(f"--chain: {exc}") from None
        return {"subset": subset, "prompts": prompts, "settings": settings, "examples": examples,
                "judge_model": judge, "inputs": inputs}

    def launch(self, model: ModelSpec, benchmark: Benchmark, options, repeats: int, protocol: dict) -> Run:
        extra = self.run_options(options)
        try:
            run = services.launch_run(model.pk, benchmark, None, options["batch_size"], repeats,
                                      options["condition"], protocol, visual_input=options.get("visual_input"),
                                      **extra)
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        for warning in generation.launch_warnings(model, run.repeats, run.settings):
            self.stderr.write(f"warning: {warning}")
        return self.wait(run, options)

    def wait(self, run: Run, options) -> Run:
        deadline = time.monotonic() + options["timeout"]
        while True:
            run.refresh_from_db()
            progress = services.run_progress(run)
            self.stderr.write(f"run {run.pk}: {progress['done']}/{progress['total']} {run.status}")
            if run.status in (Run.Status.FINISHED, Run.Status.FAILED, Run.Status.CANCELLED):
                return run
            if time.monotonic() > deadline:
                raise CommandError(f"run {run.pk} did not finish within {options['timeout']:g} s")
            time.sleep(2)
