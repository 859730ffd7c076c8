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

So a re-run can be made before any pass needs it, from a *representative* score of the
binade (:func:`representative_bases`): a helper process solving a document's words ahead of
its encode also re-runs each word whose limit is low at the binades above it, and the encode
finds them cached (a 10 MB document with a 32k model re-ran ~3,100 distinct words there, one
by one, on the encode's thread).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from explorer.engine.unigram.limits import RESET_GUARD

Pieces = tuple[tuple[int, ...], tuple[int, ...]]
"""A word's piece lengths and ids."""


LOW_LIMIT = 65536.0
"""Words whose limit is below this are re-run ahead of need (:func:`representative_bases`).
Nearly every word of a trained model holds up to the re-basing guard (its limit is the
guard less its ``word_max``: a re-run only in the last score units before a re-basing); the
few thousand with lower limits are the ones a long text re-runs."""


FEW_TIE_PIECES = 128
"""Up to this many tie-prone pieces, :meth:`BinadeKeys._can_tie` searches the word for all of
them with one regular expression (their alternation); more, and it looks up the word's
substrings in their set. Measured on a 250k-piece model and 20k UDHR words: 54 pieces 0.8
against 8.3 us a word, 100 pieces 1.2 against 8.1 us (an ``in`` test per piece, used before
up to 48 pieces: 1.8 us for 30), 257 pieces 4.3 against 8.8 us; but compiling the
alternation takes ~70 us a piece (18 ms for 257), more than the ~3,000 words a document asks
about there save (the binade of 100: ~6,000 words, 50 ms against 7 ms)."""

TIES_KEPT = 65536
"""Answers of :meth:`BinadeKeys._can_tie` kept per ``(binade, word)`` (cleared past this
many). A document's encode asks again and again for the same few words: the 10 MB English
text with a 250k-piece model asked ~16,400 times for ~2,600 distinct pairs (~6 us each)."""


GUARD_BINADE = math.frexp(RESET_GUARD)[1]
"""The binade of the re-basing guard: the highest a word is re-run in."""


def representative_bases(e: int) -> tuple[float, float]:
    """Two negative prefix scores in the middle of binade ``[2^(e-1), 2^e)``, an even and
    an odd multiple of its ``u``: between them they give every key of that binade and sign
    a word can have (:meth:`BinadeKeys.key` with or without parity)."""
    even = -math.ldexp(1.5, e - 1)  # 3 * 2^22 u
    return even, even - math.ldexp(1.0, e - 24)


NEVER = -(1 << 30)
""":func:`tie_binades`' binade for a score that ties in none (zero)."""


def tie_binades(scores: np.ndarray) -> np.ndarray:
    """Per score, the one ``e`` at which it is an odd multiple of ``u / 2 = 2^(e-25)`` (a
    round-half-even tie in binade ``[2^(e-1), 2^e)``); :data:`NEVER` for a zero score. A
    nonzero score is ``m * 2^x`` with ``m`` odd in exactly one way, so it ties at ``e = x +
    25`` alone: one pass over all scores, not one per binade (~5 ms each for 250k pieces)."""
    mantissa, exponent = np.frexp(np.abs(scores.astype(np.float64)))
    whole = np.ldexp(mantissa, 53).astype(np.int64)  # the score is whole * 2^(exponent-53)
    lowest = whole & -whole  # its lowest set bit (0 for a zero score)
    shift = np.frexp(lowest.astype(np.float64))[1] - 1  # that bit's place
    return np.where(whole != 0, exponent - 53 + shift + 25, NEVER)


@dataclass(frozen=True, slots=True)
class RunsAhead:
    """Re-runs made ahead of need, as arrays (:meth:`~.word_path.WordPath.runs_ahead`):
    ``words[k]``'s pieces at binade key ``keys[k]`` are ``piece_len`` / ``piece_id`` from
    ``start[k]``, ``count[k]`` of them. Kept so until a pass asks for one
    (:meth:`~.word_path.WordCache.at`): as tuples of int objects, a 10 MB document's 28k
    re-runs ahead were ~30 MB of the window's peak, most of them never asked for."""

    words: list[str]
    keys: np.ndarray
    start: np.ndarray
    count: np.ndarray
    piece_len: np.ndarray
    piece_id: np.ndarray
    row: np.ndarray | None = None
    """Per re-run, the index of its word among the words it was made for (for
    :func:`same_binades`; None: not known)."""

    def pieces(self, k: int) -> Pieces:
        """Re-run ``k`` as ``(lengths, ids)``."""
        a = int(self.start[k])
        b = a + int(self.count[k])
        return tuple(self.piece_len[a:b].tolist()), tuple(self.piece_id[a:b].tolist())


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
        self._ties: dict[int, tuple[bool, frozenset[str], list[int], re.Pattern[str] | None]]
        self._ties = {}
        self._tie_binade: np.ndarray | None = None  # (:func:`tie_binades`, on first use)
        self._known: dict[tuple[int, str], bool] = {}
        """:meth:`_can_tie`'s answers (:data:`TIES_KEPT`)."""

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
        known = self._known
        tie = known.get((e, word))
        if tie is None:
            if len(known) >= TIES_KEPT:
                known.clear()
            tie = known[e, word] = self._can_tie(e, word)
        if tie:
            parity = int(base / math.ldexp(1.0, e - 24)) & 1  # base is a multiple of u
        return (e * 2 + sign) * 4 + parity

    def _can_tie(self, e: int, word: str) -> bool:
        """Whether a candidate of ``word``'s pass may add a score that is an odd multiple
        of ``u / 2`` (a round-half-even tie) at ``e``: a piece with such a score occurs in
        the word, or ``<unk>``'s score is one.

        A few such pieces are searched for at once (:data:`FEW_TIE_PIECES`); where there
        are many (a low binade has thousands: testing each for ``in word`` cost ~0.7 ms a
        word), the word's substrings of each length such a piece has are looked up in a set
        instead."""
        ties = self._ties.get(e)
        if ties is None:
            if self._tie_binade is None:
                self._tie_binade = tie_binades(self._scores)
            odd = np.flatnonzero(self._tie_binade == e).tolist()
            pieces = frozenset(self._pieces[i] for i in odd if self._pieces[i])
            few = None
            if len(pieces) <= FEW_TIE_PIECES:  # (never matches when there are none)
                few = re.compile("|".join(map(re.escape, pieces)) or "(?!)")
            ties = (self._unk_id in odd, pieces, sorted(set(map(len, pieces))), few)
            self._ties[e] = ties
        unk, pieces, sizes, few = ties
        if unk:
            return True
        if few is not None:
            return few.search(word) is not None
        n = len(word)
        for size in sizes:
            if size > n:
                break
            if size == 1:
                if not pieces.isdisjoint(word):
                    return True
            elif any(word[i:i + size] in pieces for i in range(n - size + 1)):
                return True
        return False


def same_binades(runs: RunsAhead | None, size: int, first: np.ndarray, count: np.ndarray,
                 piece_len: np.ndarray, piece_id: np.ndarray) -> np.ndarray:
    """Per word ``k`` of ``size`` (its pieces ``piece_len``/``piece_id[first[k]:first[k] +
    count[k]]``), the bits ``e`` of the negative binades where every re-run ``runs`` made
    for it gives those same pieces (``uint32``; 0 where none is known).

    A pass whose prefix score lies in such a binade, with a key there (the word's pass stays
    in it: :meth:`BinadeKeys.key`), keeps the word's pieces without asking for its re-run
    (:func:`~.many._exact_pieces`): the re-run would be the one made ahead. Where the key
    has a parity, both parities' re-runs must give the pieces."""
    bits = np.zeros(size, np.uint32)
    if runs is None or runs.row is None or not len(runs.row):
        return bits
    row = runs.row.astype(np.int64)
    keys = runs.keys.astype(np.int64)
    run_count = runs.count.astype(np.int64)
    own_count = np.take(count, row).astype(np.int64)
    same = run_count == own_count
    # every piece of a run of the word's length, against the word's piece at that place
    sizes = np.where(same, run_count, 0)
    ends = np.cumsum(sizes)
    total = int(ends[-1]) if len(ends) else 0
    if total:
        step = np.arange(total) - np.repeat(ends - sizes, sizes)
        theirs = np.repeat(runs.start.astype(np.int64), sizes) + step
        ours = np.repeat(np.take(first, row).astype(np.int64), sizes) + step
        equal = ((np.take(runs.piece_len, theirs) == np.take(piece_len, ours))
                 & (np.take(runs.piece_id, theirs) == np.take(piece_id, ours)))
        has = np.flatnonzero(sizes)
        same[has] &= np.logical_and.reduceat(equal, (ends - sizes)[has])
    e = keys >> 3
    negative = ((keys >> 2) & 1) == 1
    parity = keys & 3
    usable = same & negative & (e >= 1) & (e <= 31)
    bit = np.left_shift(np.uint32(1), np.clip(e, 0, 31).astype(np.uint32))
    whole, even, odd = (np.zeros(size, np.uint32) for _ in range(3))
    for into, kind in ((whole, 2), (even, 0), (odd, 1)):
        chosen = np.flatnonzero(usable & (parity == kind))
        np.bitwise_or.at(into, np.take(row, chosen), np.take(bit, chosen))
    bits |= whole | (even & odd)
    return bits


def known_same(same_at: np.ndarray, bases: np.ndarray, word_max: np.ndarray,
               span: float) -> np.ndarray:
    """Per word, whether its pass from ``bases[k]`` is known to keep its pieces: the base is
    negative, has a key (:meth:`BinadeKeys.key`'s test, in arrays: the pass stays in the
    base's binade, ``span`` as the keys' own) and ``same_at[k]`` (:func:`same_binades`)
    holds that binade's bit: the re-run there is the one made ahead."""
    magnitude = -bases
    e = np.frexp(magnitude)[1]  # magnitude in [2^(e-1), 2^e)
    low = np.ldexp(1.0, e - 1)
    reach = word_max + span
    inside = (bases < 0.0) & (magnitude - reach >= low) & (magnitude + reach < low + low)
    inside &= (e >= 1) & (e <= 31)
    bit = np.right_shift(same_at, np.clip(e, 0, 31).astype(np.uint32)) & np.uint32(1)
    return inside & (bit == 1)


def known_above(limit: np.ndarray, same_at: np.ndarray) -> np.ndarray:
    """Per word, whether ``same_at`` (:func:`same_binades`) holds every binade from its
    ``limit``'s up to the guard's: every binade :meth:`~.word_path.WordPath.runs_ahead`
    re-runs it at. (Such a word is one part: only those are re-run ahead.)"""
    first = np.frexp(np.maximum(limit, 1.0))[1]  # (as runs_ahead: its limit's binade on)
    every = np.uint32((1 << (GUARD_BINADE + 1)) - 1)
    need = every & ~(np.left_shift(np.uint32(1), np.clip(first, 0, 31).astype(np.uint32))
                     - np.uint32(1))
    return (same_at & need) == need
