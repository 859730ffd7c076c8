"""The explorer window: the highlighting editor in the middle, docks around it.

The window wires parts together and owns no algorithm: :class:`EncodingController` keeps the
tokens current, :class:`TokenPainter` colours them in the editor, :class:`TokenLinker` links
editor, table and inspector, :class:`TokenizerLoader` loads vocabularies, :mod:`menus` builds
the menus. Side panels register themselves (:mod:`explorer.ui.panels.registry`; the window
imports no panel), dock with :meth:`MainWindow.add_panel` and follow the window through its
signals:

- ``tokenizer_changed(Tokenizer)``: the current tokenizer changed (loaded or picked);
- ``text_changed(str)``: the text changed (debounced, :data:`TEXT_SIGNAL_MS`);
- ``cursor_token_changed(int, TokenView | None)``: the token under the cursor;
- ``encoding_ready(DocTokens)``: a new result for the whole text (``doc.text``,
  ``doc.tokens()``, ``doc.token_count``);
- ``painted()``: the editor shows the current text's colours (benchmarks);
- ``highlighted()``: that, and the token table, inspector and counts follow too
  (screenshots, tests).

What a keystroke costs is kept to the highlight: its result is painted at once, while the
token table, inspector, table selection, outline and status counts follow the text only once
typing settles (:data:`VIEWS_SETTLE_MS` after the last edit or result; their repaints cost
several times the highlight's). A result that is not an edit (a tokenizer, a first encode)
updates them at once.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Q_ARG, QMetaObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QDockWidget, QFileDialog, QMainWindow, QWidget

from explorer.engine.formats import FOLDER_FILES
from explorer.engine.tokenizer import Tokenizer
from explorer.ui.autosave import Autosaver, load_text
from explorer.ui.boundary_tips import BoundaryTips
from explorer.ui.edit_repaint import EditRepaint
from explorer.ui.editor import TokenEditor, local_files
from explorer.ui.encoding_controller import EncodingController
from explorer.ui.font_warmup import FontWarmer
from explorer.ui.gui_gc import collect_on_gui_thread
from explorer.ui.ids_view import IdsView
from explorer.ui.inspector import InspectorPanel
from explorer.ui.linking import TokenLinker
from explorer.ui.menus import build_menus
from explorer.ui.missing_glyphs import MissingGlyphs
from explorer.ui.paint_hold import PaintHold
from explorer.ui.palettes import DEFAULT_PALETTE, PALETTES, THEME_TEXT, theme_palette
from explorer.ui.samples import DEFAULT_SAMPLE, sample_text
from explorer.ui.settings import Settings
from explorer.ui.status import StatusArea
from explorer.ui.token_painter import LONG_LINE_CHARS, TokenFormats, TokenPainter
from explorer.ui.token_table import TokenTableModel, TokenTableView, combined_rows
from explorer.ui.tokenizer_picker import TokenizerPicker, build_toolbar
from explorer.ui.tokenizer_source import (
    FILE_FILTER,
    ErrorReporter,
    TokenizerLoader,
    message_box_reporter,
    prefetch_encode,
    source_label,
    start_source,
)
from explorer.workers.doctokens import Change, DocTokens
from explorer.workers.jobs import incremental_window
from explorer.workers.latest import Debounce

TEXT_SIGNAL_MS = 250
TEXT_WAITS_CHARS = 1_000_000
"""A text this long is announced (``text_changed``: the missing-glyph scan, the panels that
follow the text) only once its encode is done, or after :data:`TEXT_WAITS_S`: those take the
GIL from the encode (the glyph scan of a 10 MB text ~90 ms) and the highlight comes first."""
TEXT_WAITS_S = 5.0
SOON_TEXT_CHARS = 1_000_000
"""A start-up text this long goes into the editor from the event loop (:meth:`MainWindow.
set_text_soon`), beside the vocabulary's load."""
VIEWS_SETTLE_MS = 100
"""The token table, inspector and counts follow an edit this long after typing settles."""
AUTOSAVE_MS = 1000
TEXT_SUFFIXES = {".txt", ".md", ".py", ".rst", ".csv", ".html", ".c", ".cpp", ".js", ".ts",
                 ".rs", ".go", ".java", ".xml", ".yaml", ".yml", ".toml"}
Area = Qt.DockWidgetArea


