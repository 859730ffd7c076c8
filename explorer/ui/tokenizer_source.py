"""Where tokenizers come from (bundled files, opened files) and loading them off the GUI thread.

A *source* is a string: ``bundled:<name>`` for a vocabulary in resources/vocab, or a file
path. :class:`TokenizerLoader` loads on a worker (latest request wins), keeps loaded
tokenizers by source so switching back is instant, and reports failures through an injectable
``report_error(title, message)`` (a QMessageBox in the app; a recorder in tests).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from explorer.bundled import resource_path
from explorer.engine.tokenizer import Tokenizer
from explorer.workers.jobs import Loaded, load_job
from explorer.workers.latest import LatestRunner

BUNDLED_PREFIX = "bundled:"
DEFAULT_SOURCE = "bundled:cl100k_base"
FILE_TYPES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tiktoken ranks", ("*.tiktoken",)),
    ("Hugging Face tokenizer.json", ("tokenizer.json", "*.json")),
    ("Model folder files", ("tokenizer_config.json", "special_tokens_map.json", "config.json",
                            "vocab.json", "merges.txt", "vocab.txt", "tokenizer.model",
                            "chat_template.json", "chat_template.jinja")),
    ("SentencePiece model", ("*.model", "*.model.v*")),
    ("GGUF", ("*.gguf",)),
    ("tiktoken JSON: js-tiktoken, claude.json", ("*.json", "*.js")),
    ("Mistral tekken", ("tekken*.json",)),
    ("minbpe", ("*.model", "*.vocab")),
)
"""File > Open's file types: (name, glob patterns). Folders: File > Open Model Folder."""


def file_filter(types: tuple[tuple[str, tuple[str, ...]], ...] = FILE_TYPES) -> str:
    """The Qt name-filter string: every vocabulary first, then each type, then all files."""
    every = list(dict.fromkeys(p for _, patterns in types for p in patterns))
    parts = [f"Vocabularies ({' '.join(every)})"]
    parts += [f"{name} ({' '.join(patterns)})" for name, patterns in types]
    return ";;".join([*parts, "All files (*)"])


FILE_FILTER = file_filter()

ErrorReporter = Callable[[str, str], None]


def bundled_sources() -> dict[str, Path]:
    """Bundled vocabularies: ``bundled:<stem>`` -> path."""
    out = {}
    for p in sorted(resource_path("vocab").iterdir()):
        if p.is_file() and not p.name.startswith((".", "_")) and p.suffix != ".md":
            out[BUNDLED_PREFIX + p.name.split(".")[0]] = p
    return out


def source_path(source: str) -> Path:
    """File path of a source."""
    if source.startswith(BUNDLED_PREFIX):
        found = bundled_sources().get(source)
        return found if found is not None else resource_path("vocab", source[len(
            BUNDLED_PREFIX):])
    return Path(source)


def start_source(given: str | None) -> str:
    """The vocabulary the window opens with: ``given`` (``--vocab``), else the remembered
    one, else the default."""
    from explorer.ui.settings import Settings

    return given or Settings().vocabulary or DEFAULT_SOURCE


def prefetch_encode(source: str, text: str) -> None:
    """Before a big ``text`` goes into the editor (Qt's ``insertText`` of 10 MB holds the
    GIL for ~1 s), start the helper its first encode with ``source`` will adopt
    (:func:`~explorer.workers.tail_encode.prefetch_tail`; nothing for a short text, or a
    source that is no file, such as a trained tokenizer shown from the Train panel)."""
    from explorer.workers.tail_encode import PARALLEL_MIN, prefetch_tail

    if len(text) < PARALLEL_MIN or source.startswith("trained:"):
        return
    path = source_path(source)
    if path.exists():
        prefetch_tail(str(path), text)


def source_label(source: str) -> str:
    """Short name for menus and the status bar."""
    if source.startswith(BUNDLED_PREFIX):
        return source[len(BUNDLED_PREFIX):]
    return Path(source).name


def message_box_reporter(parent: QWidget) -> ErrorReporter:
    """Errors as a warning dialog over ``parent``."""
    def report(title: str, message: str) -> None:
        QMessageBox.warning(parent, title, message)
    return report


class TokenizerLoader(QObject):
    """Loads sources on a worker and caches the results."""

    loaded = Signal(str, object)
    """``(source, Tokenizer)``."""
    failed = Signal(str, str)
    """``(source, message)``."""
    loading = Signal(str)

    def __init__(self, report_error: ErrorReporter, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.report_error = report_error
        self._cache: dict[str, Tokenizer] = {}
        self._runner = LatestRunner(self)
        self._pending = ""

    @property
    def busy(self) -> bool:
        """True while a load runs."""
        return self._runner.current is not None

    def cached(self) -> dict[str, Tokenizer]:
        """Every tokenizer loaded so far, by source."""
        return dict(self._cache)

    def add(self, source: str, tokenizer: Tokenizer) -> None:
        """Register a tokenizer made elsewhere (e.g. just trained) and select it."""
        self._cache[source] = tokenizer
        self.loaded.emit(source, tokenizer)

    def load(self, source: str) -> None:
        """Load ``source`` (instantly when cached); emits ``loaded`` or ``failed``."""
        if source in self._cache:
            self._runner.cancel()
            self.loaded.emit(source, self._cache[source])
            return
        self._pending = source
        self.loading.emit(source)
        self._runner.submit(load_job, source_path(source),
                            on_return=self._on_loaded, on_error=self._on_error)

    def _on_loaded(self, result: Loaded) -> None:
        self._cache[self._pending] = result.tokenizer
        self.loaded.emit(self._pending, result.tokenizer)

    def _on_error(self, error: object) -> None:
        source = self._pending
        message = str(error) or type(error).__name__
        if not isinstance(error, Exception) or type(error).__module__.startswith("explorer"):
            text = f"Could not open {source_label(source)}:\n\n{message}"
        else:  # an unexpected failure: still one readable line, with the exception type
            text = f"Could not open {source_label(source)}:\n\n{type(error).__name__}: {message}"
        self.failed.emit(source, message)
        self.report_error("Cannot open vocabulary", text + "\n\nYour text is kept.")
