"""``tokenizer-explorer parity --vocab PATH FILE``: every line through every implementation.

Prints the implementations compared (and those that cannot run here, with their pip
command), the number of lines and the differing lines (per implementation, with the stage of
the first differing span). Exit status: 0 when every implementation agrees on every line,
1 when some differ, 2 on bad input (also when no reference implementation can run: nothing
would be compared).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from explorer.engine.errors import TokenizerError
from explorer.engine.generators import run_to_end
from explorer.engine.parity.adapters import implementations_for
from explorer.engine.parity.lines import FileParity, Progress, check_lines, to_csv, to_json
from explorer.engine.stats.corpus import CorpusSource

EXIT_DIFFER = 1


class NothingToCompare(TokenizerError):  # noqa: N818 - reads as the message
    """No reference implementation can read the vocabulary here."""


def add_parity_parser(subparsers: Any, add_vocab_args: Any) -> None:
    """Register ``parity`` on the main parser's subparsers."""
    p = subparsers.add_parser(
        "parity", help="compare our engine with the reference libraries, line by line",
        description="Encode each line of FILE with our engine and every installed reference "
                    "implementation that reads the vocabulary; exit 0 when all agree, 1 when "
                    "some lines differ, 2 on bad input.")
    add_vocab_args(p)
    p.add_argument("--output", choices=["text", "csv", "json"], default="text")
    p.add_argument("--show", type=int, default=20, metavar="N",
                   help="text output: differing lines printed (default 20; all are counted)")
    p.add_argument("input", metavar="FILE", help="UTF-8 text, one case per line")
    p.set_defaults(func=cmd_parity)


def _shown(value: str | None) -> str:
    return "(not exposed)" if value is None else repr(value)


def _text_report(result: FileParity, show: int) -> str:
    out = [f"implementations: {', '.join(result.implementations)}"]
    out += [f"not available: {u}" for u in result.unavailable]
    out.append(f"lines: {result.lines:,}")
    counts = result.counts()
    distinct = len({d.line for d in result.differing})
    out.append(f"differing lines: {distinct:,}"
               + "".join(f"\n  {name}: {n:,}" for name, n in counts.items()))
    if result.differing:
        out.append("by stage: " + ", ".join(f"{s} {n:,}"
                                             for s, n in sorted(result.stage_counts().items())))
    for d in result.differing[:show]:
        where = "error" if d.first_token is None else f"token {d.first_token}"
        out.append(f"line {d.line} [{d.implementation}] {where}: {d.text}")
        out.append(f"  tokens: ours {d.ours!r} vs {d.theirs!r}")
        if d.first_token is not None:
            out.append(f"  {d.stage}: {d.explanation}")
            if d.ours_stage is not None or d.theirs_stage is not None:
                out.append(f"  {d.stage} output: ours {_shown(d.ours_stage)} vs "
                           f"{_shown(d.theirs_stage)}")
    if len(result.differing) > show:
        out.append(f"... {len(result.differing) - show:,} more (use --output csv or json)")
    return "\n".join(out) + "\n"


def cmd_parity(args: argparse.Namespace) -> int:
    """Run the check; print the report; 0 agree, 1 differ."""
    source = CorpusSource.file(args.input)
    total = source.size()
    impls = implementations_for(args.vocab, fmt=args.format, preset=args.preset)
    if not impls.references:
        missing = "; ".join(u.describe() for u in impls.unavailable) or "none applies"
        raise NothingToCompare(f"no reference implementation can read {args.vocab} here: "
                               f"{missing}")
    job = check_lines(impls, (line for line, _ in source.lines()))
    show_progress = sys.stderr.isatty() and total > 1_000_000

    def progress(p: Progress) -> None:
        if show_progress:
            print(f"\r{p.done:,} lines", end="", file=sys.stderr, flush=True)

    result: FileParity = run_to_end(job, progress)
    if show_progress:
        print(file=sys.stderr)
    if args.output == "json":
        sys.stdout.write(to_json(result) + "\n")
    elif args.output == "csv":
        sys.stdout.write(to_csv(result))
    else:
        sys.stdout.write(_text_report(result, args.show))
    return 0 if result.agree else EXIT_DIFFER
