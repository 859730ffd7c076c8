"""Regenerate every README screenshot with ``--screenshot`` (never by hand).

    python scripts/screenshots.py            # all of them, into docs/screenshots/
    python scripts/screenshots.py main bpe   # some

Each picture is ``python -m explorer --screenshot OUT --view VIEW`` with the arguments below;
the pipeline and chat pictures need MiniLM's tokenizer.json and llama.cpp's Qwen2 GGUF
vocabulary, fetched by ``python tests/references.py`` into ``.refcache/``. The parity
picture uses the bundled BPE with cl100k's ``Split`` regex (``\\p{N}{1,3}+``, which HF's
Oniguruma and Python's ``regex`` read differently).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "docs" / "screenshots"
VOCAB = ROOT / "resources" / "vocab"
SAMPLE = SHOTS / "sample.txt"


def _possessive_bpe(tmp: Path) -> Path:
    """corpus_bpe_4k.json with cl100k's Split pre-tokenizer (as converters write it)."""
    sys.path.insert(0, str(ROOT))
    from explorer.engine.pretokenizers import patterns

    obj = json.loads((VOCAB / "corpus_bpe_4k.json").read_text(encoding="utf-8"))
    obj["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": patterns.CL100K}, "behavior": "Isolated",
         "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": False}]}
    path = tmp / "possessive.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def shots(tmp: Path) -> dict[str, list[str]]:
    """``{picture name: arguments after --screenshot OUT}``."""
    text = ["--text-file", str(SAMPLE)]
    return {
        "main": ["--view", "main"],
        "bpe": ["--view", "bpe", "--vocab", str(VOCAB / "corpus_bpe_4k.json"), *text],
        "lattice": ["--view", "lattice", "--vocab", str(VOCAB / "corpus_unigram_4k.model"),
                    *text],
        "compare": ["--view", "compare", *text],
        "pipeline": ["--view", "pipeline", "--vocab",
                     str(ROOT / ".refcache" / "minilm" / "tokenizer.json"), *text],
        "provenance": ["--view", "provenance", *text],
        "train-step": ["--view", "train-step", *text],
        "train-unigram": ["--view", "train-unigram", *text],
        "parity": ["--view", "parity", "--vocab", str(_possessive_bpe(tmp)), "--text-file",
                   str(SHOTS / "parity_sample.txt")],
        "stats": ["--view", "stats", "--vocab", str(VOCAB / "corpus_bpe_4k.json"), *text],
        "chat": ["--view", "chat", "--vocab",
                 str(ROOT / ".refcache" / "llama-cpp" / "ggml-vocab-qwen2.gguf"), *text],
    }


def main(argv: list[str]) -> int:
    """Render the pictures named in ``argv`` (all when empty); exit status 1 on a failure."""
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        table = shots(Path(tmp))
        for name in argv or list(table):
            out = SHOTS / f"{name}.png"
            cmd = [sys.executable, "-m", "explorer", "--screenshot", str(out), *table[name]]
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            print(f"{name}: {'ok' if done.returncode == 0 else done.stderr.strip()[-300:]}")
            if done.returncode != 0:
                failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
