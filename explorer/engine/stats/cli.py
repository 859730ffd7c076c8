"""``tokenizer-explorer stats --vocab A --vocab B ... FILE...``: corpus statistics.

Each line of each file is encoded on its own (as ``encode --lines``) by every tokenizer; the
table goes to stdout as text, CSV or JSON; progress to stderr when it is a terminal.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from explorer.engine.errors import CorpusError
from explorer.engine.generators import run_to_end
from explorer.engine.stats.corpus import CorpusSource
from explorer.engine.stats.report import to_csv, to_json, to_text
from explorer.engine.stats.run import CorpusStats, Progress, corpus_stats


def add_stats_parser(subparsers: Any) -> None:
    """Register ``stats`` on the main parser's subparsers."""
    p = subparsers.add_parser(
        "stats", help="statistics of several tokenizers over a corpus",
        description="Tokens, bytes/chars/words per token, unknown rate, vocabulary use, "
                    "token lengths, frequent tokens and per-script counts of every --vocab "
                    "over every line of FILE...")
    p.add_argument("--vocab", action="append", required=True, metavar="PATH",
                   help="a vocabulary file (repeat for several tokenizers)")
    p.add_argument("--output", choices=["text", "csv", "json"], default="text")
    p.add_argument("--by-script", action="store_true",
                   help="break the counts down by Unicode script")
    p.add_argument("--diff", action="store_true",
                   help="list the lines whose token boundaries differ between the tokenizers")
    p.add_argument("--diff-limit", type=int, default=50, metavar="N",
                   help="differing lines listed with --diff (all are counted; default 50)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="local processes (default: one per core; 1 = this process)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run on a Dask cluster (tcp://host:8786); needs dask[distributed]")
    p.add_argument("inputs", nargs="+", metavar="FILE", help="UTF-8 corpus files")
    p.set_defaults(func=cmd_stats)


def _names(paths: list[str]) -> list[str]:
    names = [Path(p).name for p in paths]
    return [p if names.count(n) > 1 else n for p, n in zip(paths, names, strict=True)]


def cmd_stats(args: argparse.Namespace) -> int:
    """Load every vocabulary, run the statistics, print the table."""
    from explorer.engine.formats import load_tokenizer

    if args.workers is not None and args.workers < 1:
        raise CorpusError("--workers must be at least 1")
    if args.diff_limit < 0:
        raise CorpusError("--diff-limit must be at least 0")
    tokenizers = [load_tokenizer(v) for v in args.vocab]
    sources = [CorpusSource.file(f) for f in args.inputs]
    job = corpus_stats(tokenizers, sources, names=_names(args.vocab), workers=args.workers,
                       scheduler=args.scheduler,
                       diff_limit=args.diff_limit if args.diff else 0)
    show = sys.stderr.isatty()

    def progress(p: Progress) -> None:
        if show and p.total:
            print(f"\r{100 * p.done / p.total:5.1f}% of {p.total / 1e6:,.1f} MB",
                  end="", file=sys.stderr, flush=True)

    stats: CorpusStats = run_to_end(job, progress)
    if show:
        print(file=sys.stderr)
    if args.output == "json":
        sys.stdout.write(to_json(stats, diff=args.diff) + "\n")
    elif args.output == "csv":
        sys.stdout.write(to_csv(stats, by_script=args.by_script, diff=args.diff))
    else:
        sys.stdout.write(to_text(stats, by_script=args.by_script, diff=args.diff))
    return 0
