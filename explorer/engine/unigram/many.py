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

import operator
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from itertools import accumulate, chain, compress
from operator import itemgetter

import numpy as np

from explorer.engine.gc_pause import gc_paused
from explorer.engine.sentencepiece.pieces import Segment
from explorer.engine.unigram.batch import MAX_WORD, BatchResult
from explorer.engine.unigram.limits import (
    CACHE_LIMIT,
    RESET_GUARD,
    ROUNDING_PER_CHAR,
    CacheEntry,
    reuse_limits,
)
from explorer.engine.unigram.word_path import WordPath

POPULATE_MAX = 20_000  # batch-solved words cached for later calls, up to this many
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
    demand: ``segments(k)`` are text ``k``'s ``(length, id)`` pairs."""

    def __init__(self, ids: list[list[int]], lengths: np.ndarray, bounds: list[int]) -> None:
        self.ids = ids
        self._lengths = lengths  # every text's piece lengths, text after text
        self._bounds = bounds  # text k's pieces are [bounds[k], bounds[k + 1])
        self._exact: dict[int, list[Segment]] = {}

    def set_exact(self, k: int, segments: list[Segment]) -> None:
        """Text ``k`` re-encoded on the exact path."""
        self._exact[k] = segments
        self.ids[k] = [s[1] for s in segments]

    def segments(self, k: int) -> list[Segment]:
        """Text ``k``'s pieces as ``(length, id)``."""
        exact = self._exact.get(k)
        if exact is not None:
            return exact
        lengths = self._lengths[self._bounds[k] : self._bounds[k + 1]].tolist()
        return list(zip(lengths, self.ids[k], strict=True))


class WordTable:
    """Distinct words of a batch as arrays: word ``k``'s pieces are
    ``piece_len/piece_id[first[k]:first[k] + count[k]]``; ``limit``/``word_max`` as in
    :data:`CacheEntry`."""

    def __init__(self, size: int) -> None:
        self.first = np.zeros(size, np.int64)
        self.count = np.zeros(size, np.int64)
        self.limit = np.zeros(size)
        self.word_max = np.zeros(size)
        self.piece_len = np.zeros(0, np.int64)
        self.piece_id = np.zeros(0, np.int64)
        self._lists: tuple[list[int], list[int]] | None = None

    def lists(self) -> tuple[list[int], list[int]]:
        """``piece_len, piece_id`` as Python lists (made once)."""
        if self._lists is None:
            self._lists = (self.piece_len.tolist(), self.piece_id.tolist())
        return self._lists