class MainWindow(QMainWindow):
    """The main window. ``report_error`` replaces the error dialog (tests)."""

    tokenizer_changed = Signal(object)
    text_changed = Signal(object)  # a str; object: no 10 MB QString copy per emit
    cursor_token_changed = Signal(int, object)
    encoding_ready = Signal(object)
    painted = Signal()
    highlighted = Signal()

    def __init__(self, report_error: ErrorReporter | None = None, autosave: bool = True,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Tokenizer Explorer")
        app = QApplication.instance()
        if app is not None:
            collect_on_gui_thread(app)  # never a Qt destructor on a worker thread
        self.setAcceptDrops(True)
        self.resize(1200, 780)
        self.settings = Settings()
        self.panels: dict[str, QDockWidget] = {}
        self.panel_objects: dict[str, object] = {}
        """Installed side panels by registered name (:mod:`explorer.ui.panels.registry`)."""
        self.extra_views: dict[str, object] = {}
        self._shown: dict[str, bool] = {}
        self.source = ""

        self.editor = TokenEditor(self)
        self.setCentralWidget(self.editor)
        # (first on the document's signals: it lets the layout's go before the others run)
        self.edit_repaint = EditRepaint(self.editor)
        self.controller = EncodingController(self.editor.document(), self)
        self.painter = TokenPainter(self.editor.document(), self.editor.visible_blocks, self)
        self.table_model = TokenTableModel(self)
        self.table = TokenTableView(self)
        self.table.setModel(self.table_model)
        self.inspector = InspectorPanel(self)
        self.ids_view = IdsView(self)
        self.linker = TokenLinker(self.editor, self.table_model, self.table, self.inspector, self)
        self.boundary_tips = BoundaryTips(self.editor, lambda: self.tokenizer,
                                          self.linker.is_boundary_at, self)
        self.tokenizer_changed.connect(lambda _tok: self.boundary_tips.clear())
        self.status = StatusArea(self.statusBar(), self)
        self.missing_glyphs = MissingGlyphs(self.editor, self.statusBar(), self)
        # (after the glyph boxes' filter: a held paint reaches neither)
        self.paint_hold = PaintHold(self.editor.viewport(), self)
        self.painter.holding = lambda: self.paint_hold.holding
        self.painter.show_moved = self.edit_repaint.show_block
        self.painter.long_line.connect(self._long_line)
        self.paint_hold.expired.connect(self.painter.apply_shifts)
        self.text_changed.connect(self.missing_glyphs.update_text)
        self.loader = TokenizerLoader(report_error or message_box_reporter(self), self)
        self.menus = build_menus(self, self)
        self.picker = TokenizerPicker(self.open_source, self.open_vocabulary_dialog, self)
        self.addToolBar(build_toolbar(self, self.picker, self.load_sample))

        self.add_panel("tokens", "Tokens", self.table, Area.BottomDockWidgetArea)
        self.add_panel("ids", "Token Ids", self.ids_view, Area.BottomDockWidgetArea)
        self.ids_view.set_active(False)
        self.panels["ids"].visibilityChanged.connect(self.ids_view.set_active)
        self.add_panel("inspector", "Inspector", self.inspector, Area.RightDockWidgetArea)
        self.panels["tokens"].raise_()

        self._text_signal = Debounce(self._emit_text, TEXT_SIGNAL_MS, self)
        self._text_waits_since: float | None = None
        self._views_steps: list[tuple[int, Change | None]] = []
        """Results not yet shown in the table, inspector and counts (see the module notes)."""
        self._views_stale = False
        self._views_timer = QTimer(self)
        self._views_timer.setSingleShot(True)
        self._views_timer.setInterval(VIEWS_SETTLE_MS)
        self._views_timer.timeout.connect(self._settle_views)
        self._autosave = Debounce(self.autosave_now, AUTOSAVE_MS, self) if autosave else None
        self.autosaver = Autosaver(self)
        """Writes the autosave file on its own worker thread."""
        self.autosaver.failed.connect(lambda m: self.status.message(f"autosave failed: {m}"))
        self._wire()
        self._apply_look(self.settings.palette or DEFAULT_PALETTE, self.settings.dark)
        self.set_show_whitespace(self.settings.show_whitespace)
        self._refresh_recent()
        self._install_panels()
        self.font_warmer = FontWarmer([self.editor.font(), self.table.font(),
                                       self.inspector.font(), self.font()], self,
                                      wait_while=lambda: self.controller.busy
                                      or self.loader.busy)
        self.editor.cursorPositionChanged.connect(self.font_warmer.note_input)
        self.font_warmer.start()

    # ----- panels -------------------------------------------------------------------------
    def add_panel(self, key: str, title: str, widget: QWidget,
                  area: Qt.DockWidgetArea = Area.RightDockWidgetArea) -> QDockWidget:
        """Dock ``widget`` as panel ``key`` (tabbed with panels already in ``area``).

        Its show/hide action is added to the View menu; ``show_view(key)`` raises it. A panel
        in a background tab still reports ``isVisible()``: follow the dock's
        ``visibilityChanged(bool)`` (or ask :meth:`is_panel_shown`) to skip hidden work.
        """
        dock = QDockWidget(title, self)
        dock.setObjectName(f"panel-{key}")
        dock.setWidget(widget)
        same_area = [d for d in self.panels.values() if self.dockWidgetArea(d) == area]
        self.addDockWidget(area, dock)
        if same_area:
            self.tabifyDockWidget(same_area[-1], dock)
        self.panels[key] = dock
        self._shown[key] = True
        dock.visibilityChanged.connect(lambda shown, k=key: self._shown.__setitem__(k, shown))
        self.menus.view.addAction(dock.toggleViewAction())
        return dock

    def is_panel_shown(self, key: str) -> bool:
        """True when panel ``key`` is open and its tab is the current one."""
        dock = self.panels.get(key)
        return dock is not None and dock.isVisible() and self._shown.get(key, False)

    def show_view(self, key: str) -> bool:
        """Show view ``key``: ``main`` (the editor), a panel's dock, or a view a panel
        prepares (see :mod:`explorer.ui.panels.registry`); False when unknown."""
        if key == "main":
            return True
        owner = self.extra_views.get(key)
        if owner is not None:
            owner.prepare_view(key)
            return True
        dock = self.panels.get(key)
        if dock is None:
            return False
        dock.show()
        dock.raise_()
        return True

    def view_names(self) -> list[str]:
        """Every name ``--view`` accepts."""
        return ["main", *self.panels, *self.extra_views]

    def panels_busy(self) -> bool:
        """True while a shown panel waits for a worker (screenshots wait for this)."""
        return any(p is not None and p.busy() for p in self.panel_objects.values())

    def select_token_by_user(self, index: int) -> None:
        """Make token ``index`` current and put the text cursor on it. Only for a user's own
        action in a view (a row picked, an entry double-clicked): it moves the cursor."""
        self.linker.select_token(index)

    def _install_panels(self) -> None:
        """Install every registered side panel (each panel module registers itself)."""
        from explorer.ui.panels.registry import install_panels, panel_views

        self.panel_objects = install_panels(self)
        self.extra_views = panel_views(self.panel_objects)

    # ----- state --------------------------------------------------------------------------
    @property
    def tokenizer(self) -> Tokenizer | None:
        """The current tokenizer."""
        return self.controller.tokenizer

    @property
    def doc(self) -> DocTokens | None:
        """The latest result (may lag the text by one keystroke)."""
        return self.controller.doc

    @property
    def is_painted(self) -> bool:
        """True when the text, the result and the editor's colours all agree."""
        return (not self.loader.busy and self.controller.up_to_date
                and self.painter.is_complete)

    @property
    def is_highlighted(self) -> bool:
        """True when :attr:`is_painted` and the table, inspector and counts follow too."""
        return self.is_painted and not self._views_stale

    def text(self) -> str:
        """The editor's text (as ``toPlainText()``, without copying it out of Qt)."""
        return self.controller.text

    def selection(self) -> tuple[int, int] | None:
        """Code-point span of the editor's selection, or None when nothing is selected."""
        from explorer.engine.offsets import Utf16Map

        cur = self.editor.textCursor()
        if not cur.hasSelection():
            return None
        utf16 = Utf16Map(self.text())
        return (utf16.to_codepoint(cur.selectionStart()),
                utf16.to_codepoint(cur.selectionEnd()))

    def set_text(self, text: str) -> None:
        """Replace the text (undoable like an edit)."""
        cur = self.editor.textCursor()
        cur.select(cur.SelectionType.Document)
        cur.insertText(text)
        self.editor.moveCursor(cur.MoveOperation.Start)

    def set_text_soon(self, text: str) -> None:
        """:meth:`set_text` from the event loop's next round, by the editor's own slots.

        Qt lays a 10 MB text out in ~0.7 s. Called from Python (:meth:`set_text`) it holds
        the GIL all that time, so a worker thread (the vocabulary's load) waits; called by
        the event loop, Python only runs in the document's change signals, and the worker
        runs beside it. The calls are queued in order before anything posted after them."""
        queued = Qt.ConnectionType.QueuedConnection
        QMetaObject.invokeMethod(self.editor, "selectAll", queued)
        QMetaObject.invokeMethod(self.editor, "insertPlainText", queued, Q_ARG(str, text))
        QMetaObject.invokeMethod(self, "_cursor_to_start", queued)

    @Slot()
    def _cursor_to_start(self) -> None:
        self.editor.moveCursor(QTextCursor.MoveOperation.Start)

    def load_sample(self, name: str) -> None:
        """Replace the text with a bundled sample."""
        self.set_text(sample_text(name))

    def open_source(self, source: str) -> None:
        """Load a vocabulary (``bundled:<name>`` or a path); the text is kept either way."""
        self.status.message(f"loading {source_label(source)}…", 0)
        self.loader.load(source)

    def use_temporary_tokenizer(self, tokenizer: Tokenizer, label: str) -> None:
        """Encode the text with a tokenizer made in the window (e.g. the Train panel's
        vocabulary slider) without remembering it: not saved in the settings, not a recent
        file; the tokenizer picker and the next :meth:`open_source` replace it."""
        self.source = f"trained:{label}"
        info = tokenizer.info
        self.status.tokenizer.setText(f"{info.name} · {label} · {info.vocab_size:,} ids")
        self.status.message(f"showing the text with {info.name} ({label})")
        self.setWindowTitle(f"Tokenizer Explorer — {info.name}")
        self.controller.set_tokenizer(tokenizer)
        self.tokenizer_changed.emit(tokenizer)

    def restore(self, text: str | None = None, source: str | None = None) -> None:
        """Start-up: geometry, then the given or remembered vocabulary and text (a text of
        :data:`SOON_TEXT_CHARS` or more is in the editor after the event loop's next round:
        :meth:`set_text_soon`)."""
        geometry, state = self.settings.geometry()
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)
        else:  # first run: the editor gets most of the room
            self.resizeDocks([self.panels["tokens"]], [max(180, self.height() // 3)],
                             Qt.Orientation.Vertical)
            self.resizeDocks([self.panels["inspector"]], [280], Qt.Orientation.Horizontal)
        source = start_source(source)
        if text is None:
            text = load_text() if self._autosave is not None else None
            if text:  # (a --text-file's helper was started before the window)
                prefetch_encode(source, text)
        text = text if text else sample_text(DEFAULT_SAMPLE)
        if len(text) >= SOON_TEXT_CHARS:
            # A big text goes in on the event loop, the vocabulary's load beside it (see
            # set_text_soon): it is queued first, so the load's answer comes after it.
            self.set_text_soon(text)
            self.open_source(source)
            return
        # The vocabulary is asked for first: its worker starts while the editor takes the
        # text (o200k's first encode of a 10 MB text started 0.15 s after the text, not 0.29).
        self.open_source(source)
        self.set_text(text)

    # ----- dialogs ------------------------------------------------------------------------
    def open_vocabulary_dialog(self) -> None:
        """File > Open Vocabulary."""
        path, _ = QFileDialog.getOpenFileName(self, "Open vocabulary", "", FILE_FILTER)
        if path:
            self.open_source(path)

    def open_folder_dialog(self) -> None:
        """File > Open Model Folder (a Hugging Face model directory)."""
        path = QFileDialog.getExistingDirectory(self, "Open model folder")
        if path:
            self.open_source(path)

    def open_text_dialog(self) -> None:
        """File > Open Text."""
        path, _ = QFileDialog.getOpenFileName(self, "Open text", "", "Text (*)")
        if path:
            self.open_text(Path(path))

    def open_text(self, path: Path) -> None:
        """Replace the text with a UTF-8 file's content (errors reported, text kept)."""
        try:
            text = path.read_text(encoding="utf-8-sig")  # (the editor drops a BOM too)
        except (OSError, UnicodeDecodeError) as e:
            self.loader.report_error("Cannot open text", f"Could not read {path.name}: {e}")
            return
        if self.source:
            prefetch_encode(self.source, text)
        self.set_text(text)

    def _before_paste(self, text: str, start16: int, end16: int) -> None:
        """A big paste: the helper of the encode that follows starts now, with the text as
        it will be, while Qt inserts it (~1 s for 10 MB, holding the GIL); that encode
        adopts it if the text came out as predicted, else stops it."""
        # (a smaller paste is re-encoded around itself, by no encode that takes a helper)
        if self.source and len(text) > incremental_window(len(self.controller.text)):
            prefetch_encode(self.source, self.controller.after_insert(text, start16, end16))

    def save_text_dialog(self) -> None:
        """File > Save Text As."""
        path, _ = QFileDialog.getSaveFileName(self, "Save text", "", "Text (*.txt)")
        if path:
            Path(path).write_text(self.text(), encoding="utf-8")

    def show_about(self) -> None:
        """Help > About."""
        from explorer.ui.about import AboutDialog

        AboutDialog(self).open()

    def open_dropped(self, path: Path) -> None:
        """A dropped file: text files become the text, anything else (a model folder, its
        ``vocab.txt``/``merges.txt`` included) a vocabulary."""
        if path.suffix.lower() in TEXT_SUFFIXES and path.name not in FOLDER_FILES \
                and not path.is_dir():
            self.open_text(path)
        else:
            self.open_source(str(path))

    # ----- look ---------------------------------------------------------------------------
    def set_palette(self, name: str) -> None:
        """Token colours from palette ``name``."""
        self._apply_look(name, self.painter.formats.dark)

    def set_dark(self, dark: bool) -> None:
        """Dark or light theme."""
        self._apply_look(self.painter.formats.palette, dark)

    def set_show_whitespace(self, show: bool) -> None:
        """Whitespace glyphs on or off."""
        self.editor.set_show_whitespace(show)
        _set_checked(self.menus.whitespace, show)
        self.settings.show_whitespace = show

    def _apply_look(self, palette: str, dark: bool) -> None:
        palette = palette if palette in PALETTES else DEFAULT_PALETTE
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.setPalette(theme_palette(dark))
        pal = self.editor.palette()
        pal.setColor(pal.ColorRole.Text, THEME_TEXT[dark])
        self.editor.setPalette(pal)
        formats = TokenFormats(palette, dark)
        self.painter.set_formats(formats)
        self.table_model.set_color_function(formats.color)
        self.settings.palette, self.settings.dark = palette, dark
        _set_checked(self.menus.dark, dark)
        for a in self.menus.palette_group.actions():
            a.setChecked(a.data() == palette)

    # ----- wiring -------------------------------------------------------------------------
    def _wire(self) -> None:
        self.editor.file_dropped.connect(self.open_dropped)
        self.editor.before_paste = self._before_paste
        self.editor.document().contentsChange.connect(self._on_contents_change)
        self.editor.verticalScrollBar().valueChanged.connect(
            lambda _v: self.painter.paint_visible())
        # Big documents are painted as they are shown: resizes and relayouts too.
        self.editor.updateRequest.connect(lambda _r, _dy: self.painter.paint_visible())
        self.controller.encoding_ready.connect(self._on_result)
        self.controller.progress.connect(self.status.show_progress)
        self.controller.partial_ready.connect(self.painter.set_partial)
        self.controller.failed.connect(lambda m: self.status.message(f"encoding failed: {m}"))
        self.controller.failed.connect(self.painter.apply_shifts)  # (before the release)
        self.controller.failed.connect(self.paint_hold.release)
        self.painter.complete.connect(self._maybe_highlighted)
        self.controller.busy_changed.connect(lambda busy: busy or self._maybe_highlighted())
        self.loader.loaded.connect(self._on_loaded)
        self.loader.failed.connect(self._on_load_failed)
        self.linker.current_changed.connect(self.cursor_token_changed)
        # Last of the document's contentsChanged slots (the edit's repaint and the painter's
        # shift have run): a keystroke's small re-encode and its colours, before any paint.
        self.editor.document().contentsChanged.connect(self.controller.encode_due_now)

    def _on_contents_change(self, _pos: int, removed: int, added: int) -> None:
        if removed or added:
            ctl = self.controller
            if ctl.doc is not None and ctl.doc.tokenizer is ctl.tokenizer is not None:
                self.paint_hold.hold()  # the edit's colours come in a few ms: paint once
            self._views_stale = True
            self.linker.hold()
            self._views_timer.start()
            self._text_signal()
            if self._autosave is not None:
                self._autosave()

    def _emit_text(self) -> None:
        """``text_changed``, after the first encode of a big text (see
        :data:`TEXT_WAITS_CHARS`)."""
        text = self.text()
        now = time.monotonic()
        if len(text) >= TEXT_WAITS_CHARS and self.controller.busy:
            if self._text_waits_since is None:
                self._text_waits_since = now
            if now - self._text_waits_since < TEXT_WAITS_S:
                self._text_signal()  # (again after the debounce)
                return
        self._text_waits_since = None
        self.text_changed.emit(text)

    def _on_loaded(self, source: str, tokenizer: Tokenizer) -> None:
        self.source = source
        self.settings.vocabulary = source
        if not source.startswith("bundled:"):
            self.settings.add_recent(source)
            self._refresh_recent()
        for a in self.menus.tokenizer_group.actions():
            a.setChecked(a.data() == source)
        self._refresh_picker()
        info = tokenizer.info
        self.status.tokenizer.setText(f"{info.name} · {info.format} · {info.model_type} · "
                                      f"{info.vocab_size:,} ids")
        self.status.message(f"loaded {source_label(source)}")
        self.setWindowTitle(f"Tokenizer Explorer — {info.name}")
        self.status.counts_pending(info.name)
        self.controller.set_tokenizer(tokenizer)
        self.tokenizer_changed.emit(tokenizer)

    def _on_load_failed(self, source: str, message: str) -> None:
        self.status.message(f"could not open {source_label(source)}: {message}", 10000)
        if source in self.settings.recent_files:
            self.settings.remove_recent(source)
            self._refresh_recent()

    def _on_result(self, doc: DocTokens, change: Change | None) -> None:
        lines = None if change is None else doc.repaint_lines(change)
        # A huge change is painted like a new result: visible blocks first, the rest lazily.
        ctl = self.controller
        self.painter.set_result(doc, lines if lines is not None and len(lines) <= 20_000
                                else None, current=ctl.applied_revision == ctl.revision)
        self.paint_hold.release()
        self.status.show_progress(1, 1)
        self._views_steps.append((doc.token_count, change))
        if change is None:  # not an edit: everything follows at once
            self._settle_views()
        else:
            self._views_stale = True
            self._views_timer.start()
        self.encoding_ready.emit(doc)
        self._maybe_highlighted()

    def _long_line(self, block: int, length: int) -> None:
        """Say why a very long line is coloured only at its start (see
        :data:`~explorer.ui.token_painter.LONG_LINE_CHARS`)."""
        self.status.message(
            f"line {block + 1:,}: coloured up to character {LONG_LINE_CHARS:,} of "
            f"{length:,} (tokens, counts, hover and the table cover it all)", 15000)

    def _settle_views(self) -> None:
        """Show the latest result in the token table, inspector, ids view and counts."""
        ctl = self.controller
        doc = ctl.doc
        if (doc is None or ctl.applied_revision != ctl.revision
                or doc.tokenizer is not ctl.tokenizer):
            return  # a result is on its way; it starts the timer again
        self._views_timer.stop()
        steps, self._views_steps = self._views_steps, []
        self.table_model.replace_rows(doc, combined_rows(self.table_model.doc, steps))
        self.status.show_stats(doc)
        self.ids_view.set_result(doc)
        self.linker.set_result(doc)
        self._views_stale = False
        self._maybe_highlighted()

    def _maybe_highlighted(self) -> None:
        if self.is_painted:
            self.painted.emit()
            if self.is_highlighted:
                self.highlighted.emit()

    def _refresh_picker(self) -> None:
        loaded = [s for s in self.loader.cached() if not s.startswith("bundled:")]
        self.picker.set_sources([*loaded, *self.settings.recent_files], self.source)

    def _refresh_recent(self) -> None:
        menu = self.menus.recent
        menu.clear()
        for path in self.settings.recent_files:
            menu.addAction(Path(path).name, lambda p=path: self.open_source(p)).setToolTip(path)
        menu.setEnabled(bool(self.settings.recent_files))
        self._refresh_picker()

    # ----- events -------------------------------------------------------------------------
    def autosave_now(self) -> None:
        """Write the text to the autosave file (on the autosave worker)."""
        self.autosaver.save(self.text())

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Accept files dropped anywhere on the window."""
        if local_files(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        """Open a dropped file."""
        files = local_files(event.mimeData())
        if files:
            event.acceptProposedAction()
            self.open_dropped(files[0])

    def closeEvent(self, event: QCloseEvent) -> None:
        """Save text, geometry and settings."""
        if self._autosave is not None:
            self._autosave.flush()
            self.autosaver.save_now(self.text())  # after any write in flight
        self.settings.set_geometry(self.saveGeometry(), self.saveState())
        self.settings.sync()
        self.controller.shutdown()
        super().closeEvent(event)


def _set_checked(action: QAction, checked: bool) -> None:
    """Reflect state in a checkable action without re-triggering its slot."""
    action.blockSignals(True)
    action.setChecked(checked)
    action.blockSignals(False)
