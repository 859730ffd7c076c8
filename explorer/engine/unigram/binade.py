"""Re-runs of a word at a large prefix score, cached per float32 binade.

When float32 rounding could flip a cached word's decisions at prefix score ``S`` (its reuse
limit, :mod:`explorer.engine.unigram.limits`), the word is re-run from ``S``. Those re-runs
repeat: on 2 MB of English about 10,000 of them were only ~3,400 distinct words per binade.

Why a re-run depends on ``S`` only through its binade. Let ``|S|`` lie in ``[2^(e-1), 2^e)``,
where float32 numbers are the multiples of ``u = 2^(e-24)``. If every value the word's pass
computes stays in that binade (``|S| ± reach`` inside it, ``reach`` bounding how far any
candidate gets from ``S``), each ``best[j] = fl(best[i] + score)`` is ``S`` plus a multiple of
``u``, and rounding to the nearest multiple of ``u`` commutes with adding a multiple of ``u``:
``fl(S + t + score) = S + t + round_u(score)``. So the pass is the same fixed-point Viterbi on
scores rounded to multiples of ``u`` whatever ``S`` is, with one exception: a score that is
an odd multiple of ``u / 2`` rounds half to even, and which neighbour is even depends on the
parity of ``S / u``. The cached result is keyed by the binade, its sign, and that parity
when a piece that can tie at ``u`` occurs in the word (:meth:`BinadeKeys.key`; a trained
model has a few such pieces in the upper binades, so most words need no parity).
"""

from __future__ import annotations

import math

import numpy as np

Pieces = tuple[tuple[int, ...], tuple[int, ...]]
"""A word's piece lengths and ids."""


class BinadeKeys:
    """The binade key of a prefix score for a model's scores (see the module notes)."""

    def __init__(self, scores: np.ndarray, pieces: list[str], unk_id: int, span: float) -> None:
        """``scores``: per id, the score the encoder adds for it (float32 values, ``<unk>``
        and user-defined pieces included); ``pieces``: per id, its text; ``span``: a bound
        of every score's magnitude."""
        self._scores = scores.astype(np.float64)
        self._pieces = pieces
        self._unk_id = unk_id
        self._span = span
        self._ties: dict[int, tuple[bool, list[str]]] = {}

    def key(self, base: float, word_max: float, word: str) -> int | None:
        """The key under which ``word``'s re-run from ``base`` is cached, or None when its
        pass may leave the binade of ``base`` (then it must be run from ``base`` itself).

        ``word_max`` bounds ``|path score - base|`` inside the word; candidates reach a
        piece's score further (``span``).
        """
        sign = 0
        if base < 0.0:
            base, sign = -base, 1
        if base == 0.0:
            return None
        e = math.frexp(base)[1]  # base in [2^(e-1), 2^e)
        reach = word_max + self._span
        low = math.ldexp(1.0, e - 1)
        if base - reach < low or base + reach >= low + low:
            return None
        parity = 2
        if self._can_tie(e, word):
            parity = int(base / math.ldexp(1.0, e - 24)) & 1  # base is a multiple of u
        return (e * 2 + sign) * 4 + parity

    def _can_tie(self, e: int, word: str) -> bool:
        """Whether a candidate of ``word``'s pass may add a score that is an odd multiple
        of ``u / 2`` (a round-half-even tie) at ``e``: a piece with such a score occurs in
        the word, or ``<unk>``'s score is one."""
        ties = self._ties.get(e)
        if ties is None:
            halves = self._scores / math.ldexp(1.0, e - 25)  # exact: a power-of-two scale
            whole = np.floor(halves)
            odd = np.flatnonzero((halves == whole) & (np.mod(whole, 2.0) == 1.0)).tolist()
            ties = (self._unk_id in odd, [self._pieces[i] for i in odd if self._pieces[i]])
            self._ties[e] = ties
        unk, pieces = ties
        return unk or any(piece in word for piece in pieces)
