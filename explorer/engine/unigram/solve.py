"""New words to word rows: the many-texts path's words found, looked up and solved.

:func:`text_rows` finds a text's words and their rows with numpy
(:mod:`~explorer.engine.unigram.word_keys`); :func:`word_rows` does it by string where that
cannot (a key collision, a model whose words are not cut by ``▁``). New words are solved part
by part (:func:`_solve_into`: cut where no piece crosses, each distinct part once, by
:class:`~explorer.engine.unigram.batch.BatchViterbi` when there are enough new characters, else
one by one) and appended to the model's :class:`~explorer.engine.unigram.rows.WordRows`.
Used by :mod:`explorer.engine.unigram.many`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from itertools import chain, repeat
from operator import itemgetter

import numpy as np

from explorer.engine.unigram.batch import MAX_WORD, BatchResult
from explorer.engine.unigram.limits import (
    CACHE_LIMIT,
    RESET_GUARD,
    ROUNDING_PER_CHAR,
    ROWS_LIMIT,
    reuse_limits,
)
from explorer.engine.unigram.parts import part_cuts
from explorer.engine.unigram.rows import WordRows, WordTable
from explorer.engine.unigram.word_keys import (
    KeyedWords,
    TextWords,
    codes_of,
    end_to_end,
    splits_words,
    string_of,
    word_bounds,
    word_keys,
)
from explorer.engine.unigram.word_path import WordPath

BATCH_MIN_CHARS = 1000  # fewer new characters: the per-word Viterbi is cheaper
KEYED_MIN_CHARS = 2000
"""Shorter texts find their words by string: the numpy way's fixed cost (~0.2 ms, a
keystroke's window) is more than a few hundred dict lookups (measured: even at ~2000)."""
UNSYNCED_ROWS = 4096
""":func:`word_rows` finds words by key while the string map lacks more rows than this (and
8 per word): bringing it up to date after a document's rows came by key (a child's shares, a
cold encode) cost 68 ms for the two short texts of a 10 MB document, and would be a first
keystroke's."""
_LENGTHS, _IDS, _LIMIT, _WORD_MAX = (itemgetter(k) for k in range(4))


def solve_words(solver: WordPath, texts: Sequence[str]) -> None:
    """Give every word of normalized ``texts`` a row in the model's word rows (the new ones
    solved as an encode would solve them), without encoding the texts."""
    split = solver.split
    if split is None or not any(texts) or text_rows(solver, texts) is not None:
        return
    words = list(chain.from_iterable(map(split.findall, texts)))
    if words:
        word_rows(solver, words)


def _solve_batch(solver: WordPath, words: KeyedWords,
                 ) -> tuple[BatchResult, np.ndarray, np.ndarray]:
    """``words`` (at most ``MAX_WORD`` long) solved by the numpy Viterbi: the result, each
    word's ``word_max`` and reuse limit (as :func:`~.limits.cache_entry` gives them)."""
    result = solver.batch_viterbi().run_codes(words.codes, words.bounds)
    sizes = np.diff(words.bounds)
    batch_max = result.top + 1.0 + sizes * ROUNDING_PER_CHAR  # see cache_entry
    return result, batch_max, reuse_limits(result.margin, batch_max, solver.score_span())


def text_rows(
    solver: WordPath, texts: Sequence[str]
) -> tuple[WordTable, np.ndarray, TextWords, np.ndarray] | None:
    """The words of normalized ``texts`` found and looked up with numpy (:mod:`.word_keys`):
    ``(table, rows, words, counts)``, the model's word rows, each word's row, the words
    (of the texts joined) and how many each text has; the new ones solved first. None when
    the model's words are not cut by a known pattern, the texts are short
    (:data:`KEYED_MIN_CHARS`) or a word key collided: then take the string way
    (:func:`word_rows`)."""
    kind = None if solver.split is None else splits_words(solver.split)
    if kind is None or sum(map(len, texts)) < KEYED_MIN_CHARS:
        return None
    text = texts[0] if len(texts) == 1 else "".join(texts)
    text_starts = end_to_end(texts)
    codes = codes_of(text)
    words = TextWords(text, word_bounds(codes, kind, text_starts[:-1]))
    store = solver.cache.rows
    with store.lock:
        if store.size >= ROWS_LIMIT:
            store.reset()
        rows = _rows_by_key(store, codes, words.bounds, partial(_solve_into, solver, store))
        if rows is None:
            return None
        table = store.table()
    counts = np.diff(np.searchsorted(words.bounds[:-1], text_starts))
    return table, rows, words, counts


def _rows_by_key(store: WordRows, codes: np.ndarray, bounds: np.ndarray,
                 solve: Callable[[KeyedWords], None]) -> np.ndarray | None:
    """The row of each word ``codes[bounds[k]:bounds[k + 1]]``, found by key
    (:mod:`.word_keys`); the distinct new ones are given to ``solve`` first (as code points
    with their keys), which appends them to ``store``. None when a key collided (a row
    holds another word)."""
    keys = word_keys(codes, bounds)
    rows = store.rows_of(keys)
    missing = np.flatnonzero(rows < 0)
    if missing.size:  # solve the new ones, then look up only where they occur
        _, first = np.unique(keys[missing], return_index=True)
        new = missing[first]  # (a key not held: no row holds the word)
        solve(KeyedWords(codes, bounds, keys).take(new))
        rows[missing] = store.rows_of(keys[missing])
    if (rows < 0).any() or not store.holds(codes, bounds, rows):
        return None
    return rows


