"""A document's tokens as arrays, fast, for byte-level tokenizer.json pipelines.

:meth:`PipelineTokenizer.encode_compact <explorer.engine.hf.pipeline.PipelineTokenizer.
encode_compact>` builds an ``(id, piece, start, end, special)`` tuple per token, decodes
every token's bytes and compares each token with its vocabulary entry: ~2.8 s for 1 MB of
English with a byte-level BPE, against ~0.4 s on the ``.tiktoken`` path. For the common
byte-level pipelines (GPT-2, RoBERTa, Llama 3, Qwen: no normalizer, a pre-tokenizer that only
cuts, a decoder that reads each token alone, a post-processor that keeps offsets) all of that
is a function of the pre-token's *text*:

- offsets: without a normalizer a character's span is itself, so a token's span is its
  character range in the pre-token shifted by the pre-token's start;
- regularity: a token between two others decodes to the same bytes wherever it is, so
  whether it equals its vocabulary entry is a property of ``(id, piece)``; only the first
  and the last token of the text decode apart (:class:`~explorer.engine.hf.token_bytes.
  TokenBytes`) and are checked again at the end.

So each distinct pre-token is laid out once (:class:`Word`: ids, character ranges, the
indices of the tokens that are not their entry) and a text is its pre-tokens (one ``findall``
of the pre-tokenizer's regex, :meth:`~explorer.engine.hf.byte_level_memo.ByteLevelMemo.words`)
looked up and copied into arrays. The result is the same as the general path's, token for
token (tested on every byte-level file we have, with added tokens and the first/last edge
cases).
"""

from __future__ import annotations

import threading
from array import array
from dataclasses import dataclass
from itertools import accumulate, compress, repeat
from operator import is_
from typing import TYPE_CHECKING

import numpy as np

from explorer.engine.compact import CompactTokens, grown, int_array, token_table
from explorer.engine.encoding import Token
from explorer.engine.hf.token_bytes import make_token

if TYPE_CHECKING:
    from explorer.engine.hf.pipeline import PipelineTokenizer

WORDS_LIMIT = 200_000
"""Distinct pre-tokens remembered (then the memo starts again)."""

Raw = tuple[int, str, int, int, bool]


