"""Freeze a release and write all its files into a folder: items.jsonl, manifest.json, items.json,
items.csv, items.parquet, card.json; the family's published shape (hypo3d.json, 3dsrbench.tsv,
causalspatial.json, spatial457.tsv with spatial457_questions/<level>.json, or m3verse.jsonl), vlmevalkit.tsv and the lmms-eval task folder
lmms_eval/<task>/; the Hugging Face dataset (data/<split>-00000-of-00001.parquet and the README.md card,
the layout `datasets.load_dataset(folder)` reads); and assets/<scene>/<role>/<file> for every asset the
manifest lists."""

import io
import zipfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Benchmark
from benchmarks.releases import life
from benchmarks.releases.hub import datasets_layout, write_folder
from benchmarks.releases.published import PUBLISHED_NAMES
from core.errors import DomainError

FILE_NAMES = {"jsonl": "items.jsonl", "manifest": "manifest.json", "json": "items.json", "csv": "items.csv",
              "parquet": "items.parquet", "card": "card.json", "vlmevalkit": "vlmevalkit.tsv"}


class Command(BaseCommand):
    help = "Export a versioned release of a benchmark (and write its files into --out)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("version")
        parser.add_argument("--notes", default="")
        parser.add_argument("--out", help="Folder to copy the release files into.")
        parser.add_argument("--require-consensus", action="store_true",
                            help="Leave out items whose answerers did not agree or have not answered yet.")

    def handle(self, slug, version, notes, out, require_consensus, **options):
        benchmark = Benchmark.objects.filter(slug=slug).first()
        if benchmark is None:
            raise CommandError(f"No benchmark '{slug}'.")
        try:
            # its job runs here, not in a worker
            release = life.export_release(benchmark, version, None, notes, require_consensus=require_consensus,
                                              inline=True)
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from exc
        if out:
            folder = Path(out)
            folder.mkdir(parents=True, exist_ok=True)
            for fmt, asset in life.release_files(release).items():
                with asset.file.open("rb") as handle:
                    content = handle.read()
                if fmt == "lmms_eval":
                    with zipfile.ZipFile(io.BytesIO(content)) as archive:
                        archive.extractall(folder)  # our own zip: lmms_eval/<task>/ only
                else:
                    if fmt.startswith("published:"):  # a file beside the published shape (its path)
                        name = asset.meta["path"]
                    else:
                        name = PUBLISHED_NAMES[benchmark.family] if fmt == "published" else FILE_NAMES[fmt]
                    (folder / name).parent.mkdir(parents=True, exist_ok=True)
                    (folder / name).write_bytes(content)
            for path, asset in life.release_assets(release).items():
                target = folder / "assets" / path
                target.parent.mkdir(parents=True, exist_ok=True)
                with asset.file.open("rb") as handle:
                    target.write_bytes(handle.read())
            try:
                write_folder(datasets_layout(release), folder)
            except DomainError as exc:
                raise CommandError(f"{exc.field}: {exc.message}") from exc
        for fmt, reason in release.card.get("not_written", {}).items():
            self.stderr.write(f"{fmt} not written: {reason}")
        left_out = release.card.get("n_left_out_without_consensus", 0)
        self.stdout.write(f"Release {slug} v{release.version}: {release.items.count()} items"
                          + (f", {left_out} left out without consensus" if left_out else "")
                          + (f", files in {out}" if out else ""))
