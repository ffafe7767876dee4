"""The shipped recipes' settings, each with its source, as markdown (docs/RECIPES.md)."""

from pathlib import Path

from django.core.management.base import BaseCommand

from modeleval import recipes
from modeleval.recipes import settings_table


class Command(BaseCommand):
    help = ("recipe_table [--write PATH]: a table per shipped recipe of every setting it declares (defaults, "
            "per-model rules, run entries) with its source line in the paper or the official code; printed, or "
            "written to PATH (docs/RECIPES.md is this output).")

    def add_arguments(self, parser):
        parser.add_argument("--write", metavar="PATH", help="Write the markdown to this file instead of printing it.")

    def handle(self, *args, **options):
        text = settings_table.markdown(recipes.shipped())
        if options["write"]:
            Path(options["write"]).write_text(text, encoding="utf-8")
        else:
            self.stdout.write(text, ending="")
