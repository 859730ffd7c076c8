"""Encoding many texts at once with a Unigram model: the batch's new words solved together.

:func:`encode_many` cuts every text into words (as the per-text path does), numbers the
distinct words once, takes cached words from the model's cache and solves the others with
:class:`~explorer.engine.unigram.batch.BatchViterbi` (numpy, all words in lock step) when there
are enough new characters to pay for it. Texts are assembled from flat arrays. Where float32
rounding could decide (a word's reuse limit, see :mod:`explorer.engine.unigram.limits`, is
reached by the prefix-score bound before it), the text is redone from exact float32 scores by
:func:`_exact_pieces`. The result is identical to the per-text path and to sentencepiece.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain, compress, repeat
from operator import itemgetter

import numpy as np

from explorer.engine.gc_pause import gc_paused
from explorer.engine.sentencepiece.pieces import Segment
from explorer.engine.unigram.batch import MAX_WORD, BatchResult
from explorer.engine.unigram.limits import (
    CACHE_LIMIT,
    RESET_GUARD,
    ROUNDING_PER_CHAR,
    ROWS_LIMIT,
    reuse_limits,
)
from explorer.engine.unigram.rows import WordRows, WordTable
from explorer.engine.unigram.word_keys import (
    TextWords,
    codes_of,
    splits_words,
    word_bounds,
    word_keys,
)
from explorer.engine.unigram.word_path import PAIR_STRIDE, WordPath

SPECULATE_WORDS = 1024  # words speculated at once (bounds the work a re-basing wastes)
SPECULATE_MIN = 8
"""After a re-run that comes out different, the next speculation covers twice as many words
as the last one held (at least this many), and doubles again each time one holds: words
after a change are speculated again, so a text of many near ties (a change every few
words) would redo a whole 1024-word block per change."""
BATCH_MIN_CHARS = 1000  # fewer new characters: the per-word Viterbi is cheaper
_LENGTHS, _IDS, _LIMIT, _WORD_MAX = (itemgetter(k) for k in range(4))


def encode_many(solver: WordPath, texts: Sequence[str]) -> ManyEncoded:
    """Encode many normalized texts with ``solver``'s words, the new ones solved at once."""
    with gc_paused():  # lists of ints and tuples: no cycles to find
        return _encode(solver, texts)


class ManyEncoded:
    """The ids of many texts (:meth:`UnigramModel.encode_many`), their pieces' lengths on
    demand: ``lengths(k)`` as an array, ``segments(k)`` as text ``k``'s ``(length, id)``
    pairs."""

    def __init__(self, ids: list[list[int]], lengths: np.ndarray, bounds: list[int]) -> None:
        self.ids = ids
        self._lengths = lengths  # every text's piece lengths, text after text
        self._bounds = bounds  # text k's pieces are [bounds[k], bounds[k + 1])
        self._exact: dict[int, np.ndarray] = {}

    def set_exact(self, k: int, lengths: np.ndarray, ids: np.ndarray) -> None:
        """Text ``k`` re-encoded on the exact path (its pieces' lengths and ids)."""
        self._exact[k] = lengths
        self.ids[k] = ids.tolist()

    def lengths(self, k: int) -> np.ndarray:
        """Text ``k``'s pieces' lengths in code points (int64)."""
        exact = self._exact.get(k)
        if exact is not None:
            return exact
        return self._lengths[self._bounds[k] : self._bounds[k + 1]]

    def segments(self, k: int) -> list[Segment]:
        """Text ``k``'s pieces as ``(length, id)``."""
        return list(zip(self.lengths(k).tolist(), self.ids[k], strict=True))


