"""``tokenizer-explorer pipeline``: every stage of tokenizing a text (or each line of it)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_pipeline_parser(subparsers: Any, add_vocab_args: Any, run: Any) -> None:
    """Register ``pipeline`` on the main parser; ``run(args, emit)`` reads and loads."""
    p = subparsers.add_parser(
        "pipeline", help="show every stage: normalized, pre-tokens, tokens, decoded",
        description="Every stage of tokenizing the text: normalized text with what changed, "
                    "pre-tokens (with the pattern alternative that cut them), model tokens, "
                    "post-processor additions, decoded text and what decoding lost.")
    add_vocab_args(p)
    p.add_argument("--lines", action="store_true",
                   help="each input line on its own: one output per line (json: one object "
                        "per line)")
    p.add_argument("--output", choices=["text", "json"], default="text")
    p.add_argument("input", nargs="?", default="-", metavar="FILE|-",
                   help="UTF-8 text (default: stdin)")
    p.set_defaults(func=lambda args: run(args, emit_pipeline))


def emit_pipeline(tokenizer: Any, text: str, args: argparse.Namespace) -> None:
    """Print the stages of ``text`` (each line on its own with ``--lines``)."""
    from explorer.engine.explain.pipeline import pipeline_trace
    from explorer.engine.explain.text_report import format_trace

    if args.lines:
        chunks = [line.removesuffix("\r") for line in text.split("\n")]
        if chunks and chunks[-1] == "":
            chunks.pop()
    else:
        chunks = [text]
    out = sys.stdout
    for chunk in chunks:
        trace = pipeline_trace(tokenizer, chunk)
        if args.output == "json":
            out.write(json.dumps(trace.to_json(), ensure_ascii=False) + "\n")
        else:
            out.write(format_trace(trace))
