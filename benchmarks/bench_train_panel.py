"""Training in the window's Train panel (step view and plots live) vs the CLI's ``train``.

    python benchmarks/bench_train_panel.py [--runs 3] [--size-mb 1]

For BPE 16k (byte-level) and Unigram 8k on the deterministic 1 MB corpus
(``train_corpus.py``): wall time of ``tokenizer-explorer train`` (a subprocess, as a user
runs it, ``--quiet``; it includes start-up and writing the file), of the bare engine
(``train()`` drained in this process, no Qt), and of the real window (offscreen) training
with the Train panel shown, its step view tab current and its plots fed: from Start to the
``finished_training`` signal. The CLI and the panel run back to back in alternating order;
the ratio is the median of the per-pair ratios. While the panel trains, and until its step
view has listed every merge, a 5 ms timer on the GUI thread records the largest gap between
its ticks beyond 5 ms: the longest the event loop stalled (wall time, so a loaded machine
inflates it), and the GUI thread's largest CPU time between two ticks (what the window
itself spent in one event-loop turn: redraws, event batches, painting). On Linux a second
column takes out the time the GUI thread and the trainer's thread (which holds the GIL the
GUI thread waits for) waited for a core (``schedstat``: other processes had them): what is
left is the window's own work and its waits for the GIL. The window's
start-up font warm-up (idle-time work) is done before the first run. Prints a Markdown
table; ``--stalls`` also lists every stall over 50 ms with the GUI CPU time inside it.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train_corpus
from PySide6.QtCore import QCoreApplication, QEventLoop, Qt, QTimer

from explorer.engine.trainers import BpeConfig, Corpus, UnigramConfig, run, train
from explorer.ui.app import application
from explorer.ui.dialogs import training as training_dialog
from explorer.ui.dialogs.training import ALGORITHMS, TrainingDialog
from explorer.ui.main_window import MainWindow
from explorer.ui.settings import use_settings_dir

WORK = Path(tempfile.gettempdir()) / "tokenizer-explorer-bench"
TICK_MS = 5
STALLS = False
ROOT = Path(__file__).resolve().parent.parent


def cli_seconds(algorithm: str, vocab: int, corpus: Path, out: Path) -> float:
    """Wall time of ``python -m explorer train`` in a fresh process."""
    cmd = [sys.executable, "-m", "explorer", "train", "--algorithm", algorithm,
           "--vocab-size", str(vocab), "--output", str(out), "--quiet", str(corpus)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, cwd=ROOT)
    return time.perf_counter() - t


def engine_seconds(config: BpeConfig | UnigramConfig, corpus: Path) -> float:
    """Wall time of the bare trainer in this process."""
    t = time.perf_counter()
    run(train(Corpus.from_files([corpus]), config))
    return time.perf_counter() - t


def _run_queue_wait(tid: int | None = None) -> float:
    """Seconds a thread (this one by default) has waited for a core so far (Linux
    schedstat; 0 elsewhere)."""
    path = "/proc/thread-self/schedstat" if tid is None else f"/proc/self/task/{tid}/schedstat"
    try:
        with open(path) as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


TRAINER_THREAD: list[int] = []
"""Native id of the thread pulling the trainer (recorded by :func:`_recording_train`)."""


def _recording_train(*args: Any, **kwargs: Any) -> Iterator[Any]:
    """``train`` that records which thread runs it."""
    TRAINER_THREAD[:] = [threading.get_native_id()]
    yield from train(*args, **kwargs)


def panel_seconds(window: MainWindow, prefix: str, vocab: int, corpus: Path
                  ) -> tuple[float, float, int, float, float]:
    """Train in the window's Train panel; (seconds, max event-loop stall in ms, redraws,
    GUI-thread CPU ms of the longest event-loop turn, max stall in ms without the time the
    GUI thread waited for a core)."""
    window.show_view("train")
    dialog = window.panels["train"].findChild(TrainingDialog)
    assert dialog is not None
    dialog.algorithm.setCurrentText(next(k for k in ALGORITHMS if k.startswith(prefix)))
    dialog.vocab_size.setValue(vocab)
    if not any(Path(f) == corpus for f in dialog.corpus_files()):
        for i in range(dialog.corpus.count()):
            dialog.corpus.item(i).setCheckState(Qt.CheckState.Unchecked)
        dialog.add_corpus_files([corpus])
    dialog.tabs.setCurrentIndex(0)  # the step view: sample, table, merge list live
    redraws = 0
    busiest = 0.0  # GUI-thread CPU seconds between two ticks
    original_flush = dialog.step_view.flush

    def counting_flush(**kwargs: bool) -> None:
        nonlocal redraws
        dirty = dialog.step_view._dirty
        original_flush(**kwargs)
        if dirty and not dialog.step_view._dirty:
            redraws += 1

    dialog.step_view.flush = counting_flush  # type: ignore[method-assign]
    loop = QEventLoop()
    dialog.finished_training.connect(loop.quit)
    stall = own_stall = 0.0
    last = time.perf_counter()
    last_cpu = time.thread_time()
    last_wait = last_trainer_wait = 0.0
    TRAINER_THREAD.clear()

    def waits() -> tuple[float, float]:
        trainer = _run_queue_wait(TRAINER_THREAD[0]) if TRAINER_THREAD else 0.0
        return _run_queue_wait(), trainer

    def tick() -> None:
        nonlocal stall, own_stall, last, last_cpu, last_wait, last_trainer_wait, busiest
        now, cpu, (wait, trainer_wait) = time.perf_counter(), time.thread_time(), waits()
        gap = now - last - TICK_MS / 1000
        gui_waited = wait - last_wait
        # The trainer holds the GIL: while it waits for a core, so does the GUI thread.
        trainer_waited = max(0.0, trainer_wait - last_trainer_wait) if last_trainer_wait else 0
        stall = max(stall, gap)
        own_stall = max(own_stall, gap - min(gap, gui_waited + trainer_waited))
        busiest = max(busiest, cpu - last_cpu)
        if STALLS and gap > 0.05:
            print(f"  stall {gap * 1000:.0f} ms at {now - t:.2f} s: GUI CPU "
                  f"{(cpu - last_cpu) * 1000:.0f} ms, GUI / trainer thread waiting for a core "
                  f"{gui_waited * 1000:.0f} / {trainer_waited * 1000:.0f} ms, "
                  f"phase {dialog._phase}", file=sys.stderr)
        last, last_cpu, last_wait, last_trainer_wait = now, cpu, wait, trainer_wait

    timer = QTimer()
    timer.setInterval(TICK_MS)
    timer.timeout.connect(tick)
    t = time.perf_counter()
    dialog.start()
    last, last_cpu = time.perf_counter(), time.thread_time()
    last_wait, last_trainer_wait = waits()
    timer.start()
    loop.exec()
    elapsed = time.perf_counter() - t
    while dialog.busy():  # stalls count until the step view has listed every merge too
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, TICK_MS)
    timer.stop()
    dialog.finished_training.disconnect(loop.quit)
    dialog.step_view.flush = original_flush  # type: ignore[method-assign]
    assert dialog.model is not None and dialog.model.vocab_size == vocab
    return elapsed, stall * 1000, redraws, busiest * 1000, own_stall * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--size-mb", type=float, default=1.0)
    ap.add_argument("--stalls", action="store_true",
                    help="list every event-loop stall over 50 ms (stderr)")
    args = ap.parse_args()
    global STALLS
    STALLS = args.stalls
    training_dialog.train = _recording_train  # type: ignore[assignment]
    corpus = train_corpus.build(int(args.size_mb * 1_000_000), WORK)
    use_settings_dir(Path(tempfile.mkdtemp(prefix="bench-train-panel-")))
    application()
    window = MainWindow(autosave=False)
    window.resize(1280, 800)
    window.show()
    window.restore(text="hello world\n")
    while not window.font_warmer.done:  # start-up work, done in idle time before a user
        QCoreApplication.processEvents()  # would start a training: not measured here
        time.sleep(0.005)
    rows = []
    for algorithm, prefix, vocab, config, ext in (
            ("bpe", "BPE (byte-level", 16_000, BpeConfig(vocab_size=16_000), ".json"),
            ("unigram", "Unigram", 8_000, UnigramConfig(vocab_size=8_000), ".model")):
        cli: list[float] = []
        panel: list[float] = []
        stalls: list[float] = []
        redraws: list[int] = []
        busiest: list[float] = []
        own: list[float] = []
        engine = [engine_seconds(config, corpus) for _ in range(max(1, args.runs // 2))]
        for i in range(args.runs):
            for which in ((0, 1) if i % 2 == 0 else (1, 0)):
                if which == 0:
                    cli.append(cli_seconds(algorithm, vocab, corpus, WORK / f"cli{ext}"))
                else:
                    seconds, stall, count, cpu, mine = panel_seconds(window, prefix, vocab,
                                                                     corpus)
                    own.append(mine)
                    panel.append(seconds)
                    busiest.append(cpu)
                    stalls.append(stall)
                    redraws.append(count)
        ratio = statistics.median(p / c for p, c in zip(panel, cli, strict=True))
        rows.append((f"{algorithm.upper() if algorithm == 'bpe' else 'Unigram'} "
                     f"{vocab // 1000}k", statistics.median(engine), statistics.median(cli),
                     statistics.median(panel), ratio, max(stalls), max(own), max(busiest),
                     statistics.median(r / p for r, p in zip(redraws, panel, strict=True))))
    window.close()
    print(f"corpus {corpus.stat().st_size / 1e6:.2f} MB, {args.runs} CLI/panel pairs\n")
    print(f"load average {' / '.join(f'{x:.1f}' for x in os.getloadavg())} at the end\n")
    print("| run | engine only | CLI `train` | Train panel (live) | panel / CLI "
          "| max event-loop stall (wall) | same, less waits for a core | longest GUI turn (CPU) "
          "| step-view redraws/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, eng, c, p, r, s, mine, cpu, rd in rows:
        print(f"| {name} | {eng:.2f} s | {c:.2f} s | {p:.2f} s | **{r:.2f}x** | {s:.0f} ms "
              f"| {mine:.0f} ms | {cpu:.0f} ms | {rd:.1f} |")


if __name__ == "__main__":
    from explorer.cli import exit_process

    main()
    exit_process(0)  # (no interpreter teardown once Qt ran: see exit_process)