def _encode(solver: WordPath, texts: Sequence[str]) -> ManyEncoded:
    keyed = _text_rows(solver, texts)
    flat: Sequence[str]
    if keyed is not None:
        table, occurrence, flat, counts = keyed
    else:
        split = solver.split
        if split is None:
            words_per = [[text] if text else [] for text in texts]
        else:
            words_per = list(map(split.findall, texts))
        flat = list(chain.from_iterable(words_per))
        counts = np.fromiter(map(len, words_per), np.int64, len(texts))
        if flat:
            table, occurrence = _word_rows(solver, flat)
    if not flat:
        return ManyEncoded([[] for _ in texts], np.zeros(0, np.int64), [0] * (len(texts) + 1))
    starts = np.zeros(len(texts), np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    # float32 safety: the prefix-score bound before each word, within its own text
    word_max = table.word_max[occurrence]
    before = np.cumsum(word_max) - word_max
    line_of = np.repeat(np.arange(len(texts)), counts)
    before -= before[starts[line_of]]
    # half a unit of slack absorbs the rounding of the running sums (each word adds 1)
    unsafe = np.flatnonzero(before >= table.limit[occurrence] - 0.5)
    # Texts where float32 rounding could change a word's cached segmentation at its prefix
    # score are redone from the exact scores, as the per-text path does (every long text:
    # the prefix score of a 32k-character window reaches the limits).
    redo = np.unique(line_of[unsafe]).tolist() if unsafe.size else []
    if len(redo) == len(texts):  # nothing to gather from the table
        result = ManyEncoded([[] for _ in texts], np.zeros(0, np.int64),
                             [0] * (len(texts) + 1))
    else:
        # every occurrence's pieces, gathered from its word's (a ragged take)
        sizes = table.count[occurrence]
        out_first = np.zeros(len(flat) + 1, np.int64)
        np.cumsum(sizes, out=out_first[1:])
        take = np.repeat(table.first[occurrence] - out_first[:-1], sizes)
        take += np.arange(int(out_first[-1]))
        bounds = out_first[np.append(starts, len(flat))].tolist()
        cuts = list(map(slice, bounds[:-1], bounds[1:]))
        ids = table.piece_id[take].tolist()
        result = ManyEncoded(list(map(ids.__getitem__, cuts)), table.piece_len[take], bounds)
    for k in redo:
        a, b = int(starts[k]), int(starts[k] + counts[k])
        result.set_exact(k, *_exact_pieces(solver, flat[a:b], occurrence[a:b], table, 0.0))
    return result


class Resumed:
    """A text encoded from an exact path score at one of its words (:func:`encode_from`):
    its pieces, and from that word on every word's start and exact starting path score."""

    __slots__ = ("ids", "lengths", "word_scores", "word_starts")

    def __init__(self, lengths: np.ndarray, ids: np.ndarray, word_starts: np.ndarray,
                 word_scores: np.ndarray) -> None:
        self.lengths = lengths
        """The pieces' lengths in code points (int64)."""
        self.ids = ids
        """The pieces' ids (int64)."""
        self.word_starts = word_starts
        """Code-point positions (in the normalized text) of the words that have a score
        (int64)."""
        self.word_scores = word_scores
        """sentencepiece's path score at each of those words' first character (float64)."""


def encode_from(
    solver: WordPath, text: str, anchor: int | None, score: float
) -> Resumed | None:
    """Encode normalized ``text`` as part of a longer text sentencepiece encodes in one pass.

    ``anchor``: the position of a word of ``text`` where sentencepiece's path score is known
    to be ``score`` (its state there: no piece crosses a word start); the words from there
    on are decided exactly as in the longer text, and each one's starting score is
    reported, so the next part can start from any of them. Words before the anchor are
    context, encoded from score 0. ``anchor=None``: ``text`` is where the longer text
    starts (score 0 at position 0). None when ``anchor`` is not a word start (or the model
    does not cut words).
    """
    split = solver.split
    if split is None or not text:
        return None
    with gc_paused():
        keyed = _text_rows(solver, [text])
        words: Sequence[str]
        if keyed is not None:
            table, rows, words, _ = keyed
            positions = words.bounds
        else:
            words = split.findall(text)
            positions = np.zeros(len(words) + 1, np.int64)
            np.cumsum(np.fromiter(map(len, words), np.int64, len(words)), out=positions[1:])
            table, rows = _word_rows(solver, words)
        first = 0
        if anchor is not None:
            first = int(np.searchsorted(positions, anchor))  # bisect_left
            if first >= len(words) or positions[first] != anchor:
                return None
        else:
            score = 0.0
        empty = np.zeros(0, np.int64)
        lengths, ids = (
            _exact_pieces(solver, words[:first], rows[:first], table, 0.0) if first
            else (empty, empty)
        )
        scores: list[np.ndarray] = []
        more_lengths, more_ids = _exact_pieces(solver, words[first:], rows[first:], table, score,
                                               scores)
    return Resumed(np.concatenate([lengths, more_lengths]), np.concatenate([ids, more_ids]),
                   positions[first:-1], np.concatenate(scores) if scores else np.zeros(0))


def _exact_pieces(
    solver: WordPath,
    words: Sequence[str],
    rows: np.ndarray,
    table: WordTable,
    base: float,
    word_scores: list[np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Pieces ``(lengths, ids)`` of ``words`` (their ``table`` rows) from exact prefix
    score ``base`` on, exactly as sentencepiece's one-pass Viterbi decides them, re-basing
    included.

    ``word_scores``: when given, the words' exact starting path scores are appended to it,
    as arrays (sentencepiece's ``best`` at each word's first character, before any
    re-basing there).

    A word's table segmentation holds while the magnitude of its true starting score
    stays below its limit. Speculate that every word keeps it: the float32 running score
    then gives each word's starting score at once. Words whose limit that score reaches
    are re-run together from their starting scores (:class:`BatchViterbi` with bases);
    up to the first one that comes out different, or the first word where the score may
    pass 100000 (re-run alone by :meth:`_viterbi`, which re-bases), everything is exact;
    continue from there.
    """
    scores = solver.score_array()
    taken: list[np.ndarray] = []  # table pieces (positions in its arrays), or -1 - k: more[k]
    more: list[tuple[Sequence[int], Sequence[int]]] = []  # pieces of words decided apart
    all_rows = rows
    pos, total = 0, len(words)
    span = SPECULATE_WORDS
    while pos < total:
        here = all_rows[pos : pos + span]
        sizes = table.count[here]
        offsets = np.zeros(len(here) + 1, np.int64)
        np.cumsum(sizes, out=offsets[1:])
        take = np.repeat(table.first[here] - offsets[:-1], sizes) + np.arange(offsets[-1])
        running = np.empty(int(offsets[-1]) + 1, np.float32)
        running[0] = base
        running[1:] = scores[table.piece_id[take]]
        np.add.accumulate(running, out=running)  # float32 after every addition
        starts = running[offsets[:-1]].astype(np.float64)
        magnitude = np.abs(starts)
        risky = np.flatnonzero(magnitude + table.word_max[here] >= RESET_GUARD)
        stop = int(risky[0]) if risky.size else len(here)
        redo = np.flatnonzero(magnitude[:stop] >= table.limit[here[:stop]]).tolist()
        changed = stop  # the first word whose re-run differs from the table
        new: tuple[list[int], list[int]] = ([], [])
        reruns = _rerun(solver, words, pos, redo, starts, table.word_max[here])
        for k, (new_lengths, new_ids) in zip(redo, reruns, strict=False):
            if new_ids != table.pieces(int(here[k])):
                changed = k
                new = (new_lengths, new_ids)
                break
        # words before `changed` keep the table's pieces
        cut = int(offsets[changed])
        taken.append(take[:cut])
        if word_scores is not None:
            done_words = changed + 1 if changed < stop else (
                stop + 1 if stop < len(here) else len(here))
            word_scores.append(starts[:done_words])
        if changed < stop:  # a re-run came out different: exact through that word
            more.append(new)
            taken.append(np.full(len(new[1]), -len(more), np.int64))
            base = solver.accumulate(new[1], float(running[cut]))
            pos += changed + 1
            span = max(SPECULATE_MIN, 2 * (changed + 1))
            continue
        elif stop < len(here):  # the score may pass 100000 in this word
            word_lengths, word_ids, _, _, base = solver.viterbi(words[pos + stop],
                                                              float(running[cut]))
            more.append((word_lengths, word_ids))
            taken.append(np.full(len(word_ids), -len(more), np.int64))
            pos += stop + 1
        else:  # the whole window holds: on from its end
            base = float(running[-1])
            pos += len(here)
        span = min(SPECULATE_WORDS, 2 * span)
    return _gather(table, taken, more)


def _gather(
    table: WordTable, taken: list[np.ndarray], more: list[tuple[Sequence[int], Sequence[int]]]
) -> tuple[np.ndarray, np.ndarray]:
    """The pieces ``(lengths, ids)`` :func:`_exact_pieces` decided, as arrays: positions in
    the table's piece arrays, and runs ``-1 - k`` standing for the pieces of ``more[k]``."""
    if not taken:
        empty = np.zeros(0, np.int64)
        return empty, empty
    where = np.concatenate(taken)
    if not more:
        return table.piece_len[where], table.piece_id[where]
    lengths = np.empty(len(where), np.int64)
    ids = np.empty(len(where), np.int64)
    plain = where >= 0
    lengths[plain] = table.piece_len[where[plain]]
    ids[plain] = table.piece_id[where[plain]]
    apart = np.flatnonzero(~plain)
    if apart.size:
        more_len = np.concatenate([np.array(m[0], np.int64) for m in more])
        more_id = np.concatenate([np.array(m[1], np.int64) for m in more])
        sizes = np.fromiter((len(m[1]) for m in more), np.int64, len(more))
        firsts = np.cumsum(sizes) - sizes
        k = -1 - where[apart]
        # the n-th piece of a run of more[k] is that word's n-th piece
        run_start = np.ones(len(apart), bool)
        run_start[1:] = (k[1:] != k[:-1]) | (apart[1:] != apart[:-1] + 1)
        starts = np.flatnonzero(run_start)
        step = np.arange(len(apart)) - np.repeat(starts, np.diff(np.append(starts, len(apart))))
        at = firsts[k] + step
        lengths[apart] = more_len[at]
        ids[apart] = more_id[at]
    return lengths, ids


def _rerun(
    solver: WordPath,
    words: Sequence[str],
    pos: int,
    redo: list[int],
    starts: np.ndarray,
    word_max: np.ndarray,
) -> Iterator[tuple[list[int], list[int]]]:
    """Pieces ``(lengths, ids)`` of ``words[pos + k]`` for ``k`` in ``redo``, each from
    its starting score ``starts[k]``: from the re-runs cached per binade (:mod:`.binade`),
    else a few one by one, many in one batch."""
    bases = starts[redo].tolist()
    keys = list(map(solver.binade_key, bases, word_max[redo].tolist(),
                    [words[pos + k] for k in redo]))
    found = solver.cache.at_binade
    missing = [n for n, k in enumerate(redo)
               if keys[n] is None or (words[pos + k], keys[n]) not in found]
    if sum(len(words[pos + redo[n]]) for n in missing) < BATCH_MIN_CHARS:
        for n, k in enumerate(redo):
            lengths, ids = solver.pieces_at(words[pos + k], bases[n], keys[n])
            yield list(lengths), list(ids)
        return
    result = solver.batch_viterbi().run([words[pos + redo[n]] for n in missing],
                                        bases=np.array([bases[n] for n in missing]))
    lengths_of, ids_of = result.lengths_and_ids()
    solved = dict(zip(missing, zip(lengths_of, ids_of, strict=True), strict=True))
    for n, k in enumerate(redo):
        pieces = solved.get(n)
        if pieces is None:
            pieces = found[(words[pos + k], keys[n])]  # type: ignore[index]
        elif keys[n] is not None:
            solver.cache.keep_at_binade(words[pos + k], keys[n], pieces)  # type: ignore[arg-type]
        yield list(pieces[0]), list(pieces[1])

def solve_words(solver: WordPath, texts: Sequence[str]) -> None:
    """Give every word of normalized ``texts`` a row in the model's word rows (the new ones
    solved as an encode would solve them), without encoding the texts."""
    split = solver.split
    if split is None or not any(texts) or _text_rows(solver, texts) is not None:
        return
    words = list(chain.from_iterable(map(split.findall, texts)))
    if words:
        _word_rows(solver, words)


def _solve_batch(solver: WordPath, words: list[str]) -> tuple[BatchResult, np.ndarray, np.ndarray]:
    """``words`` (at most ``MAX_WORD`` long) solved by the numpy Viterbi: the result, each
    word's ``word_max`` and reuse limit (as :func:`~.limits.cache_entry` gives them)."""
    result = solver.batch_viterbi().run(words)
    sizes = np.fromiter(map(len, words), np.int64, len(words))
    batch_max = result.top + 1.0 + sizes * ROUNDING_PER_CHAR  # see cache_entry
    return result, batch_max, reuse_limits(result.margin, batch_max, solver.score_span())


def _text_rows(
    solver: WordPath, texts: Sequence[str]
) -> tuple[WordTable, np.ndarray, TextWords, np.ndarray] | None:
    """The words of normalized ``texts`` found and looked up with numpy (:mod:`.word_keys`):
    ``(table, rows, words, counts)``, the model's word rows, each word's row, the words
    (of the texts joined) and how many each text has; the new ones solved first. None when
    the model's words are not cut by a known pattern, or a word key collided: then take
    the string way (:func:`_word_rows`)."""
    kind = None if solver.split is None else splits_words(solver.split)
    if kind is None:
        return None
    text = texts[0] if len(texts) == 1 else "".join(texts)
    text_starts = np.zeros(len(texts) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)), out=text_starts[1:])
    codes = codes_of(text)
    bounds = word_bounds(codes, kind, text_starts[:-1])
    keys = word_keys(codes, bounds)
    words = TextWords(text, bounds)
    store = solver.cache.rows
    with store.lock:
        if store.size >= ROWS_LIMIT:
            store.reset()
        rows = store.rows_of(keys)
        missing = np.flatnonzero(rows < 0)
        if missing.size:  # solve the new words, then look up only where they occur
            _, first = np.unique(keys[missing], return_index=True)
            _solve_into(solver, store, words.strings(missing[first]))
            rows[missing] = store.rows_of(keys[missing])
            if rows[missing].min() < 0:
                return None
        if not store.holds(codes, bounds, rows):
            return None
        table = store.table()
    counts = np.diff(np.searchsorted(bounds[:-1], text_starts))
    return table, rows, words, counts


def _word_rows(solver: WordPath, words: list[str]) -> tuple[WordTable, np.ndarray]:
    """The model's word rows (:mod:`~.rows`) and the row of each of ``words``, the new ones
    solved first: by :class:`BatchViterbi` when there are enough new characters, else (and
    for words longer than ``MAX_WORD``) one by one."""
    store = solver.cache.rows
    with store.lock:
        if store.size >= ROWS_LIMIT:
            store.reset()
        rows = np.fromiter(map(store.row_of.get, words, repeat(-1)), np.int64, len(words))
        missing = np.flatnonzero(rows < 0)
        if missing.size:  # solve the new words, then look up only where they occur
            occurring = list(map(words.__getitem__, missing.tolist()))
            _solve_into(solver, store, list(dict.fromkeys(occurring)))
            rows[missing] = np.fromiter(map(store.row_of.__getitem__, occurring), np.int64,
                                        len(occurring))
        return store.table(), rows


def _solve_into(solver: WordPath, store: WordRows, words: list[str]) -> None:
    """Solve ``words`` (new, distinct) and append them to ``store``, part by part.

    Words are cut where no piece crosses (between two characters no piece holds together,
    as :meth:`WordPath.entry` cuts them), each distinct part is solved once (and kept as a
    row: a part is also the word it would be alone), and a word of several parts is put
    together from its parts' rows, its limit and bound combined as ``entry`` combines
    them. In code a word such as ``▁self.assertEqual(x,`` is several parts that recur
    everywhere: the 4 MB English text's new words hold 1.09M characters, their distinct
    parts 0.13M (the all-language UDHR: 1.76M and 0.99M).
    """
    joined = "".join(words)
    bounds = np.zeros(len(words) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, words), np.int64, len(words)), out=bounds[1:])
    codes = codes_of(joined)
    wide = codes.astype(np.int64)
    cut = np.zeros(len(codes) + 1, bool)
    cut[bounds] = True
    if len(codes) > 1:
        cut[1:-1] |= solver.inner_pairs().get(wide[:-1] * PAIR_STRIDE + wide[1:]) < 0
    del wide
    part_bounds = np.flatnonzero(cut)
    if len(part_bounds) == len(bounds):  # no word is cut
        _solve_whole(solver, store, words)
        return
    parts = TextWords(joined, part_bounds)
    rows = _part_rows(solver, store, codes, parts)
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
    store.append([words[k] for k in several.tolist()], piece_first[:-1][starts],
                 np.add.reduceat(count, starts), limit, np.add.reduceat(bound, starts),
                 table.piece_len[take], table.piece_id[take])


