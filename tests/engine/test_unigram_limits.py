"""The reuse limit of a cached word (explorer/engine/unigram/limits.py) is sound: below it, the
word's float32 Viterbi from any prefix score decides exactly as from score 0.

Vocabularies built for near ties (multi-character pieces scored within a few float32 ulps of
their parts' sum), random words, prefix scores in every binade below the limit: the per-word
entry (``WordPath._part_entry``) and the batch path's limits (``BatchViterbi`` margins through
``reuse_limits``) must never promise a segmentation that a re-run from that score changes.
"""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

from explorer.engine.sentencepiece.pieces import PieceType
from explorer.engine.unigram.limits import ROUNDING_PER_CHAR, reuse_limits
from explorer.engine.unigram.model import UnigramModel

SPACE = "\u2581"


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def near_tie_model(rng: random.Random) -> UnigramModel:
    """Single characters with random scores; longer pieces scored at their parts' float32
    sum plus or minus a few ulps (or exactly it: a tie)."""
    chars = "abcd"
    scores = {SPACE: f32(-rng.uniform(2, 6))}
    scores.update({c: f32(-rng.uniform(0.5, 6)) for c in chars})
    for _ in range(24):
        piece = "".join(rng.choice(chars) for _ in range(rng.randint(2, 4)))
        if rng.random() < 0.3:
            piece = SPACE + piece
        parts = [scores[c] for c in piece]
        total = np.float32(0)
        for p in parts:
            total = np.float32(total + np.float32(p))
        ulps = rng.choice([0, 1, -1, 3, -3, 12, -12, 200])
        scores[piece] = float(np.float32(total) + ulps * np.spacing(np.float32(total)))
    pieces = ["<unk>", *scores]
    types = [PieceType.UNKNOWN] + [PieceType.NORMAL] * len(scores)
    return UnigramModel(pieces, [0.0, *scores.values()], types)


def prefix_scores(limit: float, rng: random.Random, per_binade: int = 3,
                  dense_binades: int = 6) -> list[float]:
    """float32 prefix scores below ``limit`` in magnitude: a few in every binade, many in
    the ``dense_binades`` just below the limit (where a flip would show first)."""
    out = [0.0]
    top = min(limit, 99_000)
    e = -4
    while 2.0**e < top:
        dense = 2.0 ** (e + dense_binades) >= top
        for _ in range(per_binade * (10 if dense else 1)):
            s = f32(-(2.0**e) * rng.uniform(1.0, 2.0))
            if abs(s) < limit:
                out.append(s)
        e += 1
    return out


@pytest.mark.parametrize("seed", range(12))
def test_no_cached_segmentation_changes_below_its_limit(seed: int) -> None:
    rng = random.Random(seed)
    model = near_tie_model(rng)
    path = model._words
    words = sorted({SPACE + "".join(rng.choice("abcd") for _ in range(rng.randint(1, 14)))
                    for _ in range(150)})
    batch = path.batch_viterbi().run(words)
    sizes = np.array([len(w) for w in words])
    batch_limits = reuse_limits(batch.margin, batch.top + 1.0 + sizes * ROUNDING_PER_CHAR,
                                path.score_span())
    checked = flipped = 0
    for k, word in enumerate(words):
        _, ids, limit, _ = path._part_entry(word)
        a, b = int(batch.start[k]), int(batch.start[k] + batch.count[k])
        assert tuple(batch.piece_id[a:b].tolist()) == ids
        for reuse, name in ((limit, "per-word"), (float(batch_limits[k]), "batch")):
            for s in prefix_scores(reuse, rng):
                got = path.viterbi(word, s)[1]
                assert got == ids, (name, word, s, reuse)
                checked += 1
        # beyond the limit the word may come out different: near ties really are there
        for s in prefix_scores(99_000, rng):
            if abs(s) >= limit and path.viterbi(word, s)[1] != ids:
                flipped += 1
                break
    assert checked > 1000
    assert flipped > 0, "no word ever flips: the vocabulary has no near ties to test"
