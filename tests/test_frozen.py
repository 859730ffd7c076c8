"""Smoke test of the frozen (PyInstaller) build: the real executable, no Python of ours.

CI builds the bundle first (``.ci/run``: ``python packaging/build_frozen.py --archive``) and
exports its folder as ``TOKENIZER_EXPLORER_FROZEN``. Without it the tests skip, and fail under
``CI=true``. By hand::

    python packaging/build_frozen.py --archive
    TOKENIZER_EXPLORER_FROZEN=dist/tokenizer-explorer-0.1.0 python -m pytest tests/test_frozen.py

The executable renders every view offscreen, encodes with every bundled vocabulary (ids equal
to the reference libraries) and a GGUF file, trains BPE and Unigram on the bundled corpus and
encodes with the result. A module missing from the bundle makes one of these exit non-zero
(and packaging/build_frozen.py already refuses a build whose analysis misses a top-level
import of ours).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tarfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from references import require

import explorer

ENV_VAR = "TOKENIZER_EXPLORER_FROZEN"
LATTICE_VIEWS = {"lattice": "bundled:corpus_unigram_4k"}


@pytest.fixture(scope="module")
def bundle() -> Path:
    value = os.environ.get(ENV_VAR, "")
    if not value:
        msg = f"{ENV_VAR} is not set: build with python packaging/build_frozen.py"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    folder = Path(value).resolve()
    assert (folder / "tokenizer-explorer").is_file(), f"no executable in {folder}"
    return folder


def frozen(bundle: Path, *args: str, stdin: str | None = None,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # No PYTHONPATH/PYTHONHOME: the frozen app must need nothing from this checkout.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    done = subprocess.run([str(bundle / "tokenizer-explorer"), *args], input=stdin, env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def resources(bundle: Path) -> Path:
    return bundle / "_internal" / "explorer" / "resources"


def test_version(bundle):
    assert frozen(bundle, "--version").stdout.strip() == (
        f"tokenizer-explorer {explorer.__version__}")


def test_every_view_renders(bundle, tmp_path):
    from PySide6.QtGui import QImage

    listed = frozen(bundle, "--screenshot", str(tmp_path / "x.png"), "--view", "?")
    assert listed.returncode == 2
    views = re.search(r"views: (.*)$", listed.stderr.strip(), re.M).group(1).split(", ")
    assert {"main", "bpe", "lattice", "compare", "vocab", "train"} <= set(views)
    text = resources(bundle) / "samples" / "multilingual.txt"

    def shoot(view: str) -> tuple[str, subprocess.CompletedProcess[str]]:
        extra = ["--vocab", LATTICE_VIEWS[view]] if view in LATTICE_VIEWS else []
        return view, frozen(bundle, "--screenshot", str(tmp_path / f"{view}.png"), "--view",
                            view, "--text-file", str(text), *extra)

    with ThreadPoolExecutor(2) as pool:
        for view, done in pool.map(shoot, views):
            assert done.returncode == 0, f"{view}: {done.stderr[-2000:]}"
            image = QImage(str(tmp_path / f"{view}.png"))
            assert (image.width(), image.height()) == (1280, 800), view
            colors = {image.pixel(x, y) for x in range(0, 1280, 11) for y in range(0, 800, 11)}
            assert len(colors) > 12, f"{view} looks empty"


@pytest.mark.parametrize("vocab", ["bundled:cl100k_base", "bundled:corpus_unigram_4k"])
def test_a_big_text_is_first_encoded_with_a_child_process(bundle, tmp_path, vocab):
    """A text of over two million characters (``PARALLEL_MIN``) is first encoded with a
    spawned child process (explorer.workers.tail_encode), started before the window from the
    vocabulary's path (``prefetch_tail``): in the frozen app the child is this executable
    again, which must run the child's work (multiprocessing.freeze_support), not a second
    window, and find the bundled vocabulary inside the bundle."""
    from PySide6.QtGui import QImage

    from explorer.workers.tail_encode import PARALLEL_MIN

    sample = (resources(bundle) / "samples" / "multilingual.txt").read_text(encoding="utf-8")
    big = tmp_path / "big.txt"
    big.write_text(sample * (PARALLEL_MIN * 11 // 10 // len(sample) + 1), encoding="utf-8")
    done = frozen(bundle, "--screenshot", str(tmp_path / "big.png"), "--vocab", vocab,
                  "--text-file", str(big))
    assert done.returncode == 0, done.stderr[-2000:]
    image = QImage(str(tmp_path / "big.png"))
    colors = {image.pixel(x, y) for x in range(0, 1280, 11) for y in range(0, 800, 11)}
    assert len(colors) > 12


def _multilingual_lines(bundle: Path) -> list[str]:
    text = (resources(bundle) / "samples" / "multilingual.txt").read_text(encoding="utf-8")
    return [ln for ln in text.splitlines() if ln.strip()][:40]


def test_encode_bundled_vocabularies_like_the_references(bundle, tmp_path):
    import sentencepiece
    import tiktoken
    import tiktoken.load
    import tokenizers

    from explorer.engine.formats.tiktoken_presets import PRESETS

    lines = _multilingual_lines(bundle)
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    vocab = resources(bundle) / "vocab"

    def ours(name: str) -> list[list[int]]:
        done = frozen(bundle, "encode", "--lines", "--vocab", f"bundled:{name}", str(src))
        assert done.returncode == 0, done.stderr
        return [[int(i) for i in ln.split()] for ln in done.stdout.splitlines()]

    for name, preset in (("cl100k_base", "cl100k"), ("o200k_base", "o200k")):
        p = PRESETS[preset]
        ref = tiktoken.Encoding(name, pat_str=p.pattern, special_tokens=p.special_tokens,
                                mergeable_ranks=tiktoken.load.load_tiktoken_bpe(
                                    str(vocab / f"{name}.tiktoken")))
        assert ours(name) == [ref.encode(ln, allowed_special="all") for ln in lines], name
    hf = tokenizers.Tokenizer.from_file(str(vocab / "corpus_bpe_4k.json"))
    assert ours("corpus_bpe_4k") == [hf.encode(ln, add_special_tokens=False).ids
                                     for ln in lines]
    sp = sentencepiece.SentencePieceProcessor(model_file=str(vocab / "corpus_unigram_4k.model"))
    assert ours("corpus_unigram_4k") == sp.encode(lines)


def test_gguf_info_and_encode_like_the_source_tree(bundle, tmp_path, capsys):
    from explorer.cli import main

    gguf = require("llama-cpp", "ggml-vocab-llama-spm.gguf")
    info = frozen(bundle, "info", "--vocab", str(gguf))
    assert info.returncode == 0 and re.search(r"^format\s+gguf", info.stdout, re.M), info
    text = "Hello wörld 東京 🤗\n"
    done = frozen(bundle, "encode", "--output", "json", "--vocab", str(gguf), stdin=text)
    assert done.returncode == 0, done.stderr
    src = tmp_path / "t.txt"
    src.write_text(text, encoding="utf-8")
    assert main(["encode", "--output", "json", "--vocab", str(gguf), str(src)]) == 0
    assert json.loads(done.stdout) == json.loads(capsys.readouterr().out)


def test_missing_reference_libraries_are_explained_for_the_frozen_build(bundle):
    """The frozen build leaves tiktoken out and has no pip: ``parity`` says so and how to get
    a Tokenizer Explorer that can compare (one line, exit 2), instead of a pip command."""
    text = resources(bundle) / "samples" / "multilingual.txt"
    done = frozen(bundle, "parity", "--vocab", "bundled:cl100k_base", str(text))
    assert done.returncode == 2, done.stderr
    assert "tiktoken: not installed (not included in the frozen build" in done.stderr
    assert "install Tokenizer Explorer with pip" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("algorithm", "suffix", "size"),
                         [("bpe", ".json", "400"), ("unigram", ".model", "800")])
def test_train_on_the_bundled_corpus_then_encode(bundle, tmp_path, algorithm, suffix, size):
    corpus = resources(bundle) / "corpus" / "botchan.txt"
    out = tmp_path / f"trained{suffix}"
    done = frozen(bundle, "train", "--quiet", "--algorithm", algorithm, "--vocab-size", size,
                  "--output", str(out), str(corpus))
    assert done.returncode == 0, done.stderr
    enc = frozen(bundle, "encode", "--output", "pieces", "--vocab", str(out),
                 stdin="Everyone has the right to education.\n")
    assert enc.returncode == 0 and len(enc.stdout.split()) >= 4, enc


def test_release_archive_holds_folder_desktop_entry_and_icon(bundle):
    archives = sorted(bundle.parent.glob(f"{bundle.name}-linux-*.tar.gz"))
    if not archives:
        msg = "no release archive: python packaging/build_frozen.py --archive"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    with tarfile.open(archives[-1]) as tar:
        names = set(tar.getnames())
    top = bundle.name
    for need in ["tokenizer-explorer", f"{explorer.APP_ID}.desktop", f"{explorer.APP_ID}.svg",
                 "README.txt", f"_internal/explorer/resources/desktop/{explorer.APP_ID}.mime.xml",
                 "_internal/explorer/resources/vocab/o200k_base.tiktoken"]:
        assert f"{top}/{need}" in names, need


def test_frozen_install_desktop_points_at_the_executable(bundle, tmp_path):
    env_home = tmp_path / "share"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["XDG_DATA_HOME"] = str(env_home)
    done = subprocess.run([str(bundle / "tokenizer-explorer"), "--install-desktop"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    entry = (env_home / "applications" / f"{explorer.APP_ID}.desktop").read_text()
    assert f"Exec={(bundle / 'tokenizer-explorer').resolve()} %f" in entry.splitlines()


def test_build_refuses_a_top_level_import_missing_from_the_bundle(tmp_path):
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("build_frozen",
                                                  root / "packaging" / "build_frozen.py")
    assert spec is not None and spec.loader is not None
    build_frozen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_frozen)
    warn = tmp_path / "warn.txt"
    warn.write_text(
        "missing module named regex - imported by explorer.engine.pretokenizers.split "
        "(top-level)\n"
        "missing module named explorer.engine.trainers.BpeConfig - imported by "
        "explorer.ui.dialogs.training (top-level)\n"
        "missing module named OpenGL - imported by pyqtgraph.opengl (top-level)\n"
        "missing module named torch - imported by explorer.engine.x (delayed, optional)\n"
        "excluded module named numpy - imported by explorer.engine.y (top-level)\n")
    assert build_frozen.missing_top_level_imports(warn) == [
        "regex (imported by explorer.engine.pretokenizers.split)",
        "numpy (imported by explorer.engine.y)"]
