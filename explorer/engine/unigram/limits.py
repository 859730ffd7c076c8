"""When a word's cached segmentation may be reused: float32 drift against decision margins.

sentencepiece sums piece scores in float32 along one Viterbi pass over the whole sentence, so a
word's decisions are made at a *prefix score* that depends on everything before it. A word
solved once from score 0 keeps its segmentation at another prefix score as long as float32
rounding at that magnitude cannot flip any of its decisions: every comparison's margin must
exceed the drift bound ``2 (n + 1) ulp32(M)`` (``n`` characters, ``M`` the largest path score
magnitude). Why that bound: a candidate at end position ``j`` is a float32 chain of at most
``j <= n`` additions, each rounding by at most half an ulp of ``M``, so two candidates' computed
difference is within ``n ulp32(M)`` of the exact one at any starting score whose magnitudes
stay below ``M``. A margin ``m`` measured in float32 from score 0 (magnitudes below ``M``
too) then exceeds the exact difference's error there, and the exact difference exceeds the
error at the new start: both comparisons go the same way. ``2 (n + 1)`` leaves one ulp
spare. :func:`cache_entry` turns a word's smallest margin into the largest prefix-score
magnitude (its *limit*) below which that holds, also below sentencepiece's re-basing threshold
(scores past ``RESET`` are re-based, which changes all later rounding).
"""

from __future__ import annotations

import math

import numpy as np

RESET = 100000.0  # sentencepiece 0.2.3 re-bases path scores beyond this magnitude
RESET_GUARD = RESET * 0.99
INF = float("inf")
CACHE_LIMIT = 200_000  # cached words per model; the cache is cleared when it reaches this

CacheEntry = tuple[tuple[int, ...], tuple[int, ...], float, float]
"""``(lengths, ids, limit, word_max)`` of a cached word: its pieces' lengths in code points
and ids (two tuples, not pairs: fewer objects to build and collect), the prefix-score
magnitude below which they hold, and a bound of ``|path score|`` inside the word (+ 1)."""


def cache_entry(
    lengths: tuple[int, ...], ids: tuple[int, ...], margin: float, word_max: float, n: int
) -> CacheEntry:
    """A cache entry from one Viterbi from score 0 over ``n`` characters.

    ``margin`` bounds how close any decision came to going the other way (0: a tie);
    ``word_max`` bounds ``|path score|`` inside the word. The result is reused while the
    prefix-score bound stays below the entry's limit (see ``UnigramModel._segments``).
    """
    if margin == INF:
        limit = INF
    elif margin <= 0.0:
        limit = -1.0
    else:
        # tolerance(M) = 2 (n + 1) ulp32(M) must stay below the margin
        q = margin / (2.0 * (n + 1))
        limit = math.ldexp(1.0, math.ceil(24 + math.log2(q)) - 1)
    limit = min(limit, RESET_GUARD) - word_max - 1.0
    return lengths, ids, limit, word_max


def reuse_limits(margin: np.ndarray, word_max: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The limits of :func:`cache_entry`, for many words at once."""
    n = lengths.astype(np.float64)
    usable = np.isfinite(margin) & (margin > 0.0)
    q = np.where(usable, margin, 1.0) / (2.0 * (n + 1))
    exponent = np.ceil(24 + np.log2(q)).astype(np.int64) - 1
    limit = np.where(usable, np.ldexp(1.0, exponent), np.where(margin > 0.0, INF, -1.0))
    return np.minimum(limit, RESET_GUARD) - word_max - 1.0