def _encode(solver: WordPath, texts: Sequence[str]) -> ManyEncoded:
    split = solver.split
    if split is None:
        words_per = [[text] if text else [] for text in texts]
    else:
        words_per = list(map(split.findall, texts))
    flat = list(chain.from_iterable(words_per))
    if not flat:
        return ManyEncoded([[] for _ in texts], np.zeros(0, np.int64), [0] * (len(texts) + 1))
    index: dict[str, int] = {}
    number = index.setdefault  # a new word gets the next number: len(index) before it
    occurrence = np.array([number(w, len(index)) for w in flat], np.int64)
    distinct = list(index)
    table = _word_table(solver, distinct)
    counts = np.fromiter(map(len, words_per), np.int64, len(texts))
    starts = np.zeros(len(texts), np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    # float32 safety: the prefix-score bound before each word, within its own text
    word_max = table.word_max[occurrence]
    before = np.cumsum(word_max) - word_max
    line_of = np.repeat(np.arange(len(texts)), counts)
    before -= before[starts[line_of]]
    # half a unit of slack absorbs the rounding of the running sums (each word adds 1)
    unsafe = np.flatnonzero(before >= table.limit[occurrence] - 0.5)
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
    if unsafe.size:
        # Texts where float32 rounding could change a word's cached segmentation at its
        # prefix score: redo them from the exact scores, as the per-text path does.
        for k in np.unique(line_of[unsafe]).tolist():
            a, b = int(starts[k]), int(starts[k] + counts[k])
            lengths, ids = _exact_pieces(solver, flat[a:b], occurrence[a:b], table, 0.0)
            result.set_exact(k, list(zip(lengths.tolist(), ids.tolist(), strict=True)))
    return result

class Resumed:
    """A text encoded from an exact path score at one of its words (:func:`encode_from`):
    its pieces, and from that word on every word's start and exact starting path score."""

    __slots__ = ("ids", "lengths", "word_scores", "word_starts")

    def __init__(self, lengths: np.ndarray, ids: np.ndarray, word_starts: list[int],
                 word_scores: list[float]) -> None:
        self.lengths = lengths
        """The pieces' lengths in code points (int64)."""
        self.ids = ids
        """The pieces' ids (int64)."""
        self.word_starts = word_starts
        """Code-point positions (in the normalized text) of the words that have a score."""
        self.word_scores = word_scores
        """sentencepiece's path score at each of those words' first character."""


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
    words = split.findall(text)
    positions = list(accumulate(map(len, words), initial=0))
    first = 0
    if anchor is not None:
        first = bisect_left(positions, anchor)
        if first >= len(words) or positions[first] != anchor:
            return None
    else:
        score = 0.0
    with gc_paused():
        index: dict[str, int] = {}
        number = index.setdefault
        rows = np.array([number(w, len(index)) for w in words], np.int64)
        table = _word_table(solver, list(index))
        empty = np.zeros(0, np.int64)
        lengths, ids = (
            _exact_pieces(solver, words[:first], rows[:first], table, 0.0) if first
            else (empty, empty)
        )
        scores: list[float] = []
        more_lengths, more_ids = _exact_pieces(solver, words[first:], rows[first:], table, score,
                                               scores)
    return Resumed(np.concatenate([lengths, more_lengths]), np.concatenate([ids, more_ids]),
                   positions[first:-1], scores)


def _exact_pieces(
    solver: WordPath,
    words: list[str],
    rows: np.ndarray,
    table: WordTable,
    base: float,
    word_scores: list[float] | None = None,
) -> tuple[list[int], list[int]]:
    """Pieces of ``words`` (their ``table`` rows) from exact prefix score ``base`` on,
    exactly as sentencepiece's one-pass Viterbi decides them, re-basing included.

    ``word_scores``: when given, each word's exact starting path score is appended to it
    (sentencepiece's ``best`` at the word's first character, before any re-basing there).

    A word's table segmentation holds while the magnitude of its true starting score
    stays below its limit. Speculate that every word keeps it: the float32 running score
    then gives each word's starting score at once. Words whose limit that score reaches
    are re-run together from their starting scores (:class:`BatchViterbi` with bases);
    up to the first one that comes out different, or the first word where the score may
    pass 100000 (re-run alone by :meth:`_viterbi`, which re-bases), everything is exact;
    continue from there.
    """
    piece_id = table.lists()[1]
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
            row = int(here[k])
            b = int(table.first[row])
            if new_ids != piece_id[b : b + int(table.count[row])]:
                changed = k
                new = (new_lengths, new_ids)
                break
        # words before `changed` keep the table's pieces
        cut = int(offsets[changed])
        taken.append(take[:cut])
        if word_scores is not None:
            done_words = changed + 1 if changed < stop else (
                stop + 1 if stop < len(here) else len(here))
            word_scores += starts[:done_words].tolist()
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
    lengths = np.concatenate([table.piece_len, *(np.array(m[0], np.int64) for m in more)])
    ids = np.concatenate([table.piece_id, *(np.array(m[1], np.int64) for m in more)])
    sizes = np.fromiter((len(m[1]) for m in more), np.int64, len(more))
    firsts = len(table.piece_id) + np.cumsum(sizes) - sizes
    apart = np.flatnonzero(where < 0)
    if apart.size:
        k = -1 - where[apart]
        # the n-th piece of a run of more[k] is that word's n-th piece
        run_start = np.ones(len(apart), bool)
        run_start[1:] = (k[1:] != k[:-1]) | (apart[1:] != apart[:-1] + 1)
        starts = np.flatnonzero(run_start)
        step = np.arange(len(apart)) - np.repeat(starts, np.diff(np.append(starts, len(apart))))
        where[apart] = firsts[k] + step
    return lengths[where], ids[where]

def _rerun(
    solver: WordPath,
    words: list[str],
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

def _solve_batch(solver: WordPath, words: list[str]) -> tuple[BatchResult, np.ndarray, np.ndarray]:
    """``words`` (at most ``MAX_WORD`` long) solved by the numpy Viterbi: the result, each
    word's ``word_max`` and reuse limit (as :func:`~.limits.cache_entry` gives them)."""
    result = solver.batch_viterbi().run(words)
    sizes = np.fromiter(map(len, words), np.int64, len(words))
    batch_max = result.top + 1.0 + sizes * ROUNDING_PER_CHAR  # see cache_entry
    return result, batch_max, reuse_limits(result.margin, batch_max, solver.score_span())


def _word_table(solver: WordPath, words: list[str]) -> WordTable:
    """Pieces, prefix-score bounds and limits of ``words`` (distinct), from the cache or
    solved: by :class:`BatchViterbi` when there are enough new characters, else (and for
    words longer than ``MAX_WORD``) one by one."""
    cache = solver.cache
    entries: list[CacheEntry | None] = list(map(cache.get, words))
    missing = list(compress(range(len(words)), map(operator.not_, entries)))
    sizes = np.fromiter(map(len, words), np.int64, len(words))
    missing_sizes = sizes[missing]
    short = np.array(missing, np.int64)[missing_sizes <= MAX_WORD].tolist()
    if int(missing_sizes[missing_sizes <= MAX_WORD].sum()) < BATCH_MIN_CHARS:
        short = []
    result = None
    if short:
        result, batch_max, batch_limit = _solve_batch(solver, [words[k] for k in short])
        if len(short) <= POPULATE_MAX:  # cheap enough to keep for later calls
            lengths, ids = result.lengths_and_ids()
            solved = zip(lengths, ids, batch_limit.tolist(), batch_max.tolist(), strict=True)
            cache.update(zip([words[k] for k in short], solved, strict=True))
        # sentencepiece would re-base scores inside these: the exact per-word path
        rebased = np.flatnonzero(batch_max >= RESET_GUARD).tolist()
        solo = sorted(set(missing) - set(short) | {short[r] for r in rebased})
    else:
        solo = missing
    for k in solo:
        entry = solver.entry(words[k])
        if len(cache) >= CACHE_LIMIT:
            cache.clear()
        entries[k] = cache[words[k]] = entry
    known = list(compress(range(len(words)), entries))
    from_cache = [entries[k] for k in known]
    known_counts = np.fromiter(map(len, map(_IDS, from_cache)), np.int64, len(known))
    piece_len = np.fromiter(chain.from_iterable(map(_LENGTHS, from_cache)), np.int64)
    piece_id = np.fromiter(chain.from_iterable(map(_IDS, from_cache)), np.int64)
    table = WordTable(len(words))
    table.count[known] = known_counts
    table.first[known] = np.cumsum(known_counts) - known_counts
    table.limit[known] = np.fromiter(map(_LIMIT, from_cache), np.float64, len(known))
    table.word_max[known] = np.fromiter(map(_WORD_MAX, from_cache), np.float64, len(known))
    if result is not None:
        rows = np.array(short, np.int64)
        keep = batch_max < RESET_GUARD
        rows = rows[keep]
        table.count[rows] = result.count[keep]
        table.first[rows] = len(piece_id) + result.start[keep]
        table.limit[rows] = batch_limit[keep]
        table.word_max[rows] = batch_max[keep]
        piece_len = np.concatenate([piece_len, result.piece_len])
        piece_id = np.concatenate([piece_id, result.piece_id])
    table.piece_len, table.piece_id = piece_len, piece_id
    return table
