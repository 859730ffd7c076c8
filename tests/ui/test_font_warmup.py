"""The font warm-up runs in idle time only: not while the user types, not while encoding."""

from __future__ import annotations

from PySide6.QtGui import QFont

from explorer.ui import font_warmup
from explorer.ui.font_warmup import FontWarmer


def test_steps_only_while_nothing_waits(qtbot, monkeypatch):
    monkeypatch.setattr(font_warmup, "IDLE_MS", 0)
    busy = [True]
    warmer = FontWarmer([QFont()], wait_while=lambda: busy[0])
    total = warmer.remaining
    assert total > 10
    warmer.start()
    qtbot.wait(5 * font_warmup.TICK_MS)
    assert warmer.remaining == total  # busy: no step
    busy[0] = False
    qtbot.waitUntil(lambda: warmer.remaining < total, timeout=2000)
    qtbot.waitUntil(lambda: warmer.done, timeout=20_000)


def test_window_warms_up_only_while_the_encoder_is_idle(qtbot, window, monkeypatch):
    """While a big document's first encode runs, the warm-up waits (a layout holds the GIL
    and the encode worker would wait for it); afterwards it goes on."""
    monkeypatch.setattr(font_warmup, "IDLE_MS", 0)
    warmer = window.font_warmer
    assert warmer.remaining > 10  # (else this test would prove nothing)
    steps: list[bool] = []  # per step: was the encoder busy?
    real = font_warmup.lay_out
    monkeypatch.setattr(font_warmup, "lay_out",
                        lambda *a: (steps.append(window.controller.busy), real(*a)))
    window.set_text("some words and more words\n" * 120_000)  # ~3 MB: a first encode
    qtbot.waitUntil(lambda: window.controller.busy, timeout=5000)
    qtbot.waitUntil(lambda: not window.controller.busy, timeout=120_000)
    qtbot.waitUntil(lambda: len(steps) >= 3 or warmer.done, timeout=20_000)
    assert True not in steps
    assert steps or warmer.done  # and it went on afterwards


def test_window_warms_up_only_while_no_vocabulary_loads(qtbot, window, monkeypatch):
    """A vocabulary load waits for every layout too (a 32k SentencePiece model took 2.1 s
    instead of 0.6 s when the window opened on a 10 MB text)."""
    from explorer.bundled import resource_path

    monkeypatch.setattr(font_warmup, "IDLE_MS", 0)
    warmer = window.font_warmer
    assert warmer.remaining > 10
    steps: list[bool] = []  # per step: was a vocabulary loading?
    real = font_warmup.lay_out
    monkeypatch.setattr(font_warmup, "lay_out",
                        lambda *a: (steps.append(window.loader.busy), real(*a)))
    window.open_source(str(resource_path("vocab", "o200k_base.tiktoken")))
    qtbot.waitUntil(lambda: not window.loader.busy, timeout=60_000)
    qtbot.waitUntil(lambda: len(steps) >= 3 or warmer.done, timeout=20_000)
    assert True not in steps
