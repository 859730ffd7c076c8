"""Every word the many-texts path has solved, as rows of growing arrays.

A window of a document has a few thousand distinct words, nearly all solved before. Building
each window's table of pieces from cached tuples (a dict lookup, then ``fromiter`` over the
chained tuples, per word and per window) was 42% of a 10 MB document's Unigram encode
(cProfile).
:class:`WordRows` keeps them once, for every call on the model: a text's words map to their
rows by their keys (:mod:`~explorer.engine.unigram.word_keys`: one
:class:`~explorer.engine.int_table.IntTable` lookup for all of them, then one comparison of
every occurrence with its row's code points; :meth:`WordRows.rows_of`,
:meth:`WordRows.holds`), or by string (``row_of``) where keys collide, and the arrays are the
table :func:`~explorer.engine.unigram.many._exact_pieces` reads. The parts new words are
solved in (cut where no piece crosses) are rows too.

Rows are appended, never changed; :meth:`WordRows.clear` starts afresh (the model's word cache
clears it with itself). Writers hold :attr:`WordRows.lock`; a reader takes :meth:`table` under
it too, so the arrays it gets hold every row its mapping names.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from explorer.engine.compact import grown
from explorer.engine.int_table import MISSING, IntTable
from explorer.engine.unigram.binade import RunsAhead
from explorer.engine.unigram.word_keys import KeyedWords, word_keys


class WordTable:
    """Words' pieces and reuse bounds as arrays: word row ``k``'s pieces are
    ``piece_len/piece_id[first[k]:first[k] + count[k]]``; ``limit``/``word_max`` as in
    :data:`~explorer.engine.unigram.limits.CacheEntry`; ``same_at`` the bits of the
    binades where the word's re-runs are known to give its pieces
    (:func:`~explorer.engine.unigram.binade.same_binades`). ``generation``: the store's
    :attr:`WordRows.generation` when taken (its rows are the store's while that holds)."""

    __slots__ = ("count", "first", "generation", "limit", "piece_id", "piece_len", "same_at",
                 "word_max")

    def __init__(self, first: np.ndarray, count: np.ndarray, limit: np.ndarray,
                 word_max: np.ndarray, piece_len: np.ndarray, piece_id: np.ndarray,
                 generation: int = -1, same_at: np.ndarray | None = None) -> None:
        self.first, self.count, self.limit, self.word_max = first, count, limit, word_max
        self.piece_len, self.piece_id = piece_len, piece_id
        self.generation = generation
        self.same_at = np.zeros(len(first), np.uint32) if same_at is None else same_at

    def pieces(self, row: int) -> list[int]:
        """Ids of row ``row``'s pieces."""
        b = int(self.first[row])
        return self.piece_id[b:b + int(self.count[row])].tolist()


@dataclass(frozen=True, slots=True)
class RowsShare:
    """Rows of one :class:`WordRows` for another (:meth:`WordRows.share`): the words as
    code points, the other arrays as in :meth:`WordRows.append`."""

    codes: np.ndarray
    """The words' code points end to end (``uint16``, or ``uint32`` past the BMP): the
    receiver keeps code points, not strings (unpickling, joining and re-encoding a 10 MB
    document's words as strings was ~1/3 of taking its shares)."""
    bounds: np.ndarray
    """Word ``k`` is ``codes[bounds[k]:bounds[k + 1]]`` (``int32``)."""
    first: np.ndarray
    count: np.ndarray
    limit: np.ndarray
    word_max: np.ndarray
    piece_len: np.ndarray
    piece_id: np.ndarray
    keys: np.ndarray | None = None
    """The words' keys (:func:`~.word_keys.word_keys`): the receiver need not hash them
    again."""
    ahead: RunsAhead | None = None
    """Re-runs of these words at the binades above their limits, made ahead of need
    (:meth:`~.word_path.WordPath.runs_ahead`)."""
    expected: tuple[int, int, int] | None = None
    """The rows, pieces and code points the sender expects to have sent in all (an
    estimate, :meth:`WordRows.expected`): the receiver makes room once
    (:meth:`WordRows.reserve`) instead of growing its arrays and its key table share
    after share."""
    same_at: np.ndarray | None = None
    """Per row, the binades where its re-runs made ahead give its pieces
    (:func:`~explorer.engine.unigram.binade.same_binades`; None: none known)."""

    def __len__(self) -> int:
        return len(self.bounds) - 1

    def keyed(self) -> KeyedWords:
        """The words with their keys (hashed here when the share came without)."""
        bounds = self.bounds.astype(np.int64)
        keys = self.keys
        if keys is None or len(keys) != len(bounds) - 1:
            keys = word_keys(self.codes, bounds)
        return KeyedWords(self.codes, bounds, keys)

    @property
    def words(self) -> list[str]:
        """The words as strings (made when asked)."""
        return self.keyed().strings()


def _widened(codes: np.ndarray, used: int) -> np.ndarray:
    """``codes`` as ``uint32``, as much room, its first ``used`` kept (``astype`` would copy
    all its room too: a reserved array of ~4M code points took 20 ms, most of it the
    untouched room's pages)."""
    wide = np.empty(len(codes), np.uint32)
    wide[:used] = codes[:used]
    return wide


class WordRows:
    """Solved words as rows (see the module notes)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        """Held by whoever appends, and while a caller maps words and takes :meth:`table`."""
        self.generation = 0
        """Counts the resets: a :class:`WordTable` of another generation names other rows."""
        self.reset()

    def __reduce__(self) -> tuple[type[WordRows], tuple[()]]:
        """Pickled empty (a tokenizer sent to worker processes): rows are a cache."""
        return WordRows, ()

    def reset(self) -> None:
        """Forget every row (callers hold :attr:`lock`, or no other thread sees this yet)."""
        self.generation += 1
        self._row_of: dict[str, int] = {}
        self._synced = 0
        """Rows ``_row_of`` holds (it is brought up to date when asked: see ``row_of``)."""
        self.size = 0
        self._pieces = 0
        # (int32 where int64 is only room: a 10 MB document's rows were ~60 MB of int64
        # arrays, in the window and in its helper; rows and pieces stay far below 2**31)
        self._first = np.zeros(1024, np.int32)
        self._count = np.zeros(1024, np.int32)
        self._limit = np.zeros(1024)
        self._word_max = np.zeros(1024)
        self._piece_len = np.zeros(4096, np.int32)
        self._piece_id = np.zeros(4096, np.int32)
        self._keys = IntTable(np.zeros(0, np.int64), np.zeros(0, np.int32))
        """word key (:func:`~.word_keys.word_keys`) -> row, for :meth:`rows_of`"""
        self._codes = np.zeros(4096, np.uint16)
        """The words' code points, row after row (``uint32`` once one is past the BMP)"""
        self._code_first = np.zeros(1024, np.int32)
        self._code_len = np.zeros(1024, np.int32)
        self._code_count = 0
        self._row_keys = np.zeros(1024, np.int64)
        """Each row's word key (sent with a :meth:`share`)"""
        self._same_at = np.zeros(1024, np.uint32)
        """Each row's :attr:`WordTable.same_at` bits"""

    @property
    def row_of(self) -> dict[str, int]:
        """word -> its row, for the string way (short texts, collided keys). Kept up to
        date only when asked: the keyed way never needs it, and inserting every new word
        of a cold document into it was ~5% of the encode (string hashes of fresh words)."""
        synced, size = self._synced, self.size
        if size > synced:  # (a slice: islice would walk the list from its start)
            self._row_of.update(zip(self.words(synced, size), range(synced, size),
                                    strict=True))
            self._synced = size
        return self._row_of

    @property
    def unsynced(self) -> int:
        """Rows the string map ``row_of`` would have to add when next asked."""
        return self.size - self._synced

    def clear(self) -> None:
        """Forget every row."""
        with self.lock:
            self.reset()

    def append(self, words: KeyedWords, first: np.ndarray, count: np.ndarray,
               limit: np.ndarray, word_max: np.ndarray, piece_len: np.ndarray,
               piece_id: np.ndarray, same_at: np.ndarray | None = None) -> None:
        """Add ``words`` (new, distinct; their code points and keys) whose pieces are
        ``piece_len/piece_id[first[k]:first[k] + count[k]]`` (pieces no word points at
        are stored too, unused); ``same_at``: their :attr:`WordTable.same_at` bits (none
        known when None). The words are kept as code points only: a string is made
        when one is asked for (:meth:`words`; a cold multilingual document made ~180k, 5%
        of its encode, that nothing read)."""
        n, m = len(words), len(piece_id)
        size, pieces = self.size, self._pieces
        self._first = grown(self._first, size, size + n)
        self._count = grown(self._count, size, size + n)
        self._limit = grown(self._limit, size, size + n)
        self._word_max = grown(self._word_max, size, size + n)
        self._same_at = grown(self._same_at, size, size + n)
        self._piece_len = grown(self._piece_len, pieces, pieces + m)
        self._piece_id = grown(self._piece_id, pieces, pieces + m)
        self._first[size:size + n] = first + pieces
        self._count[size:size + n] = count
        self._limit[size:size + n] = limit
        self._word_max[size:size + n] = word_max
        self._same_at[size:size + n] = 0 if same_at is None else same_at
        self._piece_len[pieces:pieces + m] = piece_len
        self._piece_id[pieces:pieces + m] = piece_id
        self._add_keys(words, size)
        self.size, self._pieces = size + n, pieces + m

    def _add_keys(self, keyed: KeyedWords, size: int) -> None:
        """Keep the code points and keys of the words of rows ``size`` on."""
        n = len(keyed)
        codes, bounds, keys = keyed.codes, keyed.bounds, keyed.keys
        used = self._code_count
        if (self._codes.dtype == np.uint16 and len(codes) and codes.dtype != np.uint16
                and int(codes.max()) > 0xFFFF):
            self._codes = _widened(self._codes, used)
        self._codes = grown(self._codes, used, used + len(codes))
        self._codes[used:used + len(codes)] = codes
        self._code_first = grown(self._code_first, size, size + n)
        self._code_len = grown(self._code_len, size, size + n)
        self._row_keys = grown(self._row_keys, size, size + n)
        self._code_first[size:size + n] = bounds[:-1] + used
        self._code_len[size:size + n] = np.diff(bounds)
        self._row_keys[size:size + n] = keys
        self._code_count = used + len(codes)
        # a key already held (a hash collision, or a word added twice) keeps its row: the
        # words that collide are told apart by rows_of's callers comparing code points
        fresh = np.flatnonzero(self._keys.get(keys) == MISSING)
        _, first = np.unique(keys[fresh], return_index=True)
        fresh = fresh[first]
        self._keys.add(keys[fresh], (fresh + size).astype(np.int32))

    def expected(self, scale: float) -> tuple[int, int, int]:
        """The rows, pieces and code points held, times ``scale`` (a sender's estimate of
        what it will have sent in all: :attr:`RowsShare.expected`)."""
        return (int(self.size * scale), int(self._pieces * scale),
                int(self._code_count * scale))

    def reserve(self, rows: int, pieces: int, codes: int) -> None:
        """Room for ``rows`` rows of ``pieces`` pieces and ``codes`` code points in all
        (callers hold :attr:`lock`): arrays grown once (their room is not touched until
        written: no memory until used) and the key table sized once (a ten-megabyte
        document's rows taken from a child in ~30 shares grew it ~8 times, each growth
        placing every key again)."""
        size, used = self.size, self._pieces
        for name in ("_first", "_count", "_limit", "_word_max", "_code_first", "_code_len",
                     "_row_keys", "_same_at"):
            setattr(self, name, grown(getattr(self, name), size, rows))
        self._piece_len = grown(self._piece_len, used, pieces)
        self._piece_id = grown(self._piece_id, used, pieces)
        self._codes = grown(self._codes, self._code_count, codes)
        self._keys.reserve(rows)

    def words(self, start: int, stop: int) -> list[str]:
        """The words of rows ``start`` to ``stop``."""
        return self._keyed(start, stop).strings()

    def _keyed(self, start: int, stop: int) -> KeyedWords:
        """Rows ``start`` to ``stop``'s words as held (views: their code points are end to
        end, row after row)."""
        low = high = self._code_count
        if stop > start:
            low = int(self._code_first[start])
            high = int(self._code_first[stop - 1] + self._code_len[stop - 1])
        bounds = np.append(self._code_first[start:stop] - low, high - low)
        return KeyedWords(self._codes[low:high], bounds, self._row_keys[start:stop])

    def rows_of(self, keys: np.ndarray) -> np.ndarray:
        """The row of each word key (int64; -1: none). A row found may hold another word
        with the same key: check with :meth:`holds`."""
        return self._keys.get(keys).astype(np.int64)

    def holds(self, codes: np.ndarray, bounds: np.ndarray, rows: np.ndarray) -> bool:
        """Whether row ``rows[k]`` holds the word ``codes[bounds[k]:bounds[k + 1]]``, for
        every ``k`` (words tile ``codes``; every row valid)."""
        lengths = np.diff(bounds)
        if not np.array_equal(np.take(self._code_len, rows), lengths):
            return False
        at = np.repeat(np.take(self._code_first, rows) - bounds[:-1], lengths)
        at += np.arange(len(codes), dtype=np.int64)
        return bool(np.array_equal(np.take(self._codes, at), codes))

    def held_each(self, codes: np.ndarray, bounds: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Per ``k``, whether row ``rows[k]`` holds the word ``codes[bounds[k]:bounds[k +
        1]]`` (words tile ``codes``, none empty; every row valid): :meth:`holds` word by
        word."""
        lengths = np.diff(bounds)
        held = np.take(self._code_len, rows) == lengths
        at = np.repeat(np.take(self._code_first, rows) - bounds[:-1], lengths)
        at += np.arange(len(codes), dtype=np.int64)
        np.minimum(at, len(self._codes) - 1, out=at)  # (a row shorter than its word: no match)
        same = np.take(self._codes, at) == codes
        return held & np.logical_and.reduceat(same, bounds[:-1]) if len(same) else held

    def share(self, since: int = 0) -> RowsShare:
        """Rows ``since`` on (a row count this store had), as plain arrays for another
        copy of the model (:meth:`take`; a child process solving a document's words
        ahead of its encode)."""
        with self.lock:
            size = self.size
            first, count = self._first[since:size], self._count[since:size]
            low = int(first.min()) if size > since else 0
            high = int((first + count).max()) if size > since else 0
            words = self._keyed(since, size)
            # (int32 where int64 is only room: shares are pickled to another process, a
            # 10 MB document's were 49 MB)
            i32 = np.int32
            return RowsShare(words.codes.copy(), words.bounds.astype(i32),
                             (first - low).astype(i32), count.astype(i32),
                             self._limit[since:size].copy(), self._word_max[since:size].copy(),
                             self._piece_len[low:high].astype(i32),
                             self._piece_id[low:high].astype(i32), words.keys.copy(),
                             same_at=self._same_at[since:size].copy())

    def take(self, share: RowsShare, limit: int) -> int:
        """Append the rows of ``share`` whose words are not here yet, unless that would
        reach ``limit`` rows; returns how many were added."""
        with self.lock:
            # a word whose key is held is here (or collides with one that is: it is then
            # solved the string way when met, as any collided word)
            words = share.keyed()
            keep = self._keys.get(words.keys) == MISSING
            n = int(keep.sum())
            if not n or self.size + n >= limit:
                return 0
            if share.expected is not None:
                rows, pieces, codes = share.expected
                self.reserve(min(rows, limit), pieces, codes)
            if n != len(keep):
                words = words.take(np.flatnonzero(keep))
            same_at = share.same_at
            if same_at is not None and len(same_at) != len(keep):  # (not this share's)
                same_at = None
            self.append(words, share.first[keep], share.count[keep], share.limit[keep],
                        share.word_max[keep], share.piece_len, share.piece_id,
                        None if same_at is None else same_at[keep])
            return n

    def table(self) -> WordTable:
        """Views of the rows so far (valid after later appends: those copy, never write
        over a row)."""
        size, pieces = self.size, self._pieces
        return WordTable(self._first[:size], self._count[:size], self._limit[:size],
                         self._word_max[:size], self._piece_len[:pieces],
                         self._piece_id[:pieces], self.generation, self._same_at[:size])