@dataclass(frozen=True, slots=True)
class Word:
    """One pre-token's tokens: ids, character ranges within it, and the tokens (by index)
    that are not their vocabulary entry when between two other tokens."""

    ids: tuple[int, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    odd: tuple[tuple[int, str], ...]
    """``(index, piece)`` of each token that is kept as a Token object."""
    first_piece: str
    last_piece: str


class _NotLaidOutError(Exception):
    """A pre-token this path does not lay out."""


class _Rows:
    """The pre-tokens laid out so far, as rows of flat arrays (a text's tokens are then
    gathered by numpy, not copied tuple by tuple)."""

    __slots__ = ("count", "ends", "first", "ids", "lock", "odd", "row_of", "starts", "used",
                 "words")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        """Held while a row is added (a tokenizer is shared between threads); a row is
        looked up without it: it is in ``row_of`` only once its arrays are written."""
        self.row_of: dict[str, int] = {}
        """pre-token -> its row (-1: not laid out, take the general path)"""
        self.words: list[Word] = []
        self.first = np.zeros(1024, np.int64)
        self.count = np.zeros(1024, np.int64)
        self.odd = np.zeros(1024, bool)
        self.ids = np.zeros(4096, np.int32)
        self.starts = np.zeros(4096, np.int32)
        self.ends = np.zeros(4096, np.int32)
        self.used = 0

    def add(self, text: str, word: Word | None) -> int:
        """Keep ``word``, the layout of ``text`` (None: not laid out): its row (-1)."""
        with self.lock:
            row = self.row_of.get(text)
            if row is None:
                row = self._add(text, word)
            return row

    def _add(self, text: str, word: Word | None) -> int:
        if word is None:
            self.row_of[text] = -1
            return -1
        row, used, n = len(self.words), self.used, len(word.ids)
        self.first = grown(self.first, row, row + 1)
        self.count = grown(self.count, row, row + 1)
        self.odd = grown(self.odd, row, row + 1)
        for name, values in (("ids", word.ids), ("starts", word.starts), ("ends", word.ends)):
            bigger = grown(getattr(self, name), used, used + n)
            bigger[used:used + n] = values
            setattr(self, name, bigger)
        self.first[row], self.count[row], self.odd[row] = used, n, bool(word.odd)
        self.used = used + n
        self.words.append(word)
        self.row_of[text] = row
        return row


class ByteLevelCompact:
    """:meth:`encode` is ``tokenizer.encode_compact`` for a pipeline that :func:`fits`."""

    def __init__(self, tokenizer: PipelineTokenizer) -> None:
        self._tok = tokenizer
        self._rows = _Rows()
        self._regular: dict[tuple[int, str, bool], bool] = {}

    @staticmethod
    def fits(tokenizer: PipelineTokenizer) -> bool:
        """True when the tokenizer's document encode can take this path."""
        memo = tokenizer._byte_level
        post = tokenizer.c.post_processor
        return (tokenizer.c.normalizer is None and memo is not None and memo.pure_cut
                and (post is None or post.keeps_offsets())
                and tokenizer._token_bytes.context_free())

    def __reduce__(self) -> tuple[type[ByteLevelCompact], tuple[PipelineTokenizer]]:
        """Pickle without the memos (process pools)."""
        return (type(self), (self._tok,))

    def clear(self) -> None:
        """Forget every remembered pre-token."""
        self._rows = _Rows()

    # -- per token ------------------------------------------------------------------------

    def _is_regular(self, tid: int, piece: str, special: bool, chunk: bytes | None = None
                    ) -> bool:
        """Is the token equal to its vocabulary entry (but its span)? ``chunk``: its decoded
        bytes when not a middle token's."""
        middle = chunk is None
        if middle:
            known = self._regular.get((tid, piece, special))
            if known is not None:
                return known
        tok = self._tok
        shown = tok._id_to_piece.get(tid, piece)
        if chunk is None:
            chunk = tok._token_bytes.middle(shown)
        entry = token_table(tok).key(tid)
        regular = entry is not None and entry == (piece, chunk, special, tid == tok._unk_id,
                                                  self._score(tid, special), None)
        if middle and len(self._regular) < WORDS_LIMIT:
            self._regular[(tid, piece, special)] = regular
        return regular

    def _token(self, tid: int, piece: str, start: int, end: int, special: bool,
               chunk: bytes | None = None) -> Token:
        tok = self._tok
        if chunk is None:
            chunk = tok._token_bytes.middle(tok._id_to_piece.get(tid, piece))
        return make_token(tid, piece, chunk, start, end, special, tid == tok._unk_id,
                          self._score(tid, special))

    def _score(self, tid: int, special: bool) -> float | None:
        """The score a token of ``tid`` carries (as the pipeline's tokens do)."""
        scores = self._tok._scores
        return scores[tid] if scores is not None and not special and tid < len(scores) else None

    # -- per pre-token --------------------------------------------------------------------

    def _word(self, text: str) -> Word | None:
        """Lay out one pre-token (None: a token with no bytes; take the general path);
        :meth:`_lay` keeps it."""
        return self._laid_out(self._tok._byte_level.layout(text))  # type: ignore[union-attr]

    def _laid_out(self, layout: list[tuple[int, str, int, int]] | None) -> Word | None:
        """A pre-token's :class:`Word` from its ``(id, piece, start, end)`` tokens (None:
        none)."""
        if not layout:
            return None
        odd = tuple((k, piece) for k, (tid, piece, _cs, _ce) in enumerate(layout)
                    if not self._is_regular(tid, piece, False))
        return Word(tuple(t[0] for t in layout), tuple(t[2] for t in layout),
                    tuple(t[3] for t in layout), odd, layout[0][1], layout[-1][1])

    # -- a text ---------------------------------------------------------------------------

    def encode(self, text: str) -> CompactTokens | None:
        """The tokens of ``text``, equal to the general path's ``encode_compact``; None when
        a pre-token makes a token with no bytes (no model here does): take that path."""
        try:
            return self._encode(text)
        except _NotLaidOutError:
            return None

    def _encode(self, text: str) -> CompactTokens:
        tok = self._tok
        ids, starts, ends = int_array(), int_array(), int_array()
        odd: list[tuple[int, int, str, bool]] = []  # (index, id, piece, special)
        edges: list[tuple[int, str, bool]] = []  # first and last token: (id, piece, special)
        for a, b, added in tok._raw_matcher.split(text, "all"):
            if added is not None:
                self._single(ids, starts, ends, odd, edges, (added.id, text[a:b], a, b, True))
                continue
            segment = text[a:b]
            for na, nb, nadded in tok._norm_matcher.split(segment, "all"):
                if nadded is not None:
                    self._single(ids, starts, ends, odd, edges,
                                 (nadded.id, segment[na:nb], a + na, a + nb, True))
                else:
                    self._part(segment[na:nb], a + na, ids, starts, ends, odd, edges)
        return self._finish(ids, starts, ends, odd, edges)

    def _single(self, ids: array, starts: array, ends: array,
                odd: list[tuple[int, int, str, bool]], edges: list[tuple[int, str, bool]],
                raw: Raw) -> None:
        """One added token."""
        tid, piece, s, e, special = raw
        if not self._is_regular(tid, piece, special):
            odd.append((len(ids), tid, piece, special))
        if not ids:
            edges.append((tid, piece, special))
        ids.append(tid)
        starts.append(s)
        ends.append(e)
        self._mark_last(edges, (tid, piece, special))

    def _part(self, part: str, base: int, ids: array, starts: array, ends: array,
              odd: list[tuple[int, int, str, bool]],
              edges: list[tuple[int, str, bool]]) -> None:
        """The tokens of a stretch of text between added tokens: its pre-tokens' words
        looked up (laid out when new) and copied into the arrays by C-level passes."""
        memo = self._tok._byte_level
        assert memo is not None
        words = memo.words(part)
        if words is None:
            ranges = memo.cut_ranges(part) or []
            words = [part[x:y] for x, y in ranges]
            offsets = np.array([base + x for x, _ in ranges], np.int64)
        else:
            offsets = np.fromiter(accumulate(map(len, words), initial=base), np.int64,
                                  len(words) + 1)[:-1]
        self._lay(words, offsets, ids, starts, ends, odd, edges)

    def _lay(self, words: list[str], offsets: np.ndarray, ids: array, starts: array,
             ends: array, odd: list[tuple[int, int, str, bool]],
             edges: list[tuple[int, str, bool]]) -> None:
        """Pre-tokens ``words`` at document offsets ``offsets``: looked up (laid out when
        new) and copied into the arrays by C-level passes."""
        if not words:
            return
        if len(self._rows.row_of) >= WORDS_LIMIT:  # (a full memo starts again, between
            self._rows = _Rows()  # texts: a text's rows are all in one memo)
        rows = self._rows
        get = rows.row_of.get
        found = list(map(get, words))
        if None in found:
            for i in compress(range(len(found)), map(is_, found, repeat(None))):
                row = get(words[i])
                if row is None:  # (laid out now, into this text's memo)
                    row = rows.add(words[i], self._word(words[i]))
                found[i] = row
        if -1 in found:  # a pre-token with a token of no bytes: the general path
            raise _NotLaidOutError
        at_rows = np.fromiter(found, np.int64, len(found))
        counts = rows.count[at_rows]
        total = int(counts.sum())
        begin = np.cumsum(counts) - counts
        first_index = len(ids)
        if not ids:
            first = rows.words[found[0]]
            edges.append((first.ids[0], first.first_piece, False))
        at = np.repeat(rows.first[at_rows] - begin, counts)
        at += np.arange(total)
        shift = np.repeat(offsets, counts)
        ids.frombytes(rows.ids[at].tobytes())
        starts.frombytes((rows.starts[at] + shift).astype(np.int32).tobytes())
        ends.frombytes((rows.ends[at] + shift).astype(np.int32).tobytes())
        with_odd = np.flatnonzero(rows.odd[at_rows])
        if with_odd.size:
            where = (begin[with_odd] + first_index).tolist()
            for i, base in zip(with_odd.tolist(), where, strict=True):
                w = rows.words[found[i]]
                odd.extend((base + k, w.ids[k], piece, False) for k, piece in w.odd)
        last = rows.words[found[-1]]
        self._mark_last(edges, (last.ids[-1], last.last_piece, False))

    @staticmethod
    def _mark_last(edges: list[tuple[int, str, bool]], last: tuple[int, str, bool]) -> None:
        """``edges`` holds the text's first token, then its last so far: ``last`` now."""
        if len(edges) > 1:
            edges.pop()
        edges.append(last)

    def _finish(self, ids: array, starts: array, ends: array,
                odd: list[tuple[int, int, str, bool]],
                edges: list[tuple[int, str, bool]]) -> CompactTokens:
        """The irregular tokens (the odd ones, the first and last checked as such) and the
        unknown ids."""
        tok = self._tok
        n = len(ids)
        irregular: dict[int, Token] = {}
        for i, tid, piece, special in odd:
            irregular[i] = self._token(tid, piece, starts[i], ends[i], special)
        if n:
            first, last = edges[0], edges[-1]
            pieces = [tok._id_to_piece.get(first[0], first[1])]
            if n > 1:
                pieces.append(tok._id_to_piece.get(last[0], last[1]))
            chunks = tok._token_bytes.decode(pieces)
            for i, (tid, piece, special), chunk in ((0, first, chunks[0]),
                                                     (n - 1, last, chunks[-1])):
                irregular.pop(i, None)
                if not self._is_regular(tid, piece, special, chunk):
                    irregular[i] = self._token(tid, piece, starts[i], ends[i], special, chunk)
        unknown: set[int] = set()
        unk = tok._unk_id
        if unk is not None and unk in ids and any(
                tid == unk and i not in irregular for i, tid in enumerate(ids)):
            unknown.add(unk)
        return CompactTokens(ids, starts, ends, irregular, frozenset(unknown))
