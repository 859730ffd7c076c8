"""Build the frozen app (PyInstaller one-folder) and, with ``--archive``, its release archive.

    python packaging/build_frozen.py [--dist DIR] [--archive]

- Runs ``pyinstaller packaging/tokenizer-explorer.spec`` (name and version from
  pyproject.toml) into ``DIR/<name>-<version>/`` (default ``dist/``).
- Fails (exit 1) when PyInstaller's analysis reports a module that an ``explorer`` module
  imports at top level but that is missing from the bundle: such a build would start and then
  die on the first use of that module.
- Copies the desktop entry and the icon next to the executable (what a packager or the
  release archive's README needs); ``<exe> --install-desktop`` installs them for the user.
- ``--archive`` writes ``DIR/<name>-<version>-linux-<arch>.tar.gz`` of that folder.

Logs go to stderr; the last line on stdout is the bundle's folder (CI exports it for
tests/test_frozen.py).
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's explorer, for the import check
APP_ID = "io.github.tokenizer_explorer.TokenizerExplorer"
ARCHIVE_README = """\
{name} {version} (frozen build for Linux {arch})

Run:      ./{name}
Menu:     ./{name} --install-desktop     (menu entry, icon and file types for this user;
                                          ./{name} --uninstall-desktop removes them)
Offline:  everything is inside this folder; no Python needed.
The window needs the X11/xcb system libraries listed in the project README
(Debian: sudo apt-get install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 ...);
the app names the missing ones if any.
"""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def missing_top_level_imports(warn_file: Path) -> list[str]:
    """``warn-*.txt`` lines: modules missing from the bundle that explorer imports at top level.

    PyInstaller writes ``missing module named X - imported by a (top-level), b (optional)``;
    optional, delayed and conditional imports are allowed to be missing (they are guarded).
    ``from package import name`` also shows up as a missing module ``package.name``: when
    ``package`` exists and ``package.name`` is no module, it is a name, not a missing module.
    """
    bad = []
    for line in warn_file.read_text(encoding="utf-8").splitlines():
        found = re.match(r"(?:missing|excluded) module named (\S+) - imported by (.*)", line)
        if not found:
            continue
        for importer in found.group(2).split(", "):
            who = re.match(r"(\S+) \(([^)]*)\)", importer)
            ours = who and who.group(1).startswith("explorer") and who.group(2) == "top-level"
            if ours and not _is_a_name_in_a_package(found.group(1)):
                bad.append(f"{found.group(1)} (imported by {who.group(1)})")
    return bad


def _is_a_name_in_a_package(dotted: str) -> bool:
    parent, _, _ = dotted.rpartition(".")
    try:
        if importlib.util.find_spec(dotted) is not None:
            return False  # a real module that PyInstaller did not collect
        return bool(parent) and importlib.util.find_spec(parent) is not None
    except (ImportError, ValueError):
        return False


def build(dist: Path, work: Path) -> Path:
    """Run PyInstaller; the bundle folder."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    name, version = meta["name"], meta["version"]
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
                    "--distpath", str(dist), "--workpath", str(work),
                    str(ROOT / "packaging" / "tokenizer-explorer.spec")], cwd=ROOT, check=True)
    log(f"pyinstaller: {time.monotonic() - started:.0f} s")
    bundle = dist / f"{name}-{version}"
    missing = missing_top_level_imports(work / "tokenizer-explorer" / f"warn-{name}.txt")
    if missing:
        raise SystemExit("modules missing from the frozen build: " + "; ".join(missing))
    shutil.copyfile(ROOT / "resources" / "desktop" / f"{APP_ID}.desktop",
                    bundle / f"{APP_ID}.desktop")
    shutil.copyfile(ROOT / "resources" / "icons" / "tokenizer-explorer.svg",
                    bundle / f"{APP_ID}.svg")
    arch = platform.machine()
    (bundle / "README.txt").write_text(ARCHIVE_README.format(name=name, version=version,
                                                             arch=arch), encoding="utf-8")
    size = sum(f.lstat().st_size for f in bundle.rglob("*") if not f.is_symlink() and f.is_file())
    log(f"bundle: {bundle} ({size / 2**20:.0f} MiB)")
    return bundle


def archive(bundle: Path) -> Path:
    """``<bundle>-linux-<arch>.tar.gz`` holding the bundle folder."""
    out = bundle.parent / f"{bundle.name}-linux-{platform.machine()}.tar.gz"
    with tarfile.open(out, "w:gz", compresslevel=6) as tar:  # 9 is slower, ~same size
        tar.add(bundle, arcname=bundle.name)
    log(f"archive: {out} ({out.stat().st_size / 2**20:.0f} MiB)")
    return out


def main() -> int:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "pyinstaller")
    parser.add_argument("--archive", action="store_true", help="also write the .tar.gz")
    args = parser.parse_args()
    bundle = build(args.dist.resolve(), args.work.resolve())
    if args.archive:
        archive(bundle)
    print(bundle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
