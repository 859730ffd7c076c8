"""What a new user does: README's install command in a fresh clone, the wheel and the sdist.

The tests elsewhere run against an editable install; these do what README says instead:

- a *fresh clone* (the tracked and new files of this checkout, copied to a scratch folder,
  without build leftovers) gets a **non-editable** ``pip install .`` into a scratch venv, then
  ``python -m explorer --screenshot`` runs **from the clone's root**, where the source tree's
  ``explorer/`` shadows the installed package (the bug of issue 12);
- the installed ``tokenizer-explorer`` entry point prints its version and encodes with a
  bundled vocabulary, from another directory, importing the installed copy;
- the sdist holds the whole source (resources, setup.py, desktop files) and the wheel built
  *from that sdist* (what pip and pipx do with an sdist) holds the package, its resources and
  the entry point.

The venv is created with ``--system-site-packages`` so PySide6, numpy and friends (hundreds of
MB) are not downloaded again: ``pip install .`` still builds the project in an isolated build
environment, still resolves the declared dependencies (against the installed ones), and installs
the project's own files, resources and entry points into the venv, which is what can break.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import explorer

ROOT = Path(__file__).resolve().parent.parent
TEXT = "Hello wörld 😀 naïve 東京 <|endoftext|>\n"
RESOURCE_FILES = ["LICENSES.md", "vocab/cl100k_base.tiktoken", "vocab/o200k_base.tiktoken",
                  "vocab/corpus_bpe_4k.json", "vocab/corpus_unigram_4k.model",
                  "corpus/botchan.txt", "samples/multilingual.txt",
                  "icons/tokenizer-explorer.svg",
                  f"desktop/{explorer.APP_ID}.desktop", f"desktop/{explorer.APP_ID}.mime.xml",
                  f"desktop/{explorer.APP_ID}.metainfo.xml"]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without PYTHONPATH (it would import this checkout, not the install)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(extra)
    return env


def run(cmd: list[str], cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=clean_env(**extra), capture_output=True,
                          text=True, timeout=600, check=False)


def fresh_clone(dest: Path) -> Path:
    """Copy the files git would clone (tracked + new, not ignored) to ``dest``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_symlink() or not src.is_file():  # .refcache is a symlink to test data
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / name)
    return dest


def readme_install_command() -> str:
    """README's first set-up command (install and start)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"```sh\n(python3 -m pip install \. && python3 -m explorer)\n```", readme)
    assert found, "README's set-up command changed: update tests/test_install.py with it"
    return found.group(1)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """``(clone, venv python)`` after README's ``python3 -m pip install .`` in the clone."""
    readme_install_command()
    base = tmp_path_factory.mktemp("install")
    clone = fresh_clone(base / "clone")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    # pip of this interpreter installs into the venv's (--python): no pip bootstrap needed.
    done = run([sys.executable, "-m", "pip", "--python", str(python), "install",
                "--disable-pip-version-check", "."], cwd=clone)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return clone, python


def test_readme_command_from_the_clone_root(installed, tmp_path):
    clone, python = installed
    out = tmp_path / "main.png"
    # README: `python3 -m pip install . && python3 -m explorer`, in the clone's root.
    done = run([str(python), "-m", "explorer", "--screenshot", str(out)], cwd=clone,
               QT_QPA_PLATFORM="offscreen")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    from PySide6.QtGui import QImage

    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 800)


def test_installed_entry_point_version_and_bundled_encode(installed, tmp_path):
    import tiktoken
    import tiktoken.load

    from explorer.engine.formats.tiktoken_presets import PRESETS

    _clone, python = installed
    venv_bin = python.parent
    where = run([str(python), "-c", "import explorer, explorer.bundled as b; "
                 "print(explorer.__file__); print(b.resources_root())"], cwd=tmp_path)
    module_file, resources = where.stdout.split()
    venv = python.parent.parent
    assert Path(module_file).is_relative_to(venv), "the venv imported another copy"
    assert Path(resources).is_relative_to(venv)
    version = run([str(venv_bin / "tokenizer-explorer"), "--version"], cwd=tmp_path)
    assert version.stdout.strip() == f"tokenizer-explorer {explorer.__version__}"
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    enc = run([str(venv_bin / "tokenizer-explorer"), "encode", "--vocab", "bundled:cl100k_base",
               str(src)], cwd=tmp_path)
    assert enc.returncode == 0, enc.stderr
    p = PRESETS["cl100k"]
    ref = tiktoken.Encoding("cl100k", pat_str=p.pattern, special_tokens=p.special_tokens,
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(
                                str(Path(resources) / "vocab" / "cl100k_base.tiktoken")))
    assert enc.stdout.split() == [str(i) for i in ref.encode(TEXT, allowed_special="all")]


def test_sdist_and_wheel_from_it_hold_resources_and_entry_points(tmp_path):
    clone = fresh_clone(tmp_path / "clone")
    dist = tmp_path / "dist"
    sdist_run = run([sys.executable, "-m", "build", "--sdist", "--outdir", str(dist)], cwd=clone)
    assert sdist_run.returncode == 0, sdist_run.stdout[-3000:] + sdist_run.stderr[-3000:]
    (sdist,) = dist.glob("tokenizer_explorer-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for need in ["setup.py", "pyproject.toml", "README.md", "explorer/cli.py",
                 *(f"resources/{f}" for f in RESOURCE_FILES)]:
        assert need in names, f"sdist lacks {need}"
    # The wheel pip and pipx build from that sdist (not from the checkout).
    wheel_run = run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                     "--disable-pip-version-check", "-w", str(dist), str(sdist)], cwd=tmp_path)
    assert wheel_run.returncode == 0, wheel_run.stdout[-3000:] + wheel_run.stderr[-3000:]
    (wheel,) = dist.glob("tokenizer_explorer-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        entry_points = zf.read(info).decode()
        metadata = zf.read(info.replace("entry_points.txt", "METADATA")).decode()
    for f in RESOURCE_FILES:
        assert f"explorer/resources/{f}" in names, f"wheel lacks explorer/resources/{f}"
    assert "explorer/ui/panels/registry.py" in names
    assert not any(n.startswith(("tests/", "resources/")) for n in names)
    assert re.search(r"^tokenizer-explorer = explorer\.cli:run$", entry_points, re.M)
    assert "Requires-Dist: PySide6-Essentials" in metadata


def test_installed_entry_point_installs_the_desktop_entry_for_itself(installed, tmp_path):
    _clone, python = installed
    script = python.parent / "tokenizer-explorer"
    done = run([str(script), "--install-desktop"], cwd=tmp_path,
               XDG_DATA_HOME=str(tmp_path / "share"))
    assert done.returncode == 0, done.stderr
    entry = (tmp_path / "share" / "applications" / f"{explorer.APP_ID}.desktop").read_text()
    assert f"Exec={script.resolve()} %f" in entry.splitlines()
