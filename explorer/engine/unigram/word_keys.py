"""A normalized text's words found and keyed with numpy, without a Python string per word.

The many-texts path looked each word up by its string: ``findall`` made a string per word
and a dict lookup hashed and compared it (with the strings' deallocation, about half a
microsecond a word: a third of a warm document encode, py-spy). Here the text's code points
are one array:

- words start where a run of ``▁`` begins after another character (a prefix model's
  ``▁+[^▁]*|[^▁]+``) or where another character follows ``▁`` (a suffix model's
  ``[^▁]+▁*|▁+``), and at every text's start;
- each word's key is a 64-bit hash of its code points and length (:func:`word_keys`), looked
  up in the word rows' :class:`~explorer.engine.int_table.IntTable`
  (:meth:`~explorer.engine.unigram.rows.WordRows.rows_of`);
- a hash can collide, so every occurrence is then compared with its row's own code points,
  all in one gather over the text; a text where one differs goes the string way.

:class:`TextWords` is the words as a sequence of strings, each made only when asked for (the
new words to solve and the near ties to re-run).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import overload

import numpy as np

from explorer.engine.sentencepiece.pieces import SPACE_SYMBOL

_SPACE = ord(SPACE_SYMBOL)
_BASE = np.uint64(0x100000001B3)  # odd: every power is invertible mod 2**64
_LENGTH_MIX = np.uint64(0x9E3779B97F4A7C15)
_FINAL_MIX = np.uint64(0xBF58476D1CE4E5B9)
_INVERSE = np.uint64(pow(int(_BASE), -1, 2**64))
PLACED_MAX = 1 << 19
"""Texts up to this many code points are keyed from each code point's place in the text
(:func:`word_keys`; the two power tables then hold 8 MB), longer ones from its place in its
word."""
_powers = np.ones(1, np.uint64)
"""``_BASE ** j`` (mod 2**64) for every position ``j`` seen so far."""
_inverse_powers = np.ones(1, np.uint64)
"""``_BASE ** -j`` (mod 2**64), as far as :data:`_powers`."""


def _power_table(table: np.ndarray, base: np.uint64, n: int) -> np.ndarray:
    """``base ** j`` (mod 2**64) for ``j < n`` at least: ``table`` (its powers from
    ``j = 0``) when it is long enough, else a new one, grown by doubling up to
    :data:`PLACED_MAX`."""
    if len(table) >= n:
        return table
    grown = np.full(max(n, min(2 * len(table), PLACED_MAX)), base, np.uint64)
    grown[0] = 1
    np.multiply.accumulate(grown, out=grown)  # wraps mod 2**64, as meant
    return grown


def _powers_to(n: int) -> np.ndarray:
    """``_BASE ** j`` for ``j < n`` at least (kept for the next call; threads may race to
    grow it: each gets an array long enough, the longest is kept)."""
    global _powers
    powers = _power_table(_powers, _BASE, n)
    if len(powers) > len(_powers):
        _powers = powers
    return powers


def _inverse_powers_to(n: int) -> np.ndarray:
    """``_BASE ** -j`` (mod 2**64) for ``j < n`` at least (as :func:`_powers_to`)."""
    global _inverse_powers
    inverse = _power_table(_inverse_powers, _INVERSE, n)
    if len(inverse) > len(_inverse_powers):
        _inverse_powers = inverse
    return inverse


def codes_of(text: str) -> np.ndarray:
    """``text``'s code points as ``uint32`` (lone surrogates kept)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)


def string_of(codes: np.ndarray) -> str:
    """The string of code points ``codes`` (any unsigned dtype; lone surrogates kept)."""
    return codes.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")


def end_to_end(strings: Sequence[str]) -> np.ndarray:
    """Where each of ``strings`` starts when they are joined, then the joined length
    (int64)."""
    bounds = np.zeros(len(strings) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, strings), np.int64, len(strings)), out=bounds[1:])
    return bounds


def splits_words(split: re.Pattern[str]) -> str | None:
    """``"prefix"`` or ``"suffix"`` when ``split`` is one of the two word patterns of
    :func:`~explorer.engine.sentencepiece.pieces.word_splitter` (then :func:`word_bounds`
    cuts the same words), else None."""
    s = SPACE_SYMBOL
    if split.pattern == f"{s}+[^{s}]*|[^{s}]+":
        return "prefix"
    if split.pattern == f"[^{s}]+{s}*|{s}+":
        return "suffix"
    return None


def word_bounds(codes: np.ndarray, kind: str, text_starts: np.ndarray) -> np.ndarray:
    """Every word's start, then the end of the last (int64): words tile the texts, which lie
    end to end in ``codes`` from ``text_starts`` on (a word never crosses a text's start)."""
    space = codes == _SPACE
    cut = np.empty(len(codes), bool)
    if len(codes):
        cut[0] = True
        if kind == "prefix":  # a run of ▁ after another character
            np.greater(space[1:], space[:-1], out=cut[1:])
        else:  # another character after ▁
            np.less(space[1:], space[:-1], out=cut[1:])
    starts = text_starts[text_starts < len(codes)]
    cut[starts] = True
    return np.append(np.flatnonzero(cut), len(codes))


