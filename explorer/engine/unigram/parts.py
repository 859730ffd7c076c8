"""Long words as their parts in the exact pass (:func:`~.many._exact_pieces`).

New words are solved part by part (:func:`~.solve._solve_into`: cut where no piece crosses,
each part also a row of the model's word rows, with its own reuse limit), and a word's
limit is its lowest part's less the bound of the parts before it. Where a prefix score
reaches a word's limit, the exact pass re-ran the whole word, though its other parts hold
there. In minified JSON (``{"id":12,"name":"is``: words of ~30 characters, nearly all
different) that was 37% of the characters, re-run in batches of a few dozen long words,
one batch after every re-run that came out different.

:func:`by_parts` hands the pass such words' parts instead: it speculates on, re-runs and
caches parts (short, and repeated: ``":"``, ``","``), each from its own starting score.
Exact for the reason a word is: no piece crosses a part's ends, so a part's decisions depend
only on the path score at its start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.engine.unigram.batch import MAX_WORD
from explorer.engine.unigram.binade import known_above
from explorer.engine.unigram.limits import RESET_GUARD
from explorer.engine.unigram.rows import WordTable
from explorer.engine.unigram.word_keys import KeyedWords, TextWords, codes_of, word_keys
from explorer.engine.unigram.word_path import PAIR_STRIDE, WordPath


def part_cuts(solver: WordPath, codes: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Where the words ``codes[bounds[k]:bounds[k + 1]]`` (end to end, ``bounds`` from 0)
    are cut into parts, as a mask of the positions ``0..len(codes)``: each word's start, the
    end, and between two characters no piece holds together (as :meth:`WordPath._parts`
    cuts a word)."""
    cut = np.zeros(len(codes) + 1, bool)
    cut[bounds] = True
    if len(codes) > 1:
        wide = codes.astype(np.int64)
        cut[1:-1] |= solver.inner_pairs().get(wide[:-1] * PAIR_STRIDE + wide[1:]) < 0
    return cut


def several_parts(solver: WordPath, words: KeyedWords) -> np.ndarray:
    """Per word, whether it is cut into more than one part (:func:`part_cuts`)."""
    if not len(words):
        return np.zeros(0, bool)
    cuts = part_cuts(solver, words.codes, words.bounds)[:-1]
    return np.add.reduceat(cuts, words.bounds[:-1]) > 1


@dataclass(frozen=True, slots=True)
class Units:
    """The words of a text with some cut into their parts: ``words`` (the units, in the
    same text), each unit's row, and the index of each original word's first unit."""

    words: TextWords
    rows: np.ndarray
    word_unit: np.ndarray


def by_parts(solver: WordPath, words: Sequence[str], rows: np.ndarray,
             table: WordTable) -> Units | None:
    """``words`` (their ``table`` rows) with each word the pass may run again cut into its
    parts, where those parts are rows of ``table``: a word that a prefix score below the
    re-basing guard can make the pass re-run (its limit is below the guard's), and a word
    longer than :data:`~.batch.MAX_WORD` (one such word is re-run alone, and the word
    where the score crosses the re-basing threshold is run alone from its exact score:
    cut, only the part where it crosses is). A chosen word with a part that has no row
    there (a few words solved one by one, whose parts are in the per-word cache) stays
    whole. None when no word is cut (or the words are not a :class:`TextWords`)."""
    if not isinstance(words, TextWords) or not len(words):
        return None
    bounds = words.bounds
    sizes = np.diff(bounds)
    limit = np.take(table.limit, rows)
    low = np.flatnonzero(((limit < RESET_GUARD - np.take(table.word_max, rows) - 2.0)
                          | (sizes > MAX_WORD)) & (sizes > 1))
    # a word whose re-runs are known to give its pieces in every binade above its limit
    # is one part (a child re-runs ahead only those): looking for its parts would find
    # none (of the UDHR text's 26k words the pass may re-run, 17k when a child solved them)
    if low.size:
        low = low[~known_above(np.take(limit, low), np.take(table.same_at, rows[low]))
                  | (np.take(sizes, low) > MAX_WORD)]
    for _ in range(2):  # (again without the words whose parts are not all rows)
        if not low.size:
            return None
        found = _part_rows(solver, words, low, table)
        if found is None:
            return None
        whole = found[3]
        if not whole.size:
            return _units(words, rows, low, *found[:3])
        low = np.delete(low, whole)
    return None


def _part_rows(solver: WordPath, words: TextWords, low: np.ndarray, table: WordTable,
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """``(local, part_bounds, part_rows, whole)`` of the words at ``low``: each one's start
    in their code points end to end, their parts' bounds there and rows in ``table``, and
    the indices (into ``low``) of the words with a part that is not a row there. None when
    no chosen word has two parts, or the rows changed."""
    bounds = words.bounds
    starts, sizes = bounds[low], bounds[low + 1] - bounds[low]
    text = words.text
    codes = codes_of("".join(map(text.__getitem__,
                                 map(slice, starts.tolist(), bounds[low + 1].tolist()))))
    local = np.zeros(len(low) + 1, np.int64)  # each chosen word's start in `codes`
    np.cumsum(sizes, out=local[1:])
    part_bounds = np.flatnonzero(part_cuts(solver, codes, local))
    if len(part_bounds) == len(local):  # no chosen word has two parts
        return None
    keys = word_keys(codes, part_bounds)
    store = solver.cache.rows
    with store.lock:
        if store.generation != table.generation:
            return None
        part_rows = store.rows_of(keys)
        lacking = (part_rows < 0) | (part_rows >= len(table.limit))
        if not lacking.any() and store.holds(codes, part_bounds, part_rows):
            return local, part_bounds, part_rows, np.zeros(0, np.int64)
        # (a row found may hold another word with the same key)
        lacking |= ~store.held_each(codes, part_bounds, np.where(lacking, 0, part_rows))
    word_of_part = np.searchsorted(local, part_bounds[:-1], side="right") - 1
    return local, part_bounds, part_rows, np.unique(word_of_part[lacking])


def _units(words: TextWords, rows: np.ndarray, low: np.ndarray, local: np.ndarray,
           part_bounds: np.ndarray, part_rows: np.ndarray) -> Units:
    """The units of ``words`` with the words at ``low`` cut at ``part_bounds``."""
    bounds = words.bounds
    starts = bounds[low]
    # each chosen word's first part is the word's unit; the others are inserted after it
    first_part = np.searchsorted(part_bounds, local[:-1])
    inner = np.ones(len(part_bounds) - 1, bool)
    inner[first_part] = False
    inner_at = np.flatnonzero(inner)
    word_of = np.searchsorted(local, part_bounds[inner_at], side="right") - 1
    inner_starts = starts[word_of] + part_bounds[inner_at] - local[word_of]
    at = np.searchsorted(bounds, inner_starts)  # (strictly inside word at - 1)
    word_unit = np.arange(len(rows))
    word_unit[1:] += np.cumsum(np.bincount(at, minlength=len(rows))[1:len(rows)])
    unit_rows = np.insert(rows, at, part_rows[inner_at])
    unit_rows[word_unit[low]] = part_rows[first_part]
    return Units(TextWords(words.text, np.insert(bounds, at, inner_starts)), unit_rows,
                 word_unit)
