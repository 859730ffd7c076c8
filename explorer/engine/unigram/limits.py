"""When a word's cached segmentation may be reused: float32 drift against decision margins.

sentencepiece sums piece scores in float32 along one Viterbi pass over the whole sentence, so a
word's decisions are made at a *prefix score* ``S`` that depends on everything before it. A
word solved once from score 0 keeps its segmentation at another prefix score as long as float32
rounding at that magnitude cannot flip any of its decisions.

The bound, per comparison. Inside the word, ``best[i]`` is a chain of ``d_i`` float32 additions
from ``S`` (``d_i``: pieces on the best path to ``i``), each rounding by at most half an ulp of
``M`` (``M`` bounds every magnitude on the way), so it is the exact sum plus an error of at
most ``d_i / 2 ulp32(M)``. A decision compares a candidate ``best[i] + score`` (``d_i + 1``
additions) with ``best[j]`` (``d_j``); ``S`` cancels in the exact difference ``D``, which is
the same at every prefix score, and the computed difference is ``D`` within ``k / 2 ulp32(M)``,
``k = d_i + 1 + d_j``. A difference ``m`` measured from score 0 (whose magnitudes stay below
``M`` too) is ``D`` within the same; so if ``m > k ulp32(M)``, ``D`` and the computed
difference at ``S`` have the sign of ``m``: the comparison goes the same way (by induction over
the word's comparisons, the chains are the same ones). A candidate that loses may reach past
``M`` by a piece's score: the limit keeps ``M`` plus the largest ``|score|`` inside the binade,
and the margin counts ``k + 1`` (one ulp spare). A word's *normalized margin* is the smallest
``m / (k + 1)`` over its comparisons (0 on a tie); every decision holds while ``ulp32(M) <``
that margin. :func:`cache_entry` turns it into the largest prefix-score magnitude (the entry's
*limit*) below which that holds, also below sentencepiece's re-basing threshold (scores past
``RESET`` are re-based, which changes all later rounding).

(Before, the bound was ``2 (n + 1) ulp32(M)`` for a word of ``n`` characters: ``d <= n`` for
any chain. The chains a decision really compares are a few pieces long, so the per-comparison
bound re-runs about a tenth as many words on long texts: docs/benchmarks.md.)
"""

from __future__ import annotations

import math

import numpy as np

RESET = 100000.0  # sentencepiece 0.2.3 re-bases path scores beyond this magnitude
RESET_GUARD = RESET - 1.0
"""A word whose prefix-score magnitude plus ``word_max`` reaches this may be re-based inside:
it is run alone, from its exact prefix score. ``word_max`` bounds ``|path score - prefix|``
at any prefix score below the threshold, float32 rounding included
(:data:`ROUNDING_PER_CHAR`), so the guard needs no further room. (It was ``0.99 RESET``:
every word in the last 1000 of each cycle was run alone, ~5000 words per 2 MB of English.)"""
ROUNDING_PER_CHAR = 2.0**-7
"""A bound of the float32 rounding per character (per addition, at most half an ulp below
2 ** 17, ``2 ** -8``; doubled for room): ``word_max`` adds it for each character."""
INF = float("inf")
CACHE_LIMIT = 200_000  # cached words per model; the cache is cleared when it reaches this
ROWS_LIMIT = 400_000
"""Words kept as rows (:mod:`~.rows`) per model before they are cleared: ~280 bytes a word
(arrays, the word and its dict entry), so at most ~110 MB. The all-language UDHR has 260k
distinct words with an 8k model: at 200k the rows were cleared inside each document encode,
a second encode solved 266k words again (4.6 s instead of 2.0 s; the 10 MB English
document has 170k with a 32k model)."""

CacheEntry = tuple[tuple[int, ...], tuple[int, ...], float, float]
"""``(lengths, ids, limit, word_max)`` of a cached word: its pieces' lengths in code points
and ids (two tuples, not pairs: fewer objects to build and collect), the prefix-score
magnitude below which they hold, and a bound of ``|path score|`` inside the word (+ 1)."""


def cache_entry(
    lengths: tuple[int, ...], ids: tuple[int, ...], margin: float, spread: float,
    span: float, n: int,
) -> CacheEntry:
    """A cache entry from one Viterbi from score 0 over ``n`` characters.

    ``margin`` is the word's normalized margin (the smallest ``|difference| / (k + 1)`` of
    any of its comparisons, see the module notes; 0: a tie, inf: no choice); ``spread``
    bounds ``|path score|`` inside the word from score 0 (+ 1); the entry's ``word_max`` adds
    the rounding of ``n`` additions at any prefix score (:data:`ROUNDING_PER_CHAR`). ``span``
    bounds ``|score|`` of any piece (``<unk>`` included): a losing candidate reaches at most
    that much past the path scores, and its rounding must stay in the same binade. The
    result is reused while the prefix-score bound stays below the entry's limit (see
    ``WordPath.segments``).
    """
    word_max = spread + n * ROUNDING_PER_CHAR
    if margin == INF:
        limit = INF
    elif margin <= 0.0:
        limit = -1.0
    else:  # ulp32(M) < margin for every M below 2 ** (ceil(24 + log2 margin) - 1)
        limit = math.ldexp(1.0, math.ceil(24 + math.log2(margin)) - 1) - span
    limit = min(limit, RESET_GUARD) - word_max - 1.0
    return lengths, ids, limit, word_max


def reuse_limits(margin: np.ndarray, word_max: np.ndarray, span: float) -> np.ndarray:
    """The limits of :func:`cache_entry`, for many words at once (``word_max``: the entries'
    own, rounding included)."""
    usable = np.isfinite(margin) & (margin > 0.0)
    exponent = np.ceil(24 + np.log2(np.where(usable, margin, 1.0))).astype(np.int64) - 1
    limit = np.where(usable, np.ldexp(1.0, exponent) - span,
                     np.where(margin > 0.0, INF, -1.0))
    return np.minimum(limit, RESET_GUARD) - word_max - 1.0
