"""Train the bundled BPE and Unigram models on the bundled corpus with our own trainers.

Writes, into ``resources/vocab/`` (or ``--out-dir``):

- ``corpus_bpe_4k.json``: byte-level BPE (GPT-2 split pattern, 4,000 ids: ``<|endoftext|>``,
  the 256 bytes, 3,743 merges) as a Hugging Face tokenizer.json. tokenizer.json keeps the
  split pattern and the special token with the merges, so the app's merge-queue view traces
  it and HF ``tokenizers`` loads it with the same ids.
- ``corpus_unigram_4k.model``: SentencePiece-style Unigram (4,000 pieces: ``<unk> <s> </s>``,
  256 byte-fallback pieces, 3,741 learned pieces) as a SentencePiece ``.model``, for the
  lattice view; ``sentencepiece`` loads it with the same ids. Like sentencepiece's default
  ``remove_extra_whitespaces`` it squeezes runs of spaces.

The corpus is ``resources/corpus/botchan.txt`` then ``resources/corpus/udhr_sample.txt``.
Training is deterministic: the same trainer code gives byte-identical files, which
tests/test_bundled_models.py checks. Re-run this script after a trainer change that alters
its output::

    python scripts/build_bundled_models.py            # rewrite the bundled files
    python scripts/build_bundled_models.py --check    # exit 1 if they are out of date

What it does not do: download anything, or train with the reference libraries.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from explorer.engine.pretokenizers.patterns import GPT2
from explorer.engine.trainers.api import run, train
from explorer.engine.trainers.bpe_trainer import BpeConfig
from explorer.engine.trainers.export import to_hf_json, to_sentencepiece, write_atomic
from explorer.engine.trainers.models import TrainedModel
from explorer.engine.trainers.unigram_trainer import UnigramConfig

ROOT = Path(__file__).resolve().parent.parent
CORPUS = (ROOT / "resources" / "corpus" / "botchan.txt",
          ROOT / "resources" / "corpus" / "udhr_sample.txt")
VOCAB_DIR = ROOT / "resources" / "vocab"
BPE_SPECIALS = ("<|endoftext|>",)


@dataclass(frozen=True)
class BundledModel:
    """One bundled model: its file name, algorithm and vocabulary size."""

    filename: str
    algorithm: str
    """``bpe`` (byte-level, tokenizer.json) or ``unigram`` (SentencePiece ``.model``)."""
    vocab_size: int


MODELS = (
    BundledModel("corpus_bpe_4k.json", "bpe", 4000),
    BundledModel("corpus_unigram_4k.model", "unigram", 4000),
)


def config_for(algorithm: str, vocab_size: int) -> BpeConfig | UnigramConfig:
    """The trainer settings of the bundled models (only the vocabulary size varies)."""
    if algorithm == "bpe":
        return BpeConfig(vocab_size=vocab_size, mode="byte_level", pattern=GPT2,
                         special_tokens=BPE_SPECIALS, merge_events=False)
    if algorithm == "unigram":
        return UnigramConfig(vocab_size=vocab_size, byte_fallback=True)
    raise ValueError(f"unknown algorithm {algorithm!r} (bpe or unigram)")


def train_model(algorithm: str, vocab_size: int,
                corpus: Sequence[Path] = CORPUS) -> TrainedModel:
    """Train one model on ``corpus`` with our trainers."""
    from explorer.engine.trainers.corpus import Corpus

    return run(train(Corpus.from_files(corpus), config_for(algorithm, vocab_size))).model


def build_bytes(algorithm: str, vocab_size: int, corpus: Sequence[Path] = CORPUS) -> bytes:
    """The file content of a bundled model: tokenizer.json for BPE, ``.model`` for Unigram."""
    model = train_model(algorithm, vocab_size, corpus)
    if algorithm == "bpe":
        return to_hf_json(model).encode("utf-8")  # exactly what `tokenizer-explorer train` writes
    return to_sentencepiece(model)


def main(argv: Sequence[str] | None = None) -> int:
    """Build (or with ``--check`` verify) every bundled model."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", type=Path, default=VOCAB_DIR,
                        help="where to write the models (default resources/vocab)")
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if a file differs from a fresh build")
    args = parser.parse_args(argv)
    stale = []
    for spec in MODELS:
        data = build_bytes(spec.algorithm, spec.vocab_size)
        target = args.out_dir / spec.filename
        if args.check:
            same = target.is_file() and target.read_bytes() == data
            print(f"{spec.filename}: {'up to date' if same else 'STALE'}")
            if not same:
                stale.append(spec.filename)
            continue
        args.out_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(target, data)
        target.chmod(0o644)  # write_atomic's temp file is private; bundled data is not
        print(f"{target}: {len(data):,} bytes")
    if stale:
        print("re-run: python scripts/build_bundled_models.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
