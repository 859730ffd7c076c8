"""The window's menus and shortcuts, built from the window's public methods.

The window is seen through :class:`MenuHost` (this module never imports the window, so the UI
has no import cycle)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QWidget

from explorer.ui.palettes import PALETTES
from explorer.ui.samples import TITLES, sample_names
from explorer.ui.tokenizer_source import bundled_sources, source_label


class _EditorActions(Protocol):
    def undo(self) -> None: ...
    def redo(self) -> None: ...
    def selectAll(self) -> None: ...


class _IdsActions(Protocol):
    def copy(self) -> None: ...


class MenuHost(Protocol):
    """What the menus use of the main window."""

    editor: _EditorActions
    ids_view: _IdsActions

    def menuBar(self) -> QMenuBar: ...
    def close(self) -> bool: ...
    def open_vocabulary_dialog(self) -> None: ...
    def open_text_dialog(self) -> None: ...
    def save_text_dialog(self) -> None: ...
    def open_source(self, source: str) -> None: ...
    def load_sample(self, name: str) -> None: ...
    def set_show_whitespace(self, show: bool) -> None: ...
    def set_dark(self, dark: bool) -> None: ...
    def set_palette(self, name: str) -> None: ...
    def show_about(self) -> None: ...


@dataclass
class Menus:
    """Menus and actions the window updates later."""

    recent: QMenu
    tokenizer: QMenu
    view: QMenu
    tokenizer_group: QActionGroup
    palette_group: QActionGroup
    whitespace: QAction
    dark: QAction


def build_menus(w: MenuHost, parent: QWidget) -> Menus:
    """Create the menu bar of ``w`` (``parent``: the window as a widget, owns the groups)."""
    bar = w.menuBar()
    file = bar.addMenu("&File")
    _act(file, "&Open Vocabulary…", w.open_vocabulary_dialog, QKeySequence.StandardKey.Open)
    _act(file, "Open Model &Folder…", w.open_folder_dialog)
    recent = file.addMenu("Open &Recent")
    _act(file, "Open &Text…", w.open_text_dialog, "Ctrl+Shift+O")
    _act(file, "&Save Text As…", w.save_text_dialog, QKeySequence.StandardKey.SaveAs)
    file.addSeparator()
    _act(file, "&Quit", w.close, QKeySequence.StandardKey.Quit)

    edit = bar.addMenu("&Edit")
    _act(edit, "&Undo", w.editor.undo, QKeySequence.StandardKey.Undo)
    # Ctrl+Y and Ctrl+Shift+Z both redo, as in Linux editors (the platform lists only one).
    _act(edit, "&Redo", w.editor.redo, QKeySequence.StandardKey.Redo).setShortcuts(
        [*QKeySequence.keyBindings(QKeySequence.StandardKey.Redo),
         *(QKeySequence(k) for k in REDO_KEYS
           if QKeySequence(k) not in QKeySequence.keyBindings(QKeySequence.StandardKey.Redo))])
    edit.addSeparator()
    _act(edit, "Select &All", w.editor.selectAll, QKeySequence.StandardKey.SelectAll)
    _act(edit, "Copy Token &Ids", w.ids_view.copy, "Ctrl+Shift+C")

    tok = bar.addMenu("&Tokenizer")
    group = QActionGroup(parent)
    for source in bundled_sources():
        a = _act(tok, source_label(source), lambda s=source: w.open_source(s))
        a.setCheckable(True)
        a.setData(source)
        group.addAction(a)
    tok.addSeparator()
    _act(tok, "Open File…", w.open_vocabulary_dialog)

    samples = bar.addMenu("&Samples")
    for i, name in enumerate(sample_names()):
        _act(samples, TITLES.get(name, name), lambda n=name: w.load_sample(n),
             f"Ctrl+{i + 1}" if i < 9 else None)

    view = bar.addMenu("&View")
    ws = _act(view, "Show &Whitespace", w.set_show_whitespace, "Ctrl+Shift+W", checkable=True)
    dark = _act(view, "&Dark Theme", w.set_dark, "Ctrl+Shift+D", checkable=True)
    pal_menu = view.addMenu("Token &Palette")
    pal_group = QActionGroup(parent)
    for name in PALETTES:
        a = _act(pal_menu, name, lambda n=name: w.set_palette(n))
        a.setCheckable(True)
        a.setData(name)
        pal_group.addAction(a)
    view.addSeparator()

    help_ = bar.addMenu("&Help")
    _act(help_, "&About Tokenizer Explorer", w.show_about, QKeySequence.StandardKey.HelpContents)
    return Menus(recent, tok, view, group, pal_group, ws, dark)


REDO_KEYS = ("Ctrl+Y", "Ctrl+Shift+Z")


def _act(menu: QMenu, text: str, slot: Callable[..., object],
         shortcut: QKeySequence.StandardKey | str | None = None,
         checkable: bool = False) -> QAction:
    """A menu action; a checkable one passes its state to ``slot``, others call it bare."""
    action = QAction(text, menu)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    if checkable:
        action.setCheckable(True)
        action.toggled.connect(slot)
    else:
        action.triggered.connect(lambda _checked=False: slot())
    menu.addAction(action)
    return action
