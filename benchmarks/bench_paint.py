"""The editor's painting work for long lines of complex scripts, offscreen (no reference
library paints tokens; the numbers are for before/after comparisons in one machine's hour).

    python benchmarks/bench_paint.py [--repeat 5]

1. ``block_ranges``: the format ranges of every line of the bundled UDHR sample (cl100k, one
   document encode), ms per line: the painter's Python work for a line it paints.
2. A viewport of six Thai and Devanagari paragraphs (UDHR sample) with no font for them on
   this machine: repainting it draws a hex box per character (``MissingGlyphs``), the first
   time (boxes measured and drawn) and again (kept per visual line).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QMainWindow, QPlainTextEdit

from explorer.bundled import resource_path
from explorer.engine.formats import load_tokenizer
from explorer.ui import graphemes
from explorer.ui.missing_glyphs import MissingGlyphs
from explorer.ui.token_painter import TokenFormats, block_ranges
from explorer.workers.doctokens import encode_document


def udhr_sample() -> str:
    return resource_path("corpus", "udhr_sample.txt").read_text(encoding="utf-8")


def ranges_per_line(repeat: int) -> float:
    """Best time of ``block_ranges`` over every line of the UDHR sample, ms per line."""
    text = udhr_sample()
    tokenizer = load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken"))
    gen = encode_document(tokenizer, text)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            doc = stop.value
            break
    lines = text.split("\n")
    formats = TokenFormats()
    best = float("inf")
    for _ in range(repeat):
        graphemes._RECENT.clear()  # each line's clusters found again, as for a new line
        t0 = time.perf_counter()
        for n, line in enumerate(lines):
            block_ranges(doc, n, line, formats)
        best = min(best, time.perf_counter() - t0)
    return best / len(lines) * 1000


def box_repaints(app: QApplication, repeat: int) -> tuple[int, float, float]:
    """Hex boxes drawn, the first repaint and the median later repaint (ms)."""
    paragraphs = [p for p in udhr_sample().split("\n")
                  if p.startswith(("ปฏิญญา", "ทุกคนมีสิทธิใน", "मानव"))][:6]
    window = QMainWindow()
    editor = QPlainTextEdit()
    window.setCentralWidget(editor)
    window.resize(900, 700)
    window.show()
    editor.setPlainText("\n".join(paragraphs))
    glyphs = MissingGlyphs(editor, window.statusBar(), window)
    glyphs.update_text(editor.toPlainText())
    for _ in range(3):
        app.processEvents()
    boxes = len(glyphs.boxes())
    glyphs._line_boxes.clear()
    getattr(glyphs, "_line_images", {}).clear()  # (absent before session 12)
    t0 = time.perf_counter()
    editor.viewport().repaint()
    first = time.perf_counter() - t0
    again = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        editor.viewport().repaint()
        again.append(time.perf_counter() - t0)
    return boxes, first * 1000, statistics.median(again) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    app = QApplication([])
    print(f"block_ranges over the UDHR sample (cl100k): {ranges_per_line(args.repeat):.3f} ms a "
          "line (best of the rounds)")
    boxes, first, again = box_repaints(app, args.repeat)
    if not boxes:
        print("hex boxes: none (this machine has fonts for Thai and Devanagari)")
    else:
        print(f"six Thai/Devanagari paragraphs, {boxes} hex boxes: first repaint {first:.1f} ms, "
              f"later repaints {again:.1f} ms (median)")


if __name__ == "__main__":
    from explorer.cli import exit_process

    main()
    exit_process(0)  # (no interpreter teardown once Qt ran: see exit_process)
