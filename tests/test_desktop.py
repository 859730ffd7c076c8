"""Desktop integration: --install-desktop / --uninstall-desktop into a scratch XDG data dir,
checked with the standard validators (Debian desktop-file-utils, appstream, shared-mime-info)
and with Qt's own MIME database; ``tokenizer-explorer PATH`` opens a file.

The validators are system tools: under ``CI=true`` a missing one fails (``.ci/run`` installs
them), elsewhere the test skips and says which package adds it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explorer import APP_ID
from explorer.cli import main, split_open_path
from explorer.desktop import ICON_SIZES, desktop_entry, exec_quote, installed_files

ROOT = Path(__file__).resolve().parent.parent
DESKTOP = ROOT / "resources" / "desktop"
MIME_TYPES = ["application/x-tiktoken", "application/x-gguf", "application/x-sentencepiece-model",
              "application/x-hf-tokenizer", "application/x-bpe-merges",
              "application/x-wordpiece-vocab"]


def need_tool(name: str, package: str) -> str:
    """Path of a system tool; fails under CI=true, else skips, when it is missing."""
    found = shutil.which(name)
    if found is None:
        msg = f"{name} is missing: apt-get install -y {package}"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return found


def cli(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "explorer", *args], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("xdg") / "share"
    done = cli(["--install-desktop"], home)
    assert done.returncode == 0, done.stderr
    assert "--uninstall-desktop" in done.stdout
    return home


def test_install_writes_entry_icons_mime_and_metainfo(installed):
    files = installed_files(installed)
    for path in files.values():
        assert path.is_file(), path
    from PySide6.QtGui import QImage

    for size in ICON_SIZES:
        image = QImage(str(files[f"icon-{size}"]))
        assert (image.width(), image.height()) == (size, size)
        assert image.pixelColor(size // 2, size // 2).alpha() == 255  # drawn, not empty
    entry = files["desktop"].read_text()
    exec_line = next(ln for ln in entry.splitlines() if ln.startswith("Exec="))
    assert exec_line == f"Exec={exec_quote(str(Path(sys.executable).resolve()))} -m explorer %f"
    mime_line = next(ln for ln in entry.splitlines() if ln.startswith("MimeType="))
    assert all(t in mime_line.split("=", 1)[1].split(";") for t in MIME_TYPES)


def test_installed_desktop_file_validates(installed):
    tool = need_tool("desktop-file-validate", "desktop-file-utils")
    for path in (installed_files(installed)["desktop"], DESKTOP / f"{APP_ID}.desktop"):
        done = subprocess.run([tool, str(path)], capture_output=True, text=True, check=False)
        assert done.returncode == 0 and done.stdout.strip() == "", done.stdout + done.stderr


def test_metainfo_validates_with_content_rating_screenshots_and_releases(installed):
    tool = need_tool("appstreamcli", "appstream")
    done = subprocess.run([tool, "validate", "--no-net", "--pedantic",
                           str(installed_files(installed)["metainfo"])],
                          capture_output=True, text=True, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert not [ln for ln in out.splitlines() if ln.startswith(("E:", "W:"))], out
    assert "content-rating-missing" not in out
    import xml.etree.ElementTree as ET

    root = ET.parse(installed_files(installed)["metainfo"]).getroot()
    assert root.find("content_rating") is not None
    shots = root.findall("screenshots/screenshot/image")
    names = {s.text.rsplit("/", 1)[1] for s in shots if s.text}
    assert names and all((ROOT / "docs" / "screenshots" / n).is_file() for n in names)
    assert root.find("releases/release/description") is not None
    assert sorted(m.text for m in root.findall("provides/mediatype")) == sorted(MIME_TYPES)


def test_mime_types_known_to_shared_mime_info_and_qt(installed, tmp_path):
    need_tool("update-mime-database", "shared-mime-info")
    assert (installed / "mime" / "application" / "x-gguf.xml").is_file()
    globs = (installed / "mime" / "globs2").read_text()
    assert ":application/x-gguf:*.gguf" in globs and ":application/x-tiktoken:*.tiktoken" in globs
    gguf = tmp_path / "no-extension"
    gguf.write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(64))
    code = (
        "import sys; from PySide6.QtCore import QMimeDatabase as D\n"
        "db = D()\n"
        "for name in sys.argv[1:]:\n"
        "    print(db.mimeTypeForFile(name).name())\n"
    )
    env = {**os.environ, "XDG_DATA_HOME": str(installed), "XDG_DATA_DIRS": "/usr/share"}
    names = ["a.tiktoken", "b.gguf", "tokenizer.model", "tokenizer.json", "merges.txt",
             "vocab.txt"]
    done = subprocess.run([sys.executable, "-c", code, *(str(tmp_path / n) for n in names),
                           str(gguf), str(tmp_path / "vocab.json"),
                           str(tmp_path / "tokenizer_config.json"), str(tmp_path / "other.json")],
                          env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == [*MIME_TYPES, "application/x-gguf", "application/x-hf-tokenizer",
                                   "application/x-hf-tokenizer", "application/json"]


def test_uninstall_removes_everything_it_installed(tmp_path):
    home = tmp_path / "share"
    (home / "applications").mkdir(parents=True)
    (home / "applications" / "other.desktop").write_text("[Desktop Entry]\n")
    assert cli(["--install-desktop"], home).returncode == 0
    done = cli(["--uninstall-desktop"], home)
    assert done.returncode == 0, done.stderr
    left = [p for p in home.rglob("*") if APP_ID in p.name or "x-gguf" in p.name]
    assert left == []
    assert (home / "applications" / "other.desktop").is_file()  # not ours: kept
    globs = home / "mime" / "globs2"
    assert not globs.exists() or "gguf" not in globs.read_text()


def test_exec_quoting_follows_the_desktop_entry_spec():
    assert exec_quote("/usr/bin/tokenizer-explorer") == "/usr/bin/tokenizer-explorer"
    assert exec_quote("/opt/My Apps/te") == '"/opt/My Apps/te"'
    assert exec_quote('/a"b$c') == '"/a\\\\"b\\\\$c"'
    entry = desktop_entry(["/opt/My Apps/te"])
    assert 'Exec="/opt/My Apps/te" %f' in entry.splitlines()


def test_a_file_argument_opens_it_as_the_vocabulary(monkeypatch, tmp_path):
    import explorer.ui.app as app

    seen = {}
    monkeypatch.setattr(app, "run_app", lambda args: seen.setdefault("vocab", args.vocab) and 0)
    model = ROOT / "resources" / "vocab" / "corpus_unigram_4k.model"
    monkeypatch.chdir(model.parent)
    assert main(["--view", "lattice", model.name]) == 0
    assert seen["vocab"] == str(model)
    assert split_open_path(["encode", "--vocab", "x"], ["encode"]) == (
        ["encode", "--vocab", "x"], None)
    assert split_open_path(["--", "-odd-name.model"], []) == ([], "-odd-name.model")


def test_a_missing_file_argument_is_one_line_exit_2(capsys, tmp_path):
    assert main([str(tmp_path / "gone.gguf")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"tokenizer-explorer: error: cannot open {tmp_path / 'gone.gguf'}: no such file")
