"""Per-block cost of the painter's format ranges (``block_ranges``), grapheme-safe.

Encodes the bundled samples with cl100k, builds the document result the window uses and times
``explorer.ui.token_painter.block_ranges`` for every block (best of ``--repeat`` passes), split
into pure-ASCII blocks (the boundary search is skipped) and the other blocks (the
multilingual and emoji samples: every token edge is checked against the grapheme clusters).
Also times the grapheme helper alone per non-ASCII block, and Qt's ``QTextLayout`` character
attributes (what the painter asked before it switched to ``regex``'s ``\\X``) for comparison.

    python benchmarks/bench_graphemes.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QGuiApplication, QTextLayout

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.ui.token_painter import TokenFormats, block_ranges
from explorer.ui.tokenizer_source import bundled_sources
from explorer.workers.doctokens import encode_document


def _drain(gen):
    try:
        while True:
            next(gen)
    except StopIteration as stop:
        return stop.value


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    _app = QGuiApplication([])
    tok = load_tokenizer(bundled_sources()["bundled:cl100k_base"])
    names = ("welcome", "code", "multilingual", "emoji")
    text = "".join(resource_path(f"samples/{n}.txt").read_text("utf-8") for n in names
                   if resource_path(f"samples/{n}.txt").exists()) * 20
    doc = _drain(encode_document(tok, text))
    lines = text.split("\n")
    formats = TokenFormats()
    groups = {"ascii": [], "non-ascii": []}
    for i, line in enumerate(lines):
        if line:
            groups["ascii" if line.isascii() else "non-ascii"].append((i, line))
    for name, blocks in groups.items():
        t = _best(lambda b=blocks: [block_ranges(doc, i, s, formats) for i, s in b],
                  args.repeat)
        print(f"block_ranges, {name} blocks ({len(blocks)}): {t / len(blocks) * 1e6:.1f} us/block")
    other = [s for _, s in groups["non-ascii"]]
    try:
        from explorer.ui.graphemes import Graphemes
    except ImportError:  # a checkout from before the helper (before/after runs)
        Graphemes = None  # noqa: N806
    if Graphemes is not None:
        t = _best(lambda: [Graphemes(s).is_boundary(1) for s in other], args.repeat)
        print(f"Graphemes (regex \\X) alone: {t / len(other) * 1e6:.1f} us/block")
    t = _best(lambda: [QTextLayout(s).isValidCursorPosition(1) for s in other], args.repeat)
    print(f"QTextLayout attributes alone (old helper): {t / len(other) * 1e6:.1f} us/block")


if __name__ == "__main__":
    main()