def word_rows(solver: WordPath, words: list[str]) -> tuple[WordTable, np.ndarray]:
    """The model's word rows (:mod:`~.rows`) and the row of each of ``words``, the new ones
    solved first: by :class:`BatchViterbi` when there are enough new characters, else (and
    for words longer than ``MAX_WORD``) one by one. Found by key while the string map is
    far behind the rows (:data:`UNSYNCED_ROWS`), else by string."""
    store = solver.cache.rows
    with store.lock:
        if store.size >= ROWS_LIMIT:
            store.reset()
        if words and store.unsynced > max(UNSYNCED_ROWS, 8 * len(words)):
            keyed = _rows_by_key(store, codes_of("".join(words)), end_to_end(words),
                                 partial(_solve_into, solver, store))
            if keyed is not None:
                return store.table(), keyed
        rows = np.fromiter(map(store.row_of.get, words, repeat(-1)), np.int64, len(words))
        missing = np.flatnonzero(rows < 0)
        if missing.size:  # solve the new words, then look up only where they occur
            occurring = list(map(words.__getitem__, missing.tolist()))
            _solve_into(solver, store, KeyedWords.of(list(dict.fromkeys(occurring))))
            rows[missing] = np.fromiter(map(store.row_of.__getitem__, occurring), np.int64,
                                        len(occurring))
        return store.table(), rows


def _solve_into(solver: WordPath, store: WordRows, words: KeyedWords) -> None:
    """Solve ``words`` (new, distinct: their code points and keys) and append them to
    ``store``, part by part.

    Words are cut where no piece crosses (between two characters no piece holds together,
    as :meth:`WordPath.entry` cuts them), each distinct part is solved once (and kept as a
    row: a part is also the word it would be alone), and a word of several parts is put
    together from its parts' rows, its limit and bound combined as ``entry`` combines
    them. In code a word such as ``▁self.assertEqual(x,`` is several parts that recur
    everywhere: the 4 MB English text's new words hold 1.09M characters, their distinct
    parts 0.13M (the all-language UDHR: 1.76M and 0.99M).
    """
    bounds, codes = words.bounds, words.codes
    if len(codes) < BATCH_MIN_CHARS:  # (a keystroke's new words: the numpy cutting's fixed
        _solve_whole(solver, store, words)  # cost is more than WordPath.entry, which cuts
        return  # them into the same parts, each solved once in the per-word cache)
    part_bounds = np.flatnonzero(part_cuts(solver, codes, bounds))
    if len(part_bounds) == len(bounds):  # no word is cut
        _solve_whole(solver, store, words)
        return
    rows = _rows_by_key(store, codes, part_bounds, partial(_solve_whole, solver, store))
    if rows is None:  # a key collided: the string way
        every = list(TextWords(string_of(codes), part_bounds))
        row_of = store.row_of
        _solve_whole(solver, store, KeyedWords.of([p for p in dict.fromkeys(every)
                                                   if p not in row_of]))
        rows = np.fromiter(map(store.row_of.__getitem__, every), np.int64, len(every))
    first_part = np.searchsorted(part_bounds, bounds)  # word k: parts first_part[k] on
    per_word = np.diff(first_part)
    several = np.flatnonzero(per_word > 1)
    if not several.size:
        return
    sizes = per_word[several]
    starts = np.zeros(len(several), np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    which = np.repeat(first_part[several] - starts, sizes) + np.arange(int(sizes.sum()))
    rows = rows[which]
    table = store.table()
    count, bound = table.count[rows], table.word_max[rows]
    # each part's limit less the bound of the parts before it in its word (entry's rule)
    before = np.cumsum(bound) - bound
    before -= np.repeat(before[starts], sizes)
    limit = np.minimum.reduceat(table.limit[rows] - before, starts)
    piece_first = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(count, out=piece_first[1:])
    take = np.repeat(table.first[rows] - piece_first[:-1], count)
    take += np.arange(int(piece_first[-1]))
    store.append(words.take(several), piece_first[:-1][starts],
                 np.add.reduceat(count, starts), limit, np.add.reduceat(bound, starts),
                 table.piece_len[take], table.piece_id[take])


def _solve_whole(solver: WordPath, store: WordRows, words: KeyedWords) -> None:
    """Solve ``words`` (new, distinct: their code points and keys) each as one and append
    them to ``store``."""
    if not len(words):
        return
    sizes = np.diff(words.bounds)
    fits = sizes <= MAX_WORD
    short_at = np.flatnonzero(fits)
    if int(sizes[fits].sum()) < BATCH_MIN_CHARS:
        short_at = short_at[:0]
    solo_at = np.arange(len(words)) if not short_at.size else np.flatnonzero(~fits)
    if short_at.size:
        short = words.take(short_at)
        result, batch_max, batch_limit = _solve_batch(solver, short)
        keep = batch_max < RESET_GUARD  # else sentencepiece would re-base scores inside
        store.append(short if keep.all() else short.take(np.flatnonzero(keep)),
                     result.start[keep], result.count[keep], batch_limit[keep],
                     batch_max[keep], result.piece_len, result.piece_id)
        solo_at = np.concatenate([solo_at, short_at[~keep]])
    if not solo_at.size:
        return
    solo = words.take(solo_at)
    cache = solver.cache
    entries = []
    for k in range(len(solo)):
        entries.append(solver.entry(solo.word(k)))  # (its parts are cached in the per-word
        if len(cache) >= CACHE_LIMIT:  # cache)
            cache.clear_words()
    counts = np.fromiter(map(len, map(_IDS, entries)), np.int64, len(entries))
    store.append(solo, np.cumsum(counts) - counts, counts,
                 np.fromiter(map(_LIMIT, entries), np.float64, len(entries)),
                 np.fromiter(map(_WORD_MAX, entries), np.float64, len(entries)),
                 np.fromiter(chain.from_iterable(map(_LENGTHS, entries)), np.int64),
                 np.fromiter(chain.from_iterable(map(_IDS, entries)), np.int64))
