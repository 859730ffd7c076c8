"""Many words' best segmentations at once: sentencepiece's Viterbi vectorized with numpy.

The per-word Viterbi of :class:`explorer.engine.unigram.model.UnigramModel` costs about a
microsecond per character in Python. Text in many languages is mostly words seen once, so a
cold encode of such text spends most of its time there. :class:`BatchViterbi` runs the same
Viterbi over thousands of words in lock step: the words are sorted by length, and end
position ``k`` of every word is decided by a few numpy operations per piece length.

The decisions are exactly sentencepiece's (``EncodeOptimized``, from path score 0):

- path scores are float32 sums (numpy float32 addition rounds like C++ ``float``);
- the candidates for an end position are visited by increasing start, and only a strictly
  greater score replaces the best, so ties keep the earliest start;
- an ``<unk>`` edge of length 1 stands in wherever no one-character piece exists.

Trie matching is vectorized too. Every (node, character) edge of the piece trie sits in an
open-addressing hash table of int64 keys, and all positions of a chunk of words advance one
character per lookup round, until no piece can continue.

For each word the result carries what the caller needs to reuse it after a non-zero prefix
score (see ``WordPath.segments``): the normalized margin (the gap between the best and the
second best candidate of an end position, over the chains' additions; the smallest of any
position, 0 on a tie; see :mod:`explorer.engine.unigram.limits`), and the largest ``|path
score|``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from explorer.engine.formats.vocab_cache import cached_and_built
from explorer.engine.int_table import IntTable
from explorer.engine.unigram.trie import Entry
from explorer.engine.unigram.word_keys import codes_of, end_to_end


@dataclass
class BatchResult:
    """Segmentations of a batch of words as flat arrays, indexed in the caller's word order.

    Word ``k``'s pieces are ``piece_len[start[k]:start[k] + count[k]]`` (code points) and
    the same slice of ``piece_id`` (ids). ``margin[k]`` is the word's normalized margin
    (:mod:`explorer.engine.unigram.limits`: the gap between the best and the runner-up
    candidate of an end position over ``k + 1``, the smallest of any position; 0 on a tie,
    inf with no choice), ``top[k]`` the largest ``|path score|`` inside the word.
    """

    start: np.ndarray
    count: np.ndarray
    piece_len: np.ndarray
    piece_id: np.ndarray
    margin: np.ndarray
    top: np.ndarray

    def lengths_and_ids(self) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
        """Each word's piece lengths and ids as tuples (C-level passes over slices).

        The ids are shared int objects (:func:`shared_ints`): these tuples fill the model's
        word cache, where an int object per cached piece was ~25 MB of a 10 MB document's
        peak memory.
        """
        cuts = list(map(slice, self.start.tolist(), (self.start + self.count).tolist()))
        lengths = list(map(tuple, map(self.piece_len.tolist().__getitem__, cuts)))
        id_list = self.piece_id.tolist()
        shared = shared_ints(max(id_list, default=0) + 1)
        id_list = list(map(shared.__getitem__, id_list))
        ids = list(map(tuple, map(id_list.__getitem__, cuts)))
        return lengths, ids


_SHARED_INTS: list[int] = []


def shared_ints(n: int) -> list[int]:
    """A list whose item ``k`` is one int object ``k`` for every ``k < n`` (grown on demand,
    never shrunk: a vocabulary's ids)."""
    global _SHARED_INTS
    if len(_SHARED_INTS) < n:
        _SHARED_INTS = _SHARED_INTS + list(range(len(_SHARED_INTS), n))
    return _SHARED_INTS


class _Buffers:
    """Edge arrays reused from chunk to chunk: fresh ones would be paged in every time."""

    def __init__(self, max_len: int) -> None:
        self._rows = max_len + 1
        self._scores = np.zeros((self._rows, 0), np.float32)
        self._ids = np.zeros((self._rows, 0), np.int32)

    def edges(self, cells: int) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, ids)`` for ``cells`` positions: scores all -inf, ids left over."""
        if self._scores.shape[1] < cells:
            self._scores = np.empty((self._rows, cells), np.float32)
            self._ids = np.zeros((self._rows, cells), np.int32)
        scores = self._scores[:, :cells]
        scores.fill(-np.inf)
        return scores, self._ids[:, :cells]


MAX_WORD = 40
"""Longer words take the per-word path (cut into parts no piece crosses, each cached): the
lock step costs one round of numpy calls per character and piece length, whatever few words
are that long, so one 200-character word of code in a window's new words cost more than the
hundreds of short ones. 256 -> 40: the window's document encode 14-23% faster on English
and the all-language UDHR, the batch of lines a few percent (docs/benchmarks.md)."""

_CHUNK_CELLS = 4_000_000  # piece lengths x characters held at once (~50 MB of edge arrays)
_EMPTY = -1
_UNICODE = 0x110000


TrieState = tuple[bytes, int, bytes, bytes, bytes, bytes, tuple[int, int, int, bytes, bytes]]
"""The trie's arrays and its (node, character) -> child table's slots (:func:`_trie_state`),
as kept in the vocabulary cache."""


def _trie_state(entries: Mapping[str, Entry | None],
                user_score: Callable[[int], float]) -> TrieState:
    """``(characters, longest key, piece per node, score per node, parent per node,
    character index per node, child table)`` as bytes (the table as
    :meth:`~explorer.engine.int_table.IntTable.state`: placing a 250k-piece model's 0.5M
    keys took ~0.07 s of each load, in the window and in its helper): node ``n`` (from 1; 0
    is the root) is the ``n``-th non-empty key of ``entries``."""
    keys = [k for k in entries if k]
    count = len(keys)
    index = {k: n for n, k in enumerate(keys, 1)}  # node 0 is the root
    index[""] = 0
    parent = np.fromiter(
        map(index.__getitem__, map(itemgetter(slice(None, -1)), keys)), np.int64, count
    )
    last = np.fromiter(map(ord, map(itemgetter(-1), keys)), np.int64, count)
    chars = np.unique(last)
    char = np.searchsorted(chars, last).astype(np.int64)
    piece = np.full(count + 2, _EMPTY, np.int32)
    score = np.zeros(count + 2, np.float32)
    for node, key in enumerate(keys, 1):
        entry = entries[key]
        if entry is not None:
            piece[node] = entry[0]
            nbytes = len(key.encode("utf-8", "surrogatepass"))
            score[node] = user_score(nbytes) if entry[2] else entry[1]
    return (chars.tobytes(), max(map(len, keys), default=0), piece.tobytes(), score.tobytes(),
            parent.tobytes(), char.tobytes(), _child_table(parent, char, len(chars)).state())


def _child_table(parent: np.ndarray, char: np.ndarray, nchars: int) -> IntTable:
    """``parent * (nchars + 1) + char -> node`` for every node below the root's children."""
    nodes = np.arange(1, len(parent) + 1, dtype=np.int32)
    below = parent != 0
    return IntTable(parent[below] * (nchars + 1) + char[below], nodes[below])


