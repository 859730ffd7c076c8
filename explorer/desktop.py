"""Desktop integration: ``tokenizer-explorer --install-desktop`` / ``--uninstall-desktop``.

Installs into the user's XDG data dir (``$XDG_DATA_HOME``, default ``~/.local/share``), so the
app appears in menus and opens vocabularies by double-click:

- ``applications/<APP_ID>.desktop``: the bundled entry, ``Exec=`` pointing at the program
  that ran the command (the frozen executable, the ``tokenizer-explorer`` script, or
  ``python -m explorer``), ``MimeType=`` for the types below;
- ``icons/hicolor/scalable/apps/<APP_ID>.svg`` and PNGs of :data:`ICON_SIZES`, rendered from
  the same SVG;
- ``mime/packages/<APP_ID>.xml``: shared-mime-info types for ``.tiktoken``, ``.gguf`` (also by
  its ``GGUF`` magic), SentencePiece ``.model`` and the named files of model folders
  (``tokenizer.json``, ``tokenizer_config.json``, ``vocab.json``, ``tekken.json``,
  ``merges.txt``, ``vocab.txt``);
- ``metainfo/<APP_ID>.metainfo.xml``: AppStream data for software centres.

Then it refreshes the caches whose tools exist (``update-mime-database``,
``update-desktop-database``, ``gtk-update-icon-cache``). ``--uninstall-desktop`` removes the same
list of files (and the folders that became empty) and refreshes the caches again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from explorer import APP_ID
from explorer.bundled import resource_path

ICON_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICON_SVG = ("icons", "tokenizer-explorer.svg")


def data_home(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME`` or ``~/.local/share``."""
    env = os.environ if env is None else env
    value = env.get("XDG_DATA_HOME", "")
    return Path(value) if value and Path(value).is_absolute() else Path.home() / ".local/share"


def installed_files(home: Path) -> dict[str, Path]:
    """What --install-desktop writes: ``{role: path}`` (the same list --uninstall removes)."""
    files = {
        "desktop": home / "applications" / f"{APP_ID}.desktop",
        "mime": home / "mime" / "packages" / f"{APP_ID}.xml",
        "metainfo": home / "metainfo" / f"{APP_ID}.metainfo.xml",
        "icon-svg": home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg",
    }
    for size in ICON_SIZES:
        files[f"icon-{size}"] = (home / "icons" / "hicolor" / f"{size}x{size}" / "apps"
                                 / f"{APP_ID}.png")
    return files


def launch_command() -> list[str]:
    """How to start this very installation of the app from a desktop file."""
    if getattr(sys, "frozen", False):
        return [str(Path(sys.executable).resolve())]
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "tokenizer-explorer" and script.is_file():
        return [str(script.resolve())]
    return [str(Path(sys.executable).resolve()), "-m", "explorer"]


_RESERVED = set(' \t\n"\'\\><~|&;$*?#()`')


def exec_quote(arg: str) -> str:
    """One argument of a desktop file's ``Exec=`` key (quoting and escaping per the spec)."""
    if arg and not _RESERVED.intersection(arg):
        quoted = arg
    else:
        quoted = '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'
    return quoted.replace("\\", "\\\\")  # the value's own escape level (\\ means \)


def desktop_entry(command: list[str]) -> str:
    """The bundled .desktop file with ``Exec=`` running ``command`` on the opened file."""
    template = resource_path("desktop", f"{APP_ID}.desktop").read_text(encoding="utf-8")
    exec_line = "Exec=" + " ".join(exec_quote(a) for a in command) + " %f"
    lines = [exec_line if line.startswith("Exec=") else line
             for line in template.splitlines()]
    return "\n".join(lines) + "\n"


def render_png(svg: Path, size: int, out: Path) -> None:
    """Render ``svg`` to a ``size``x``size`` PNG (QtSvg; no QApplication needed)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise OSError(f"cannot read the icon {svg}")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    if not image.save(str(out), "PNG"):
        raise OSError(f"cannot write {out}")


def _refresh_caches(home: Path) -> list[str]:
    """Run the cache tools that exist; the ones that ran."""
    ran = []
    if (home / "mime").is_dir():  # an empty packages/ regenerates a database without our types
        (home / "mime" / "packages").mkdir(exist_ok=True)
    jobs = [("update-mime-database", [str(home / "mime")]),
            ("update-desktop-database", ["-q", str(home / "applications")]),
            ("gtk-update-icon-cache", ["-q", "-t", "-f", str(home / "icons" / "hicolor")])]
    for tool, args in jobs:
        exe = shutil.which(tool)
        if exe is None or not Path(args[-1]).is_dir():
            continue
        try:
            subprocess.run([exe, *args], capture_output=True, timeout=120, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        ran.append(tool)
    return ran


def install_desktop(home: Path | None = None, command: list[str] | None = None) -> list[Path]:
    """Install the desktop entry, icons, MIME types and metainfo; the files written."""
    home = data_home() if home is None else home
    files = installed_files(home)
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    files["desktop"].write_text(desktop_entry(command or launch_command()), encoding="utf-8")
    shutil.copyfile(resource_path("desktop", f"{APP_ID}.mime.xml"), files["mime"])
    shutil.copyfile(resource_path("desktop", f"{APP_ID}.metainfo.xml"), files["metainfo"])
    svg = resource_path(*ICON_SVG)
    shutil.copyfile(svg, files["icon-svg"])
    for size in ICON_SIZES:
        render_png(svg, size, files[f"icon-{size}"])
    _refresh_caches(home)
    return list(files.values())


def uninstall_desktop(home: Path | None = None) -> list[Path]:
    """Remove what :func:`install_desktop` wrote (and folders left empty); the files removed."""
    home = data_home() if home is None else home
    removed = []
    for path in installed_files(home).values():
        if path.is_file() or path.is_symlink():
            path.unlink()
            removed.append(path)
        parent = path.parent
        while parent != home and parent.is_relative_to(home):
            try:
                parent.rmdir()  # only when empty
            except OSError:
                break
            parent = parent.parent
    _refresh_caches(home)
    return removed
