"""Keystroke updates of a SentencePiece Unigram document: cost, and how far they stay exact.

A 1 MB document (the corpus of ``bench_ui.py``) is encoded with MODEL, then random
single-character edits (70% a letter typed, 30% a deletion) go through
``update_document`` (the worker's per-keystroke call, without Qt). Reported:

- ``update_document`` CPU time per edit, p50 / p95, and ``DocTokens.exact_until`` at the
  end (how much of the document is still exact by construction);
- then settling (what the window does once typing pauses): ``settle_document`` steps until
  the document is exact again, their count and CPU time per step p50 / p95 / max (a key
  pressed during a step waits for it), and that the result equals sentencepiece's encode
  of the whole edited text;
- with ``--until-back``: for each edit, how many characters had to be re-encoded past the
  edit until sentencepiece's running float32 score came back to its old value (the window
  grown without the ``EXACT_WINDOW`` limit; each edit is applied to the same exact
  document; "to the end" counts those where it never came back).

    python benchmarks/bench_resume.py MODEL [--edits 80] [--until-back 25]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ui import corpus_text

from explorer.engine.formats import load_tokenizer
from explorer.engine.generators import run_to_end
from explorer.workers import doctokens
from explorer.workers.jobs import INCREMENTAL_MAX_WINDOW


def _encode(tok, text: str) -> doctokens.DocTokens:
    return run_to_end(doctokens.encode_document(tok, text))


def _edit(rng: random.Random, text: str) -> str:
    at = rng.randrange(len(text))
    if rng.random() < 0.7:
        return text[:at] + rng.choice("abcdefghij ") + text[at:]
    return text[:at] + text[at + 1:]


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--edits", type=int, default=80)
    parser.add_argument("--until-back", type=int, default=0, metavar="N")
    parser.add_argument("--size-mb", type=float, default=1.0)
    args = parser.parse_args()
    tok = load_tokenizer(args.model)
    text = corpus_text(int(args.size_mb * 1_000_000))
    doc = _encode(tok, text)
    rng = random.Random(3)
    times = []
    for _ in range(args.edits):
        text = _edit(rng, text)
        t = time.process_time()
        updated = doctokens.update_document(doc, text, max_window=INCREMENTAL_MAX_WINDOW)
        times.append(time.process_time() - t)
        doc = updated[0] if updated is not None else _encode(tok, text)
    print(f"update_document CPU per edit over {args.edits} edits: p50 "
          f"{_pct(times, 0.5) * 1000:.1f} ms, p95 {_pct(times, 0.95) * 1000:.1f} ms; "
          f"exact by construction up to {doc.exact_until:,} of {len(text):,} chars")
    steps = []
    while True:
        t = time.process_time()
        step = doctokens.settle_document(doc)
        steps.append(time.process_time() - t)
        if step is None:
            break
        doc = step[0]
    import sentencepiece as spm

    exact = doc.ids().tolist() == spm.SentencePieceProcessor(model_file=args.model).encode(text)
    print(f"settling: {len(steps) - 1} steps to exact, CPU per step p50 "
          f"{_pct(steps, 0.5) * 1000:.1f} ms, p95 {_pct(steps, 0.95) * 1000:.1f} ms, max "
          f"{max(steps) * 1000:.1f} ms; equal to sentencepiece's whole-text encode: {exact}")
    if args.until_back:
        doctokens.EXACT_WINDOW = 1 << 40
        doc = _encode(tok, text)
        back, to_end = [], 0
        for _ in range(args.until_back):
            edited = _edit(rng, text)
            updated = doctokens.update_document(doc, edited)
            assert updated is not None
            new, change = updated
            to_end += change.first_segment + change.new_segments == len(new.segments)
            back.append(new.cp_starts[change.first_segment + change.new_segments]
                         - new.cp_starts[change.first_segment])
        print(f"characters re-encoded until the score came back, {args.until_back} edits: "
              f"min {min(back):,}, p50 {_pct(back, 0.5):,}, max {max(back):,}; within 32k: "
              f"{sum(b <= 32_768 for b in back)}, to the end: {to_end}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