class BatchViterbi:
    """The piece trie as numpy arrays, and the lock-step Viterbi over a batch of words.

    Built from the model's prefix dictionary (``PieceTrie.entries``: every prefix of every
    matchable piece, full pieces mapped to ``(id, score, is_user_defined)``). Immutable.
    """

    def __init__(
        self,
        entries: Mapping[str, Entry | None],
        *,
        unk_id: int,
        unk_score: float,
        user_score: Callable[[int], float],
        cache_key: bytes | None = None,
        sums: type[np.floating] = np.float32,
    ) -> None:
        """``cache_key``: identifies ``entries`` and ``user_score`` (the model's pieces,
        scores and types); the arrays are then kept in the vocabulary cache
        (:func:`~explorer.engine.formats.vocab_cache.cached_and_built`): building them takes
        ~0.1 s for a 32k model, on the path to a document's first paint. ``sums``: the
        type path scores are added in (sentencepiece's float32; llama.cpp's pass adds the
        float32 piece scores in double: ``np.float64``)."""

        def build() -> TrieState:
            return _trie_state(entries, user_score)

        if cache_key is None:
            self._take(build())
        else:
            cached_and_built(cache_key, "unigram-batch-trie-v2", build, self._take)
        self.unk_id = unk_id
        self.unk_score = np.float32(unk_score)
        self.sums = sums

    def _take(self, state: TrieState) -> None:
        """Set the arrays from a :func:`_trie_state`."""
        chars_b, max_len, piece_b, score_b, parent_b, char_b, table_state = state
        chars = np.frombuffer(chars_b, np.int64)
        parent = np.frombuffer(parent_b, np.int64)
        char = np.frombuffer(char_b, np.int64)
        count = len(parent)
        self.nchars = len(chars)
        # characters no piece holds get index nchars, which no trie edge carries
        self.char_index = np.full(_UNICODE, self.nchars, np.int32)
        self.char_index[chars] = np.arange(len(chars), dtype=np.int32)
        self.max_len = int(max_len)
        # per node: the matchable piece ending there (-1: a prefix only) and its score; the
        # extra last node is where index -1 ("no node") lands: no piece, no children
        self.piece = np.frombuffer(piece_b, np.int32).copy()
        self.score = np.frombuffer(score_b, np.float32).copy()
        if len(self.piece) != count + 2 or len(self.score) != count + 2 or len(char) != count:
            raise ValueError("not a trie state")
        self.has_child = np.zeros(count + 2, bool)
        self.has_child[parent] = True
        nodes = np.arange(1, count + 1, dtype=np.int32)
        top = parent == 0
        self.root_child = np.full(self.nchars + 1, _EMPTY, np.int32)
        self.root_child[char[top]] = nodes[top]
        self._stride = self.nchars + 1
        self._table = IntTable.from_state(table_state)
        if len(self._table) != count - int(np.count_nonzero(top)):
            raise ValueError("not the trie's child table")

    # -- the (node, character) -> child table ---------------------------------------------------

    def _children(self, nodes: np.ndarray, chars: np.ndarray) -> np.ndarray:
        """The child of each ``nodes[i]`` along ``chars[i]``, or -1."""
        return self._table.get(nodes.astype(np.int64) * self._stride + chars)

    # -- the batch Viterbi ----------------------------------------------------------------------

    def run(self, words: Sequence[str], bases: np.ndarray | None = None) -> BatchResult:
        """The best segmentation of each word (non-empty, at most :data:`MAX_WORD` long).

        ``bases``: each word's starting path score (float32; default 0), as when the word
        follows others in sentencepiece's one-pass Viterbi. The caller keeps ``|score|``
        below sentencepiece's re-basing threshold (100000): there is no re-basing here.
        """
        return self.run_codes(codes_of("".join(words)), end_to_end(words), bases)

    def run_codes(self, codes: np.ndarray, bounds: np.ndarray,
                  bases: np.ndarray | None = None) -> BatchResult:
        """:meth:`run` on the words ``codes[bounds[k]:bounds[k + 1]]`` (code points end to
        end, any unsigned dtype; ``bounds`` int64 from 0)."""
        count = len(bounds) - 1
        if count <= 0:
            empty = np.zeros(0, np.int64)
            return BatchResult(empty, empty, empty, empty, np.zeros(0), np.zeros(0))
        lengths = np.diff(bounds)
        order = np.argsort(-lengths, kind="stable")
        sorted_lengths = lengths[order]
        ends = np.cumsum(sorted_lengths)
        # the code points word after word in that order
        at = np.repeat(bounds[:-1][order] - (ends - sorted_lengths), sorted_lengths)
        at += np.arange(int(ends[-1]), dtype=np.int64)
        sorted_codes = codes[at]
        del at
        span = max(self.max_len, 1)
        parts: list[tuple[np.ndarray, ...]] = []
        buffers = _Buffers(self.max_len)
        start = 0
        while start < count:
            done = int(ends[start - 1]) if start else 0
            budget = max(_CHUNK_CELLS // span, int(sorted_lengths[start]))
            end = int(np.searchsorted(ends, done + budget, side="right"))
            rows = order[start:end]
            start_scores = (
                np.zeros(len(rows), self.sums) if bases is None else bases[rows].astype(self.sums)
            )
            parts.append(self._run_sorted(sorted_codes[done:int(ends[end - 1])],
                                          sorted_lengths[start:end], start_scores, buffers))
            start = end
        # rows are in length order; word order[r] is row r
        counts = np.concatenate([p[0] for p in parts])
        row_start = np.zeros(count, np.int64)
        np.cumsum(counts[:-1], out=row_start[1:])
        start, word_count = np.empty(count, np.int64), np.empty(count, np.int64)
        start[order], word_count[order] = row_start, counts
        margin, top = np.empty(count), np.empty(count)
        margin[order] = np.concatenate([p[3] for p in parts])
        top[order] = np.concatenate([p[4] for p in parts])
        piece_len = np.concatenate([p[1] for p in parts])
        piece_id = np.concatenate([p[2] for p in parts])
        return BatchResult(start, word_count, piece_len, piece_id, margin, top)

    def _run_sorted(
        self, codes: np.ndarray, lengths: np.ndarray, start_scores: np.ndarray,
        buffers: _Buffers
    ) -> tuple[np.ndarray, ...]:
        """:meth:`run` on words (``codes``, end to end) sorted by decreasing ``lengths``:
        ``(piece counts, piece lengths, piece ids, margins, tops)``, pieces word after
        word."""
        count = len(lengths)
        take = np.take  # (gathers: faster than fancy indexing, its index checks)
        chars = take(self.char_index, codes)
        word_start = np.zeros(count, np.int64)
        np.cumsum(lengths[:-1], out=word_start[1:])
        word_of = np.repeat(np.arange(count), lengths)
        column = np.arange(len(codes)) - take(word_start, word_of)
        longest = int(lengths[0])
        # rows: row i holds position i of every word longer than i, words in order
        active = count - np.searchsorted(lengths[::-1], np.arange(longest), side="right")
        row_start = np.zeros(longest + 1, np.int64)
        np.cumsum(active, out=row_start[1:])
        row_of = take(row_start, column) + word_of  # text position -> row position
        room = take(lengths, word_of) - column  # characters left in the word, this one included
        scores, ids = buffers.edges(len(codes))
        has_edges = self._edges(chars, column, room, row_of, longest, scores, ids)

        cells = len(codes)
        best: list[np.ndarray] = [start_scores]
        # chain[k]: 1 + pieces on the best path to row k (the additions of a candidate from it)
        chain: list[np.ndarray] = [np.ones(count, np.int32)]
        choice = np.zeros(cells, np.int16)  # length of the best piece ending after row k-1
        margin = np.full(count, np.inf)
        top = np.zeros(count)
        neg_inf = self.sums(-np.inf)
        for k in range(1, longest + 1):
            width = int(active[k - 1])  # words with length >= k
            first, runner_up, picked = None, None, None
            for length in range(min(k, self.max_len), 0, -1):
                i = k - length
                if not has_edges[length][i]:
                    continue
                at = row_start[i]
                cand = best[i][:width] + scores[length, at : at + width]
                additions = chain[i][:width]
                if first is None:
                    first = cand
                    runner_up = np.full(width, neg_inf, self.sums)
                    picked = np.full(width, length, np.int16)
                    first_chain = additions.copy()
                    most = additions.copy()
                    continue
                # ties keep the earlier start: only a strictly greater score is picked
                better = cand > first
                np.copyto(picked, np.int16(length), where=better)
                np.copyto(first_chain, additions, where=better)
                np.maximum(most, additions, out=most)
                np.maximum(runner_up, np.minimum(first, cand), out=runner_up)
                np.maximum(first, cand, out=first)
            assert first is not None and runner_up is not None and picked is not None
            # normalized margin (limits.py): each loser's gap over k + 1 = its chain + the
            # winner's + 1, bounded here by the longest chain among the candidates
            gap = (first.astype(np.float64) - runner_up) / (first_chain + most + 1)
            np.minimum(margin[:width], gap, out=margin[:width])
            np.maximum(top[:width], np.abs(first), out=top[:width])
            best.append(first)
            chain.append(first_chain + 1)
            at = row_start[k - 1]
            choice[at : at + width] = picked
        counts, piece_len, piece_id = self._backtrack(lengths, row_start, choice, ids)
        return counts, piece_len, piece_id, margin, top

    def _edges(
        self,
        chars: np.ndarray,
        column: np.ndarray,
        room: np.ndarray,
        row_of: np.ndarray,
        longest: int,
        scores: np.ndarray,
        ids: np.ndarray,
    ) -> dict[int, np.ndarray]:
        """Fill in the score and id of every piece occurrence, by length, in row layout.

        ``scores[L, r]`` becomes the score of the piece of length ``L`` starting at row
        position ``r`` (-inf: none; the caller passes all -inf), ``ids[L, r]`` its id
        (elsewhere left as it was). Returns ``has_edges``: ``has_edges[L][i]`` says whether
        any word has a piece of length ``L`` at column ``i``. Length 1 always has an edge:
        the one-character piece, or ``<unk>``.
        """
        # (np.take for gathers, and a mask's indices once for the arrays it selects from:
        # boolean indexing with a mask of mixed values is ~5x slower on big arrays)
        take, where = np.take, np.flatnonzero
        node = take(self.root_child, chars)
        piece = take(self.piece, node)
        single = piece >= 0
        scores[1, row_of] = np.where(single, take(self.score, node), self.unk_score)
        ids[1, row_of] = np.where(single, piece, self.unk_id)
        has_edges = {1: np.ones(longest + 1, bool)}
        pos = where(take(self.has_child, node))
        at = take(node, pos)
        for length in range(2, self.max_len + 1):
            if not pos.size:
                break
            fits = where(take(room, pos) >= length)
            pos, at = take(pos, fits), take(at, fits)
            child = self._children(at, take(chars, pos + (length - 1)))
            found = where(child >= 0)
            pos, at = take(pos, found), take(child, found)
            piece = take(self.piece, at)
            full = where(piece >= 0)
            if full.size:
                pos_full = take(pos, full)
                target = take(row_of, pos_full)
                scores[length, target] = take(self.score, take(at, full))
                ids[length, target] = take(piece, full)
                flags = np.zeros(longest + 1, bool)
                flags[take(column, pos_full)] = True
                has_edges[length] = flags
            more = where(take(self.has_child, at))
            pos, at = take(pos, more), take(at, more)
        empty = np.zeros(longest + 1, bool)
        for length in range(2, self.max_len + 1):
            has_edges.setdefault(length, empty)
        return has_edges

    def _backtrack(
        self,
        lengths: np.ndarray,
        row_start: np.ndarray,
        choice: np.ndarray,
        ids: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Follow the choices back from each word's end: ``(piece counts, piece lengths,
        piece ids)``, pieces in order, word after word."""
        count = len(lengths)
        end = lengths.copy()
        active = np.arange(count)
        rounds: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        while active.size:
            here = end[active]
            length = choice[row_start[here - 1] + active].astype(np.int64)
            begin = here - length
            rounds.append((active, length, row_start[begin] + active))
            end[active] = begin
            active = active[begin > 0]
        who = np.concatenate([r[0] for r in rounds])
        length = np.concatenate([r[1] for r in rounds])
        at = np.concatenate([r[2] for r in rounds])  # row position where the piece starts
        step = np.repeat(np.arange(len(rounds)), [len(r[0]) for r in rounds])
        pieces = np.bincount(who, minlength=count)
        first = np.zeros(count + 1, np.int64)
        np.cumsum(pieces, out=first[1:])
        # round r found each word's r-th piece from the end
        dest = first[who] + pieces[who] - 1 - step
        out_len = np.empty(len(who), np.int64)
        out_len[dest] = length
        out_id = np.empty(len(who), np.int64)
        out_id[dest] = ids[length, at]
        return pieces, out_len, out_id
