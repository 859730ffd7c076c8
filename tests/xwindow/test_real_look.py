"""Issue 18: what the real window looks like (dark theme after a restart), from screenshots."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtGui import QImage


def _lightness(image: QImage, x0: int, y0: int, x1: int, y1: int) -> float:
    """Mean HSL lightness (0-255) of a screen rectangle, sampled every 4 pixels."""
    values = [image.pixelColor(x, y).lightness()
              for y in range(y0, y1, 4) for x in range(x0, x1, 4)]
    return sum(values) / len(values)


def test_dark_theme_after_restart_covers_the_whole_window(start_app, tmp_path):
    app = start_app("--view", "train")
    app.click_editor()
    app.key("ctrl+shift+d")  # dark theme, remembered
    time.sleep(0.5)
    app.close()
    again = start_app("--view", "train", home=app.home)
    time.sleep(2.5)
    shot = tmp_path / "dark.png"
    again.screenshot(shot)
    image = QImage(str(shot))
    assert not image.isNull(), "no screenshot (ImageMagick's import is needed)"
    x, y, w, h = again.geometry()
    regions = {
        "menu bar": (x + 2, y + 2, x + w - 2, y + 16),
        "toolbar and picker": (x + 2, y + 24, x + w // 2, y + 42),
        "editor": (x + 10, y + 60, x + w // 2, y + h // 3),
        "training plots and panel": (x + 10, y + h * 2 // 3, x + w - 10, y + h - 60),
        "status bar": (x + 2, y + h - 18, x + w - 2, y + h - 4),
    }
    light = {name: round(_lightness(image, *r)) for name, r in regions.items()
             if _lightness(image, *r) > 110}
    assert not light, f"parts of the window stay light in the dark theme: {light} ({shot})"
    assert Path(shot).stat().st_size > 0
    again.click_editor()  # focused, so the closing Ctrl+Q reaches it (not a 20 s timeout)
