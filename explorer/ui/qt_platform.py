"""Before the window opens: can Qt's platform plugin load on this machine?

On a minimal Linux with a display, Qt's ``xcb`` plugin needs system libraries the PySide6 wheel
does not ship (``libxcb-cursor0``, ``libxcb-icccm4``, ``libxcb-keysyms1``, ...). Without them
Qt aborts with a message that names only the first. :func:`platform_problem` loads the plugin
first (as Qt will: same file, same library search) and, when that fails, lists **every**
missing library (``ldd`` resolves the whole dependency tree) with the Debian and Fedora
packages that provide them. Only the ``xcb`` platform is checked: ``offscreen`` (screenshots,
tests) needs none of these libraries. QtCore only: no QApplication exists yet.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from PySide6.QtCore import QLibraryInfo

PLUGIN_FILE = {"xcb": "libqxcb.so"}

#: Library name (the soname up to ``.so``) -> (Debian package, Fedora package).
PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb-cursor": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-keysyms": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-image": ("libxcb-image0", "xcb-util-image"),
    "libxcb-render-util": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util": ("libxcb-util1", "xcb-util"),
    "libxcb-randr": ("libxcb-randr0", "libxcb"),
    "libxcb-render": ("libxcb-render0", "libxcb"),
    "libxcb-shape": ("libxcb-shape0", "libxcb"),
    "libxcb-shm": ("libxcb-shm0", "libxcb"),
    "libxcb-sync": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xkb": ("libxcb-xkb1", "libxcb"),
    "libxcb": ("libxcb1", "libxcb"),
    "libxkbcommon-x11": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon": ("libxkbcommon0", "libxkbcommon"),
    "libX11-xcb": ("libx11-xcb1", "libX11-xcb"),
    "libX11": ("libx11-6", "libX11"),
    "libGL": ("libgl1", "libglvnd-glx"),
    "libEGL": ("libegl1", "libglvnd-egl"),
    "libOpenGL": ("libopengl0", "libglvnd-opengl"),
    "libfontconfig": ("libfontconfig1", "fontconfig"),
    "libfreetype": ("libfreetype6", "freetype"),
    "libglib-2.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0": ("libglib2.0-0", "glib2"),
    "libdbus-1": ("libdbus-1-3", "dbus-libs"),
    "libSM": ("libsm6", "libSM"),
    "libICE": ("libice6", "libICE"),
}

_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.M)
_DLOPEN_MISSING = re.compile(r"(\S+?\.so(?:\.[\d.]+)?): cannot open shared object file")


def requested_platform(env: Mapping[str, str]) -> str:
    """The platform plugin Qt will use (``QT_QPA_PLATFORM``, else Qt's default)."""
    chosen = env.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if chosen:
        return chosen
    if not sys.platform.startswith("linux"):
        return ""
    if env.get("XDG_SESSION_TYPE") == "wayland" and env.get("WAYLAND_DISPLAY"):
        return "wayland"
    return "xcb"


def platform_plugin(name: str, env: Mapping[str, str]) -> Path | None:
    """The plugin file Qt loads for platform ``name`` (Qt's search order), or None."""
    file = PLUGIN_FILE.get(name)
    if file is None:
        return None
    dirs = [env.get("QT_QPA_PLATFORM_PLUGIN_PATH", "")]
    dirs += [str(Path(d) / "platforms") for d in env.get("QT_PLUGIN_PATH", "").split(os.pathsep)
             if d]
    dirs.append(str(Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath))
                    / "platforms"))
    for d in filter(None, dirs):
        if (Path(d) / file).is_file():
            return Path(d) / file
    return None


def missing_libraries(plugin: Path) -> list[str]:
    """Sonames ``plugin`` needs that cannot be loaded; [] when the plugin loads."""
    try:
        ctypes.CDLL(str(plugin), mode=os.RTLD_LAZY)
    except OSError as e:
        error = str(e)
    else:
        return []
    missing: list[str] = []
    ldd = shutil.which("ldd")
    if ldd:
        try:
            out = subprocess.run([ldd, str(plugin)], capture_output=True, text=True,
                                 timeout=30, check=False).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        missing = list(dict.fromkeys(_NOT_FOUND.findall(out)))
    first = _DLOPEN_MISSING.search(error)
    if first and first.group(1) not in missing:
        missing.insert(0, first.group(1))
    return missing or [error.strip().splitlines()[0] if error.strip() else str(plugin)]


def packages_for(libraries: list[str]) -> tuple[list[str], list[str], list[str]]:
    """``(debian, fedora, unknown)``: the packages that add ``libraries``."""
    debian: list[str] = []
    fedora: list[str] = []
    unknown: list[str] = []
    for lib in libraries:
        known = PACKAGES.get(lib.split(".so")[0])
        if known is None:
            unknown.append(lib)
            continue
        for found, out in zip(known, (debian, fedora), strict=True):
            if found not in out:
                out.append(found)
    return debian, fedora, unknown


def missing_message(platform: str, libraries: list[str]) -> str:
    """One line: what is missing and the install commands."""
    debian, fedora, unknown = packages_for(libraries)
    line = (f"Qt's {platform} platform plugin cannot load, missing system libraries: "
            f"{', '.join(libraries)}")
    if debian:
        line += (f"; install them with: sudo apt-get install {' '.join(debian)}"
                 f" (Fedora: sudo dnf install {' '.join(fedora)})")
    if unknown:
        line += f"; find the package of {', '.join(unknown)} with apt-file search / dnf provides"
    return line + " (or run with QT_QPA_PLATFORM=offscreen --screenshot OUT.png)"


def platform_problem(env: Mapping[str, str]) -> str | None:
    """Why the window cannot open on this machine (one line), or None when it can try."""
    platform = requested_platform(env)
    if platform != "xcb":
        return None
    plugin = platform_plugin(platform, env)
    if plugin is not None:
        missing = missing_libraries(plugin)
        if missing:
            return missing_message(platform, missing)
    if not env.get("DISPLAY"):
        return ("no X display: DISPLAY is not set (start the app from a desktop session; "
                "without a display, --screenshot OUT.png renders offscreen)")
    return None
