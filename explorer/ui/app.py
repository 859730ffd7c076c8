"""Application start: ``run_app(args)`` opens the window, or renders a screenshot and exits.

Screenshot mode (``--screenshot OUT.png``) uses a throw-away settings directory (never the
user's settings or autosaved text), waits until the text is encoded and painted, raises the
requested view, grabs the window and exits 0 (1 when it cannot finish, 2 on a load error).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer, QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QApplication

from explorer import APP_ID
from explorer.ui.main_window import MainWindow
from explorer.ui.missing_glyphs import quiet_font_probe_warnings
from explorer.ui.qt_platform import platform_problem
from explorer.ui.settings import APPLICATION, ORGANIZATION, use_settings_dir
from explorer.workers.worker import quit_all

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

SCREENSHOT_TIMEOUT_MS = 60_000
SCREENSHOT_SIZE = (1280, 800)
GIL_SWITCH_S = 0.001


def application() -> QApplication:
    """The QApplication (created once, Fusion style)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        # Hand the GIL between the GUI thread and an encode worker every 1 ms instead of
        # 5 ms: a keystroke's result then lands within a frame even while a worker runs.
        sys.setswitchinterval(GIL_SWITCH_S)
        quiet_font_probe_warnings()  # the status bar names scripts without a font instead
        app = QApplication(sys.argv[:1])
        app.setOrganizationName(ORGANIZATION)
        app.setApplicationName(APPLICATION)
        app.setDesktopFileName(APP_ID)
        app.setStyle("Fusion")
    return app


def _read_text(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        # (utf-8-sig: a byte-order mark is no text; the editor would drop it anyway, and the
        # text handed to the first encode's early helper must be the editor's)
        return Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        print(f"tokenizer-explorer: error: cannot read {path}: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def prefetch_start_text(text: str, vocab: str | None) -> None:
    """Start the helper of the text's first encode now, before the window is built (a big
    text only: :func:`~explorer.workers.tail_encode.prefetch_tail`), for the vocabulary the
    window will open (:func:`~explorer.ui.tokenizer_source.start_source`)."""
    from explorer.ui.tokenizer_source import prefetch_encode, start_source

    prefetch_encode(start_source(vocab), text)


def idle_wait(done: Callable[[], bool], timeout_ms: int, *,
              wake: SignalInstance | None = None) -> bool:
    """Run the event loop until ``done()`` (True) or ``timeout_ms`` passes (False).

    Waits idle in an event loop woken every 20 ms (and by ``wake``): a processEvents() spin
    would hold the GIL against the workers: an encode ran ~3x slower, and the statistics
    panel's run did not finish within a minute (5 s when idle)."""
    clock = QElapsedTimer()
    clock.start()
    loop = QEventLoop()
    tick = QTimer()
    tick.setInterval(20)
    tick.timeout.connect(loop.quit)
    if wake is not None:
        wake.connect(loop.quit)
    tick.start()
    try:
        while clock.elapsed() < timeout_ms:
            if done():
                return True
            loop.exec()
        return done()
    finally:
        tick.stop()
        if wake is not None:
            wake.disconnect(loop.quit)


def wait_highlighted(window: MainWindow, timeout_ms: int,
                     stop: Callable[[], bool] = lambda: False) -> bool:
    """Run the event loop until the window is encoded and painted (or ``stop()``/timeout)."""
    stopped = False

    def done() -> bool:
        nonlocal stopped
        if window.is_highlighted and window.doc is not None:
            return True
        stopped = stop()
        return stopped

    return idle_wait(done, timeout_ms, wake=window.highlighted) and not stopped


def take_screenshot(window: MainWindow, out: Path, view: str) -> int:
    """Grab ``window`` into ``out`` after highlighting; the exit status."""
    errors: list[str] = []
    window.loader.report_error = lambda _title, _msg: None  # no dialog offscreen
    window.loader.failed.connect(lambda _source, msg: errors.append(msg))
    # (a text the tokenizer refuses, e.g. a Unigram model without unk and a character it
    # lacks: the error at once, not a minute's wait for a highlight that cannot come)
    window.controller.failed.connect(lambda msg: errors.append(f"encoding failed: {msg}"))
    window.resize(*SCREENSHOT_SIZE)
    window.show()
    if not wait_highlighted(window, SCREENSHOT_TIMEOUT_MS, stop=lambda: bool(errors)):
        msg = errors[0] if errors else "timed out waiting for highlighting"
        print(f"tokenizer-explorer: error: {msg}", file=sys.stderr)
        return 2 if errors else 1
    if not window.show_view(view):
        print(f"tokenizer-explorer: error: unknown view {view!r}; views: "
              f"{', '.join(window.view_names())}", file=sys.stderr)
        return 2
    if view in window.panels:
        # A panel view is the subject of the picture: give its dock most of the height.
        window.resizeDocks([window.panels[view]], [int(window.height() * 0.6)],
                           Qt.Orientation.Vertical)
    # Let raised panels receive the data and lay out before grabbing.
    end = QElapsedTimer()
    end.start()
    idle_wait(lambda: end.elapsed() >= 300 and not window.panels_busy(), SCREENSHOT_TIMEOUT_MS)
    wait_highlighted(window, SCREENSHOT_TIMEOUT_MS)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(out)):
        print(f"tokenizer-explorer: error: cannot write {out}", file=sys.stderr)
        return 2
    return 0


def run_app(args: argparse.Namespace) -> int:
    """Entry of the window (``tokenizer-explorer`` without a command)."""
    screenshot = getattr(args, "screenshot", None)
    tmp = tempfile.TemporaryDirectory(prefix="tokenizer-explorer-") if screenshot else None
    if tmp is not None:
        use_settings_dir(Path(tmp.name))
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # renders without a display
    problem = None if QApplication.instance() else platform_problem(os.environ)
    if problem:  # Qt would abort naming one library only: name them all, exit 2
        print(f"tokenizer-explorer: error: {problem}", file=sys.stderr)
        return 2
    app = application()
    text = _read_text(getattr(args, "text_file", None))
    if text is not None:
        prefetch_start_text(text, getattr(args, "vocab", None))
    window = MainWindow(autosave=screenshot is None)
    window.restore(text=text, source=getattr(args, "vocab", None))
    del text  # the editor and the encoder hold it now (a 10 MB file: 10-40 MB more held here)
    try:
        if screenshot:
            return take_screenshot(window, Path(screenshot), getattr(args, "view", "main"))
        window.show()
        QTimer.singleShot(0, lambda: window.show_view(getattr(args, "view", "main")))
        return app.exec()
    finally:
        window.controller.shutdown()
        quit_all()
        window.close()
        if tmp is not None:
            use_settings_dir(None)
            tmp.cleanup()
