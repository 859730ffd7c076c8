"""GUI-thread time of one autosave of a big text (the window's ``autosave_now`` after a paste).

Writes ``--size-mb`` of text (the bundled samples repeated) to a temporary autosave file:

- synchronously with ``explorer.ui.autosave.save_text`` (what the window did on the GUI
  thread before the autosave worker; on an old checkout this is the only mode measured);
- through ``Autosaver.save`` (the window's path now): how long the call blocks the GUI
  thread, how long until the ``saved`` signal, and the gaps between the ticks of a 10 ms
  timer while the worker writes (p50 / max: the GIL shared with the worker).

    python benchmarks/bench_autosave.py [--size-mb 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer

from explorer.bundled import resource_path
from explorer.ui import autosave


def _text(size_mb: float) -> str:
    unit = "".join(resource_path(f"samples/{n}.txt").read_text("utf-8")
                   for n in ("welcome", "code", "multilingual", "emoji"))
    n = int(size_mb * 1_000_000)
    return (unit * (n // len(unit.encode()) + 1))[:n]


def _background(app: QCoreApplication, text: str, target: Path) -> tuple[float, float, list]:
    saver = autosave.Autosaver()
    done: list[float] = []
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    saver.saved.connect(lambda _p: done.append(time.perf_counter()))
    timer.start()
    t0 = time.perf_counter()
    saver.save(text, target)
    call = time.perf_counter() - t0
    ticks.append(time.perf_counter())
    while not done:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 5)
    timer.stop()
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    return call, done[0] - t0, gaps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=float, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None,
                        help="where to write (default: a temporary directory)")
    args = parser.parse_args()
    app = QCoreApplication([])
    text = _text(args.size_mb)
    print(f"{len(text):,} chars, {len(text.encode()) / 1e6:.1f} MB UTF-8")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        target = Path(tmp) / autosave.FILE_NAME
        for run in range(args.runs):
            t0 = time.perf_counter()
            autosave.save_text(text, target)
            sync = time.perf_counter() - t0
            line = f"run {run + 1}: save_text on the GUI thread {sync * 1e3:.0f} ms"
            if hasattr(autosave, "Autosaver"):
                call, total, gaps = _background(app, text, target)
                assert target.read_text("utf-8") == text
                line += (f"; Autosaver.save call {call * 1e3:.2f} ms, written after "
                         f"{total * 1e3:.0f} ms, timer gaps p50 "
                         f"{statistics.median(gaps) * 1e3:.1f} / max {max(gaps) * 1e3:.1f} ms")
            print(line)


if __name__ == "__main__":
    main()
