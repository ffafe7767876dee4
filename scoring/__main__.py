"""Command line: python -m scoring --family FAMILY --gold GOLD.jsonl --pred PRED.jsonl [--profile NAME] [--by TAG]...
[--ci LEVEL [--ci-seed N] [--ci-cluster TAG]]

`--gold` may be a release folder HypoLab exported (its items.jsonl, else its published-shape file) or a
published-shape file (scoring.release_gold).

`--no-sbert` skips Hypo3D's SBERT where the optional extra is installed. `--ci 0.95` adds a
bootstrap interval beside every metric (`scoring.uncertainty`), the same for the same seed.

Prints one JSON object (ASCII, so any terminal or pipe takes it). Bad lines are reported
in its `errors`; when any record was left out (unreadable, invalid, a duplicate, or a
prediction for an unknown id: `n_dropped`) it exits 1 after printing, unless
`--allow-partial`. Otherwise it exits 0. Bad arguments or an unreadable file exit 2 with
one line on stderr.
"""

import argparse
import json
import sys

from .engine import FAMILIES, Source, get_family, resolve_profile, score_records
from .family import Run
from .records import read_jsonl
from .release_gold import is_release, release_gold
from .uncertainty import DEFAULT_SEED, Bootstrap


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m scoring", description="Score predictions against gold answers.")
    parser.add_argument("--family", required=True, choices=FAMILIES)
    parser.add_argument(
        "--gold",
        required=True,
        help="gold JSONL, one item per line; or a release folder (its items.jsonl, else its published-shape "
        "file) or a published-shape file (hypo3d.json, 3dsrbench.tsv, ...)",
    )
    parser.add_argument("--pred", required=True, help="predictions JSONL, one per line")
    parser.add_argument("--profile", help="scoring profile (default: the family's official evaluation)")
    parser.add_argument(
        "--no-sbert",
        action="store_true",
        help="hypo3d: skip SBERT even when the optional extra is installed (it loads a model)",
    )
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="exit 0 even when records were left out (unknown ids, invalid or duplicate lines)",
    )
    parser.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="TAG",
        help="also report per value of this tag (repeatable)",
    )
    parser.add_argument(
        "--ci",
        type=float,
        metavar="LEVEL",
        help="add a bootstrap interval of this coverage (e.g. 0.95) beside every metric, overall and per group",
    )
    parser.add_argument(
        "--ci-seed",
        type=int,
        default=DEFAULT_SEED,
        metavar="N",
        help=f"seed of the bootstrap (default {DEFAULT_SEED}): the same seed gives the same intervals",
    )
    parser.add_argument(
        "--ci-cluster",
        metavar="TAG",
        help="resample the values of this gold tag (e.g. a participant) as clusters, not single items",
    )
    return parser


def read_lines(path: str) -> list[bytes]:
    with open(path, "rb") as file:
        return file.read().split(b"\n")


def read_gold(path: str, family: str) -> list[bytes]:
    """The gold lines: the file as it is, or a release read into gold lines (scoring.release_gold)."""
    if not is_release(path, family):
        return read_lines(path)
    try:
        return [json.dumps(line).encode() for line in release_gold(path, family)]
    except (KeyError, IndexError, TypeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not a release of {family} ({error!r})") from None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        family = get_family(args.family)
        resolve_profile(family, args.profile)
        if args.ci is None and (args.ci_cluster or args.ci_seed != DEFAULT_SEED):
            raise ValueError("--ci-seed and --ci-cluster need --ci LEVEL")
        bootstrap = None if args.ci is None else Bootstrap(args.ci, seed=args.ci_seed, cluster=args.ci_cluster)
        gold_lines = read_gold(args.gold, family.name)
        pred_lines = read_lines(args.pred)
    except (ValueError, OSError) as error:
        print(f"python -m scoring: error: {error}", file=sys.stderr)
        return 2
    run = Run(sbert=False if args.no_sbert else None, ci=bootstrap)
    # read lazily, so each file's errors come in line order: bad JSON and bad records together
    gold = Source(read_jsonl(gold_lines, "gold", run.errors), "gold line {}")
    preds = Source(read_jsonl(pred_lines, "prediction", run.errors), "prediction line {}")
    result = score_records(family, gold, preds, args.profile, args.by, run)
    print(json.dumps(result))
    if result["n_dropped"] and not args.allow_partial:
        print(
            f"python -m scoring: error: {result['n_dropped']} record(s) left out (see 'errors'); "
            "pass --allow-partial to accept a partial score",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