def word_keys(codes: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """The key (int64, never -1) of each word ``codes[bounds[k]:bounds[k + 1]]`` (words
    tile ``codes``): a polynomial hash of its code points mixed with its length."""
    if len(bounds) < 2:
        return np.zeros(0, np.int64)
    starts = bounds[:-1]
    lengths = np.diff(bounds)
    n = len(codes)
    terms = codes.astype(np.uint64)
    if n <= PLACED_MAX:
        # c_j B^j summed over a word is B^start times its hash: one multiplication per code
        # point by its place in the text, and one per word by B^-start (~2x fewer passes
        # over the text than finding each code point's place in its word)
        terms *= _powers_to(n)[:n]
        hashed = np.add.reduceat(terms, starts)
        hashed *= np.take(_inverse_powers_to(n), starts)
    else:
        at = np.arange(n, dtype=np.int64)
        at -= np.repeat(starts, lengths)  # each code point's place in its word
        terms *= np.take(_powers_to(int(lengths.max())), at)
        hashed = np.add.reduceat(terms, starts)
    hashed ^= lengths.astype(np.uint64) * _LENGTH_MIX
    hashed ^= hashed >> np.uint64(31)  # spread the bits (splitmix64's finalizer)
    hashed *= _FINAL_MIX
    hashed ^= hashed >> np.uint64(29)
    keys = hashed.view(np.int64)
    keys[keys == -1] = -2  # -1 marks an empty slot of the table
    return keys


class TextWords(Sequence[str]):
    """The words ``text[bounds[k]:bounds[k + 1]]``, each string made when asked for."""

    __slots__ = ("bounds", "text")

    def __init__(self, text: str, bounds: np.ndarray) -> None:
        self.text = text
        self.bounds = bounds
        """Word starts, then the last word's end (int64)."""

    def __len__(self) -> int:
        return max(len(self.bounds) - 1, 0)

    @overload
    def __getitem__(self, k: int) -> str: ...

    @overload
    def __getitem__(self, k: slice) -> TextWords: ...

    def __getitem__(self, k: int | slice) -> str | TextWords:
        if isinstance(k, slice):
            start, stop, step = k.indices(len(self))
            if step != 1:
                raise ValueError("TextWords slices are contiguous")
            return TextWords(self.text, self.bounds[start : max(start, stop) + 1])
        if k < 0:
            k += len(self)
        return self.text[self.bounds[k] : self.bounds[k + 1]]



class KeyedWords(Sequence[str]):
    """Words as their code points end to end, with their :func:`word_keys`: what a word row
    store keeps of each word (:meth:`~explorer.engine.unigram.rows.WordRows.append`), handed
    on where it is known already (the text's words, the parts they were cut into, the keys
    of a helper process's rows) instead of being found again from the strings."""

    __slots__ = ("bounds", "codes", "keys")

    def __init__(self, codes: np.ndarray, bounds: np.ndarray, keys: np.ndarray) -> None:
        self.codes = codes
        """The words' code points, end to end (any unsigned dtype)."""
        self.bounds = bounds
        """Word ``k`` is ``codes[bounds[k]:bounds[k + 1]]`` (int64, from 0)."""
        self.keys = keys
        """Word ``k``'s key (int64)."""

    @classmethod
    def of(cls, words: Sequence[str], keys: np.ndarray | None = None) -> KeyedWords:
        """The code points and keys of ``words`` (``keys``: theirs, when known)."""
        codes = codes_of("".join(words))
        bounds = end_to_end(words)
        return cls(codes, bounds, word_keys(codes, bounds) if keys is None else keys)

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, k: int) -> str:  # type: ignore[override]
        """Word ``k`` as a string (no slices: see :meth:`take`)."""
        return self.word(k)

    def word(self, k: int) -> str:
        """Word ``k`` as a string."""
        return string_of(self.codes[self.bounds[k]:self.bounds[k + 1]])

    def strings(self) -> list[str]:
        """Every word as a string."""
        text = string_of(self.codes)
        return list(map(text.__getitem__, map(slice, self.bounds[:-1].tolist(),
                                              self.bounds[1:].tolist())))

    def take(self, which: np.ndarray) -> KeyedWords:
        """The words at indices ``which`` (in that order)."""
        if len(which) == len(self.keys) and (
                not len(which) or bool((which == np.arange(len(which))).all())):
            return self
        first = self.bounds[which]
        sizes = self.bounds[which + 1] - first
        bounds = np.zeros(len(which) + 1, np.int64)
        np.cumsum(sizes, out=bounds[1:])
        at = np.repeat(first - bounds[:-1], sizes)
        at += np.arange(int(bounds[-1]), dtype=np.int64)
        return KeyedWords(self.codes[at], bounds, self.keys[which])
