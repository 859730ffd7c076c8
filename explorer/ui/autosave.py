"""Autosave of the user's text: never lost, even after a crash.

The text is written (debounced by the window) to ``autosave.txt`` in the app data directory
(or the settings override used by tests) by writing a temporary file, ``fsync``-ing it and
renaming it over the old one, so a crash mid-write leaves the previous copy intact. On start
the window restores it.

:class:`Autosaver` does the writing on a worker thread of its own (one thread, so writes land
in the order they were asked for; a newer request cancels an older one that has not finished,
at its next chunk). The GUI thread only hands over the ``str`` (immutable, so no copy): a
10 MB paste no longer blocks it for the encode, write and ``fsync``. The worker encodes and
writes :data:`CHUNK_CHARS` at a time so the GUI thread gets the GIL between chunks.
:meth:`Autosaver.save_now` (closing the window) waits for a write in flight, then writes
synchronously. Not handled: text typed within the debounce delay before a crash.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

from PySide6.QtCore import QObject, QStandardPaths, QThreadPool, Signal

from explorer.ui.settings import settings_dir
from explorer.workers.latest import LatestRunner

FILE_NAME = "autosave.txt"
CHUNK_CHARS = 1 << 20
"""Characters encoded and written per step (a GIL release and cancellation point each)."""


def autosave_path() -> Path:
    """Where the text is autosaved."""
    base = settings_dir()
    if base is None:
        loc = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
        base = Path(loc) if loc else Path.home() / ".tokenizer-explorer"
    return base / FILE_NAME


def write_chunks(text: str, target: Path) -> Generator[int, None, Path]:
    """Write ``text`` atomically (temp file + fsync + rename), yielding the characters written
    after each chunk; closing the generator early leaves ``target`` untouched."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    done = False
    try:
        with open(tmp, "wb") as f:
            for i in range(0, len(text), CHUNK_CHARS):
                f.write(text[i:i + CHUNK_CHARS].encode("utf-8"))
                yield min(len(text), i + CHUNK_CHARS)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        done = True
    finally:
        if not done:  # cancelled or failed: the previous autosave stays as it was
            tmp.unlink(missing_ok=True)
    return target


def save_text(text: str, path: Path | None = None) -> None:
    """Write ``text`` atomically, on the calling thread."""
    gen = write_chunks(text, path or autosave_path())
    for _ in gen:
        pass


def load_text(path: Path | None = None) -> str | None:
    """The autosaved text, or None when there is none."""
    target = path or autosave_path()
    try:
        return target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


_POOL: QThreadPool | None = None


def _writer_pool() -> QThreadPool:
    # One thread for every autosave: writes are never reordered. Module-level so it outlives
    # any window (a pool owned by a window would be deleted under a running write).
    global _POOL
    if _POOL is None:
        _POOL = QThreadPool()
        _POOL.setMaxThreadCount(1)
    return _POOL


class Autosaver(QObject):
    """Writes the autosave file off the GUI thread."""

    saved = Signal(object)
    """The newest requested text is on disk (the path)."""
    failed = Signal(str)
    """Writing failed (the previous autosave is intact)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runner = LatestRunner(owner=self, pool=_writer_pool())

    @property
    def busy(self) -> bool:
        """True while the newest request is being written."""
        return self._runner.current is not None

    def save(self, text: str, path: Path | None = None) -> None:
        """Write ``text`` on the worker; a write still in progress for older text is dropped."""
        self._runner.submit(write_chunks, text, path or autosave_path(),
                            on_return=self.saved.emit,
                            on_error=lambda e: self.failed.emit(str(e)))

    def wait(self, timeout_ms: int = -1) -> bool:
        """Block until every requested write finished (tests, shutdown); True when done."""
        return _writer_pool().waitForDone(timeout_ms)

    def save_now(self, text: str, path: Path | None = None) -> None:
        """Write ``text`` before returning (closing the window): after any write in flight."""
        self._runner.cancel()
        self.wait()
        save_text(text, path)
