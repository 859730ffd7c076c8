"""The window refuses to start, in one line naming every missing library, when Qt's xcb plugin
cannot load (a minimal Debian without libxcb-cursor0, libxcb-icccm4, ...).

The machine running the tests has those libraries, so the test builds a copy of Qt's real xcb
plugin whose ``libQt6XcbQpa`` asks for sonames no system has (``libxcb-cursor.so.9``,
``libxcb-icccm.so.9``: same-length edits of its dynamic string table), points Qt's own
``QT_QPA_PLATFORM_PLUGIN_PATH`` at it and starts the real app.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QLibraryInfo

from explorer.ui.qt_platform import (
    packages_for,
    platform_plugin,
    platform_problem,
    requested_platform,
)

ROOT = Path(__file__).resolve().parents[2]
RENAMED = {b"libxcb-cursor.so.0\0": b"libxcb-cursor.so.9\0",
           b"libxcb-icccm.so.4\0": b"libxcb-icccm.so.9\0"}


def broken_plugin_dir(tmp: Path) -> Path:
    """``tmp/plugins/platforms`` holding an xcb plugin whose dependencies are missing."""
    qt_lib = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.LibrariesPath))
    plugins = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath))
    lib = tmp / "lib"
    lib.mkdir()
    for f in qt_lib.glob("lib*.so*"):
        if not f.name.startswith("libQt6XcbQpa"):
            (lib / f.name).symlink_to(f)
    data = (qt_lib / "libQt6XcbQpa.so.6").read_bytes()
    for old, new in RENAMED.items():
        assert old in data
        data = data.replace(old, new)
    (lib / "libQt6XcbQpa.so.6").write_bytes(data)
    platforms = tmp / "plugins" / "platforms"  # the plugin's RUNPATH is $ORIGIN/../../lib
    platforms.mkdir(parents=True)
    (platforms / "libqxcb.so").write_bytes((plugins / "platforms" / "libqxcb.so").read_bytes())
    return platforms


def test_missing_xcb_libraries_named_in_one_line_exit_2(tmp_path):
    platforms = broken_plugin_dir(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "xcb",
           "QT_QPA_PLATFORM_PLUGIN_PATH": str(platforms), "DISPLAY": ":97"}
    done = subprocess.run([sys.executable, "-m", "explorer"], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if "tokenizer-explorer" in ln]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    line = lines[0]
    assert "missing system libraries: libxcb-cursor.so.9, libxcb-icccm.so.9;" in line
    assert "sudo apt-get install libxcb-cursor0 libxcb-icccm4" in line
    assert "dnf install xcb-util-cursor xcb-util-wm" in line


def test_missing_libraries_of_the_real_plugin_here_is_empty():
    plugin = platform_plugin("xcb", {})
    assert plugin is not None and plugin.name == "libqxcb.so"
    # This machine has the libraries (so does CI): the check must not invent any. In a
    # subprocess: loading the plugin here would make the broken copy's soname resolve.
    code = ("import sys; from pathlib import Path; from explorer.ui.qt_platform import "
            f"missing_libraries as m; print(m(Path({str(plugin)!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_only_xcb_is_checked(tmp_path):
    platforms = broken_plugin_dir(tmp_path)
    env = {"QT_QPA_PLATFORM_PLUGIN_PATH": str(platforms), "DISPLAY": ":97"}
    assert platform_problem({**env, "QT_QPA_PLATFORM": "offscreen"}) is None
    assert platform_problem({**env, "QT_QPA_PLATFORM": "minimal"}) is None


def test_no_display_is_one_line():
    problem = platform_problem({"QT_QPA_PLATFORM": "xcb"})
    assert problem is not None and "DISPLAY is not set" in problem


def test_requested_platform_follows_qt_rules():
    assert requested_platform({"QT_QPA_PLATFORM": "offscreen"}) == "offscreen"
    assert requested_platform({"QT_QPA_PLATFORM": "xcb:nograb;wayland"}) == "xcb"
    if sys.platform.startswith("linux"):
        assert requested_platform({"DISPLAY": ":0"}) == "xcb"
        assert requested_platform({"XDG_SESSION_TYPE": "wayland",
                                   "WAYLAND_DISPLAY": "wayland-0"}) == "wayland"


def test_packages_for_known_and_unknown_libraries():
    debian, fedora, unknown = packages_for(["libxcb-keysyms.so.1", "libxcb-shape.so.0",
                                            "libxcb-randr.so.0", "libfoo.so.3"])
    assert debian == ["libxcb-keysyms1", "libxcb-shape0", "libxcb-randr0"]
    assert fedora == ["xcb-util-keysyms", "libxcb"]
    assert unknown == ["libfoo.so.3"]
