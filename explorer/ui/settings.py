"""Persistent choices (QSettings): last vocabulary, recent files, palette, theme, geometry.

Tests point Qt at a temporary directory with :func:`use_settings_dir` so they never read or
write the user's settings. The text itself is not stored here but autosaved to a file
(:mod:`explorer.ui.autosave`).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

ORGANIZATION = "TokenizerExplorer"
APPLICATION = "tokenizer-explorer"
MAX_RECENT = 8
_SETTINGS_DIR: Path | None = None


def use_settings_dir(path: Path | None) -> None:
    """Store settings as an INI file under ``path`` (tests, portable mode); None: default."""
    global _SETTINGS_DIR
    _SETTINGS_DIR = path


def settings_dir() -> Path | None:
    """The override set by :func:`use_settings_dir`, if any."""
    return _SETTINGS_DIR


class Settings:
    """Typed access to the app's QSettings."""

    def __init__(self) -> None:
        if _SETTINGS_DIR is not None:
            self._s = QSettings(str(_SETTINGS_DIR / "settings.ini"), QSettings.Format.IniFormat)
        else:
            self._s = QSettings(ORGANIZATION, APPLICATION)

    def sync(self) -> None:
        """Write to disk now."""
        self._s.sync()

    def _str(self, key: str, default: str = "") -> str:
        value = self._s.value(key, default)
        return value if isinstance(value, str) else default

    @property
    def vocabulary(self) -> str:
        """Last chosen vocabulary: ``bundled:<name>`` or a file path."""
        return self._str("vocabulary")

    @vocabulary.setter
    def vocabulary(self, value: str) -> None:
        self._s.setValue("vocabulary", value)

    @property
    def recent_files(self) -> list[str]:
        """Recently opened vocabulary files, newest first."""
        value = self._s.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    def add_recent(self, path: str) -> None:
        """Put ``path`` first in the recent files."""
        files = [path, *[p for p in self.recent_files if p != path]][:MAX_RECENT]
        self._s.setValue("recent_files", files)

    def remove_recent(self, path: str) -> None:
        """Forget ``path`` (it failed to load)."""
        self._s.setValue("recent_files", [p for p in self.recent_files if p != path])

    @property
    def palette(self) -> str:
        """Token palette name."""
        return self._str("palette")

    @palette.setter
    def palette(self, value: str) -> None:
        self._s.setValue("palette", value)

    @property
    def dark(self) -> bool:
        """Dark theme."""
        return str(self._s.value("dark", "false")).lower() == "true"

    @dark.setter
    def dark(self, value: bool) -> None:
        self._s.setValue("dark", "true" if value else "false")

    @property
    def show_whitespace(self) -> bool:
        """Whitespace glyphs shown."""
        return str(self._s.value("show_whitespace", "false")).lower() == "true"

    @show_whitespace.setter
    def show_whitespace(self, value: bool) -> None:
        self._s.setValue("show_whitespace", "true" if value else "false")

    def geometry(self) -> tuple[QByteArray | None, QByteArray | None]:
        """Saved window geometry and dock state."""
        g, s = self._s.value("geometry"), self._s.value("window_state")
        return (g if isinstance(g, QByteArray) else None,
                s if isinstance(s, QByteArray) else None)

    def set_geometry(self, geometry: QByteArray, state: QByteArray) -> None:
        """Save window geometry and dock state."""
        self._s.setValue("geometry", geometry)
        self._s.setValue("window_state", state)