def _part_rows(solver: WordPath, store: WordRows, codes: np.ndarray, parts: TextWords
               ) -> np.ndarray:
    """The row of each of ``parts`` (of the words whose code points are ``codes``), the
    distinct new ones solved first: looked up by key (:mod:`.word_keys`), by string where
    a key collides."""
    keys = word_keys(codes, parts.bounds)
    rows = store.rows_of(keys)
    missing = np.flatnonzero(rows < 0)
    row_of = store.row_of
    if missing.size:
        _, first = np.unique(keys[missing], return_index=True)
        fresh = parts.strings(missing[first])
        _solve_whole(solver, store, [p for p in fresh if p not in row_of])
        rows[missing] = store.rows_of(keys[missing])
    if rows.min() >= 0 and store.holds(codes, parts.bounds, rows):
        return rows
    every = list(parts)  # a key collided: the string way
    _solve_whole(solver, store, [p for p in dict.fromkeys(every) if p not in row_of])
    return np.fromiter(map(row_of.__getitem__, every), np.int64, len(every))


def _solve_whole(solver: WordPath, store: WordRows, words: list[str]) -> None:
    """Solve ``words`` (new, distinct) each as one and append them to ``store``."""
    if not words:
        return
    sizes = np.fromiter(map(len, words), np.int64, len(words))
    fits = sizes <= MAX_WORD
    short = [words[k] for k in np.flatnonzero(fits).tolist()]
    if int(sizes[fits].sum()) < BATCH_MIN_CHARS:
        short = []
    solo = words if not short else [words[k] for k in np.flatnonzero(~fits).tolist()]
    if short:
        result, batch_max, batch_limit = _solve_batch(solver, short)
        keep = batch_max < RESET_GUARD  # else sentencepiece would re-base scores inside
        store.append(list(compress(short, keep.tolist())), result.start[keep],
                     result.count[keep], batch_limit[keep], batch_max[keep],
                     result.piece_len, result.piece_id)
        solo = solo + list(compress(short, (~keep).tolist()))
    if not solo:
        return
    cache = solver.cache
    entries = []
    for word in solo:
        entries.append(solver.entry(word))  # (its parts are cached in the per-word cache)
        if len(cache) >= CACHE_LIMIT:
            cache.clear_words()
    counts = np.fromiter(map(len, map(_IDS, entries)), np.int64, len(entries))
    store.append(solo, np.cumsum(counts) - counts, counts,
                 np.fromiter(map(_LIMIT, entries), np.float64, len(entries)),
                 np.fromiter(map(_WORD_MAX, entries), np.float64, len(entries)),
                 np.fromiter(chain.from_iterable(map(_LENGTHS, entries)), np.int64),
                 np.fromiter(chain.from_iterable(map(_IDS, entries)), np.int64))
