"""A huge paste in the real window: how long the GUI thread blocks, and how live it stays.

Offscreen window on the bundled cl100k; pastes ~10 MB (the bundled corpus repeated) through
the editor's own paste path (``insertFromMimeData``), then measures until the whole document
is encoded and highlighted:

- how long the paste call itself blocks the GUI thread (and, in the same run, how long a
  bare ``QPlainTextEdit.insertPlainText`` of the same text takes: Qt's own floor);
- the gaps between ticks of a 10 ms timer while the worker encodes (p50/p95/max): how
  interactive the window stays.

    python benchmarks/bench_paste.py [--size-mb 10] [--text-file DOC]

``--text-file``: paste a real document (``benchmarks/train_corpus.py``'s ``build`` writes a
10 MB English one) instead of botchan repeated, whose every chunk is in the tokenizer's memo
after its first 270 kB.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QMimeData, QTimer
from PySide6.QtWidgets import QPlainTextEdit

from explorer.bundled import resource_path
from explorer.ui.app import application, idle_wait
from explorer.ui.main_window import MainWindow
from explorer.ui.settings import use_settings_dir


def _wait(app, cond, timeout_ms: int) -> bool:
    """Run the event loop until ``cond()``: idle in the loop (``idle_wait``), as the app
    waits. (A ``processEvents()`` spin held the GIL against the encode worker: the same
    paste took 3.5 s in one run and 23 s in the next.)"""
    return idle_wait(cond, timeout_ms)


def main() -> None:
    """Run the benchmark and print its numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=10.0)
    parser.add_argument("--text-file", default=None,
                        help="paste this file's text instead of botchan repeated")
    args = parser.parse_args()
    settings = tempfile.TemporaryDirectory(prefix="bench-paste-")  # removed at exit
    use_settings_dir(Path(settings.name))
    app = application()
    if args.text_file is not None:  # a real document (repeating botchan warms every cache)
        text = Path(args.text_file).read_text(encoding="utf-8-sig")
        n = len(text)
    else:
        corpus = resource_path("corpus", "botchan.txt").read_text(encoding="utf-8")
        n = int(args.size_mb * 1_000_000)
        text = (corpus * (n // len(corpus) + 1))[:n]

    bare = QPlainTextEdit()
    bare.show()
    t0 = time.perf_counter()
    bare.insertPlainText(text)
    qt_floor = time.perf_counter() - t0
    bare.close()

    window = MainWindow(autosave=False)
    window.restore(text=None, source=None)
    window.resize(1280, 800)
    window.show()
    _wait(app, lambda: window.is_highlighted and window.doc is not None, 30_000)

    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(10)
    mime = QMimeData()
    mime.setText(text)
    t0 = time.perf_counter()
    window.editor.insertFromMimeData(mime)
    blocked = time.perf_counter() - t0
    last[0] = time.perf_counter()
    t1 = time.perf_counter()
    done = _wait(app, lambda: (window.is_highlighted and window.doc is not None
                               and len(window.doc.text) >= n), 600_000)
    total = time.perf_counter() - t1
    timer.stop()
    window.controller.shutdown()
    gaps.sort()
    print(f"pasted {n / 1e6:.1f} M characters; machine load average {os.getloadavg()[0]:.1f}")
    print(f"paste call blocked the GUI thread {blocked:.2f} s "
          f"(bare QPlainTextEdit.insertPlainText of the same text: {qt_floor:.2f} s)")
    print(f"encode + highlight on the worker: {total:.1f} s ({'done' if done else 'TIMED OUT'})")
    print(f"event-loop gaps meanwhile (10 ms timer): p50 {statistics.median(gaps) * 1e3:.0f} ms, "
          f"p95 {gaps[int(len(gaps) * 0.95)] * 1e3:.0f} ms, max {gaps[-1] * 1e3:.0f} ms")


if __name__ == "__main__":
    from explorer.cli import exit_process

    main()
    exit_process(0)  # (no interpreter teardown once Qt ran: see exit_process)
