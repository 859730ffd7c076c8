"""Encoding many texts at once with a Unigram model: the batch's new words solved together.

:func:`encode_many` cuts every text into words (as the per-text path does, but with numpy:
:mod:`~explorer.engine.unigram.word_keys`), finds each word's row in the model's word rows
(:mod:`~explorer.engine.unigram.rows`) and solves the new ones part by part (cut where no
piece crosses; each distinct part once) with
:class:`~explorer.engine.unigram.batch.BatchViterbi` (numpy, all parts in lock step) when there
are enough new characters to pay for it. Texts are assembled from flat arrays. Where float32
rounding could decide (a word's reuse limit, see :mod:`explorer.engine.unigram.limits`, is
reached by the prefix-score bound before it), the text is redone from exact float32 scores by
:func:`_exact_pieces`, with the words it may re-run cut into their parts
(:mod:`~explorer.engine.unigram.parts`). The result is identical to the per-text path and to
sentencepiece.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain

import numpy as np

from explorer.engine.gc_pause import gc_paused
from explorer.engine.sentencepiece.pieces import Segment
from explorer.engine.unigram.batch import MAX_WORD
from explorer.engine.unigram.binade import known_same
from explorer.engine.unigram.limits import RESET_GUARD
from explorer.engine.unigram.parts import by_parts
from explorer.engine.unigram.rows import WordTable
from explorer.engine.unigram.solve import (
    BATCH_MIN_CHARS,
    text_rows,
    word_rows,
)
from explorer.engine.unigram.word_keys import end_to_end
from explorer.engine.unigram.word_path import WordPath

SPECULATE_WORDS = 1024  # words speculated at once (bounds the work a re-basing wastes)
SPECULATE_MIN = 8
"""After a re-run that comes out different, the next speculation covers twice as many words
as the last one held (at least this many), and doubles again each time one holds: words
after a change are speculated again, so a text of many near ties (a change every few
words) would redo a whole 1024-word block per change."""


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
    keyed = text_rows(solver, texts)
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
            table, occurrence = word_rows(solver, flat)
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
        keyed = text_rows(solver, [text])
        words: Sequence[str]
        if keyed is not None:
            table, rows, words, _ = keyed
            positions = words.bounds
        else:
            words = split.findall(text)
            positions = end_to_end(words)
            table, rows = word_rows(solver, words)
        first = anchor_word(positions, anchor)
        if first is None:
            return None
        if anchor is None:
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


def anchor_word(positions: np.ndarray, anchor: int | None) -> int | None:
    """The index of the word starting at ``anchor`` among words starting at ``positions``
    (their starts, then the text's end: :func:`end_to_end`); 0 for ``anchor=None`` (the
    text's start), None when ``anchor`` is not a word start."""
    if anchor is None:
        return 0
    first = int(np.searchsorted(positions, anchor))  # bisect_left
    if first >= len(positions) - 1 or positions[first] != anchor:
        return None
    return first


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
    continue from there. Words that may be re-run are cut into their parts first
    (:func:`~.parts.by_parts`): the speculation runs over those units (no piece crosses
    them either).
    """
    units = by_parts(solver, words, rows, table)
    scores = word_scores  # (each unit's starting score, when the words were cut)
    if units is not None:
        words, rows = units.words, units.rows
        scores = None if word_scores is None else []
    taken: list[np.ndarray] = []  # table pieces (positions in its arrays), or -1 - k: more[k]
    more: list[tuple[Sequence[int], Sequence[int]]] = []  # pieces of words decided apart
    total = len(words)
    # Every word's table pieces and their scores, once (a speculation only slices them)
    take = np.take  # (faster than fancy indexing: its index checks and conversions)
    sizes = take(table.count, rows)
    word_first = np.zeros(total + 1, np.int64)  # each word's first piece among them all
    np.cumsum(sizes, out=word_first[1:])
    all_take = np.repeat(take(table.first, rows) - word_first[:-1], sizes)
    all_take += np.arange(int(word_first[-1]))
    piece_scores = take(solver.score_array(), take(table.piece_id, all_take))
    all_max, all_limit = take(table.word_max, rows), take(table.limit, rows)
    all_same = take(table.same_at, rows)
    score_span = solver.score_span()
    pos = 0
    span = SPECULATE_WORDS
    while pos < total:
        end = min(total, pos + span)
        first = int(word_first[pos])
        offsets = word_first[pos : end + 1] - first
        running = np.empty(int(offsets[-1]) + 1, np.float32)
        running[0] = base
        running[1:] = piece_scores[first : first + int(offsets[-1])]
        np.add.accumulate(running, out=running)  # float32 after every addition
        starts = take(running, offsets[:-1]).astype(np.float64)
        magnitude = np.abs(starts)
        word_max = all_max[pos:end]
        risky = np.flatnonzero(magnitude + word_max >= RESET_GUARD)
        stop = int(risky[0]) if risky.size else end - pos
        redo = _not_known(np.flatnonzero(magnitude[:stop] >= all_limit[pos : pos + stop]),
                          starts, word_max, all_same[pos:end], score_span).tolist()
        changed = stop  # the first word whose re-run differs from the table
        new: tuple[list[int], list[int]] = ([], [])
        reruns = _rerun(solver, words, pos, redo, starts, word_max)
        for k, (new_lengths, new_ids) in zip(redo, reruns, strict=False):
            if new_ids != table.pieces(int(rows[pos + k])):
                changed = k
                new = (new_lengths, new_ids)
                break
        # words before `changed` keep the table's pieces
        cut = int(offsets[changed])
        taken.append(all_take[first : first + cut])
        if scores is not None:
            done_words = changed + 1 if changed < stop else (
                stop + 1 if stop < end - pos else end - pos)
            scores.append(starts[:done_words])
        if changed < stop:  # a re-run came out different: exact through that word
            more.append(new)
            taken.append(np.full(len(new[1]), -len(more), np.int64))
            base = solver.accumulate(new[1], float(running[cut]))
            pos += changed + 1
            span = max(SPECULATE_MIN, 2 * (changed + 1))
            continue
        elif stop < end - pos:  # the score may pass 100000 in this word
            word_lengths, word_ids, _, _, base = solver.viterbi(words[pos + stop],
                                                              float(running[cut]))
            more.append((word_lengths, word_ids))
            taken.append(np.full(len(word_ids), -len(more), np.int64))
            pos += stop + 1
        else:  # the whole window holds: on from its end
            base = float(running[-1])
            pos = end
        span = min(SPECULATE_WORDS, 2 * span)
    if units is not None and word_scores is not None and scores:
        word_scores.append(np.concatenate(scores)[units.word_unit])
    return _gather(table, taken, more)


def _not_known(redo: np.ndarray, starts: np.ndarray, word_max: np.ndarray,
               same_at: np.ndarray, span: float) -> np.ndarray:
    """``redo`` (words whose limit their starting score reaches) without those whose re-run
    there is known to give their table pieces (:func:`~.binade.known_same`, from the
    re-runs made ahead)."""
    if not redo.size:
        return redo
    same = np.take(same_at, redo)
    if not same.any():
        return redo
    return redo[~known_same(same, np.take(starts, redo), np.take(word_max, redo), span)]


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
        return np.take(table.piece_len, where), np.take(table.piece_id, where)
    # every position read from the table (runs of more[k] read its first piece, then are
    # written over): two gathers, not two boolean selections and their scatters
    apart = np.flatnonzero(where < 0)
    if len(table.piece_id):
        safe = np.maximum(where, 0)
        lengths, ids = np.take(table.piece_len, safe), np.take(table.piece_id, safe)
    else:  # (every word decided apart)
        lengths, ids = np.zeros(len(where), np.int64), np.zeros(len(where), np.int64)
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
    else a few (and words longer than ``MAX_WORD``) one by one, many in one batch."""
    bases = starts[redo].tolist()
    chosen = [words[pos + k] for k in redo]
    keys = list(map(solver.binade_key, bases, word_max[redo].tolist(), chosen))
    at = solver.cache.at
    found = [None if key is None else at(word, key)
             for word, key in zip(chosen, keys, strict=True)]
    # longer words one by one: a batch's cost grows with its longest word
    batch = [n for n, pieces in enumerate(found)
             if pieces is None and len(chosen[n]) <= MAX_WORD]
    if sum(len(chosen[n]) for n in batch) >= BATCH_MIN_CHARS:
        result = solver.batch_viterbi().run([chosen[n] for n in batch],
                                            bases=np.array([bases[n] for n in batch]))
        # all kept before the first is yielded: the caller stops at the first that
        # differs from the table, and its next speculation asks again for most of the
        # rest (a prefix score moved by a near tie keeps nearly every binade key)
        keep = solver.cache.keep_at_binade
        for n, pieces in zip(batch, zip(*result.lengths_and_ids(), strict=True),
                             strict=True):
            found[n] = pieces
            if keys[n] is not None:
                keep(chosen[n], keys[n], pieces)  # type: ignore[arg-type]
    for n, pieces in enumerate(found):
        if pieces is None:
            pieces = solver.pieces_at(chosen[n], bases[n], keys[n])
        yield list(pieces[0]), list(pieces[1])
