"""Tokens of a long text stored compactly: three int arrays instead of a Token per token.

A 10 MB document has ~2.5 million tokens; as :class:`~explorer.engine.encoding.Token` objects
(plus their ``int`` offsets and the list holding them) that is ~150 bytes each, half a
gigabyte. :class:`CompactTokens` keeps ``ids``, ``starts`` and ``ends`` in ``array('i')`` (12
bytes per token) and rebuilds a Token only when one is looked at (:class:`TokenTable`).

Rebuilding is exact: a token is stored as ids + span only when it equals its vocabulary entry
(:meth:`~explorer.engine.tokenizer.Tokenizer.id_to_token`) with that span; any other token (an
``<unk>`` whose piece is the text it covers, a decoder that changes the first token's bytes,
...) is kept whole in ``irregular`` under its index. Engines that know their tokens are regular
build the arrays directly (:meth:`Tokenizer.encode_compact`), without any Token object.

A tokenizer's :attr:`~explorer.engine.tokenizer.Tokenizer.text_piece_ids` are rebuilt with
the text they cover as their piece (:meth:`TokenTable.make` is given the text): a
SentencePiece ``<unk>`` run's piece is the text it covers, one every ~20 characters in a small
English model's code or multilingual text, kept as arrays where its normalized text is the
text itself (irregular otherwise).

The arrays hold every token's span, irregular ones too: an irregular Token's own ``start`` and
``end`` are not read (:func:`placed` gives it the arrays' span when it is looked at). So
tokens moved to other offsets (a window's tokens joined to a document, cut into segments,
spliced by an edit) keep their irregular Tokens as they are, and equal irregular tokens may be
one shared Token: a small English model on code or multilingual text has an ``<unk>`` run
every ~20 characters, and a new Token for each at every move was over half the encode.
"""

from __future__ import annotations

import threading
import weakref
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from explorer.engine.encoding import Token

if TYPE_CHECKING:
    from explorer.engine.tokenizer import Tokenizer

_Key = tuple[str, bytes, bool, bool, float | None, int | None]


def int_array(values: Iterable[int] = ()) -> array:
    """An ``array('i')`` of ``values`` (code-point offsets and ids fit in 32 bits)."""
    return array("i", values)


def shifted_array(values: array, shift: int) -> array:
    """An ``array('i')`` of ``values`` with ``shift`` added to each (one numpy pass)."""
    out = array("i")
    if values:
        moved = np.frombuffer(values, np.int32) + np.int32(shift)
        out.frombytes(moved.tobytes())
    return out


@dataclass(frozen=True, slots=True)
class ResumePoints:
    """Offsets in a text where its tokenizer's state is one number, and that number.

    A SentencePiece Unigram encode is one Viterbi pass whose float32 path score decides near
    ties; at a word start (no piece crosses it) the whole state is that score. An encode
    started at ``offsets[k]`` with ``states[k]`` (``encode_compact_resumed``) decides
    everything from there on as the encode that produced these points did.
    """

    offsets: array
    states: array

    def before(self, limit: int, after: int) -> tuple[int, float] | None:
        """The last point at an offset in ``(after, limit]``, else the first one past
        ``limit``; None when there is none past ``after``."""
        offsets = self.offsets
        k = bisect_right(offsets, limit) - 1
        if k >= 0 and offsets[k] > after:
            return offsets[k], self.states[k]
        k += 1
        if k < len(offsets) and offsets[k] > after:
            return offsets[k], self.states[k]
        return None

    def shifted(self, shift: int) -> ResumePoints:
        """The same points with ``shift`` added to every offset."""
        return ResumePoints(shifted_array(self.offsets, shift), self.states)


@dataclass(slots=True)
class CompactTokens:
    """Tokens of one text as parallel arrays; ``irregular`` holds the tokens that are not
    their vocabulary entry plus a span (index -> Token; its span is the arrays')."""

    ids: array = field(default_factory=int_array)
    starts: array = field(default_factory=int_array)
    ends: array = field(default_factory=int_array)
    irregular: dict[int, Token] = field(default_factory=dict)
    """Index -> the Token, for tokens that are not their vocabulary entry (its span is the
    arrays', not its own: :func:`placed`)."""
    unknown_ids: frozenset[int] = frozenset()
    """Ids whose vocabulary entry is marked ``unknown`` and that occur as regular tokens (to
    count unknown tokens without rebuilding them; irregular tokens carry their own flag)."""
    resume: ResumePoints | None = None
    """Where an encode of a longer text holding this one can go on exactly (see
    :meth:`~explorer.engine.tokenizer.Tokenizer.encode_compact_resumed`); None: nowhere."""

    def __len__(self) -> int:
        return len(self.ids)


def placed(tok: Token, start: int, end: int) -> Token:
    """The irregular token ``tok`` at the span ``[start, end)`` its arrays give it (see the
    module's docstring: its own span is not read)."""
    return tok if tok.start == start and tok.end == end else replace(tok, start=start, end=end)


def tokens_of(toks: CompactTokens, table: TokenTable, text: str) -> list[Token]:
    """Every token of ``toks`` (the tokens of ``text``) as a Token (irregular ones placed at
    their arrays' spans)."""
    irregular, make = toks.irregular, table.make
    return [placed(irregular[i], s, e) if i in irregular else make(tid, s, e, text)
            for i, (tid, s, e) in enumerate(zip(toks.ids, toks.starts, toks.ends, strict=True))]


def grown(values: np.ndarray, used: int, need: int) -> np.ndarray:
    """``values`` with room for ``need`` items, its first ``used`` kept (capacity doubles;
    the room past ``used`` is not cleared)."""
    if need <= len(values):
        return values
    bigger = np.empty(max(need, 2 * len(values)), values.dtype)
    bigger[:used] = values[:used]
    return bigger


def int32_array(values: np.ndarray) -> array:
    """``values`` as an ``array('i')``, through its bytes (no Python int per entry)."""
    out = int_array()
    out.frombytes(values.astype(np.int32).tobytes())
    return out


def float_array(values: np.ndarray) -> array:
    """``values`` as an ``array('d')``."""
    return array("d", values.astype(np.float64).tobytes())


def joined_at(head: CompactTokens, at: int, tail: CompactTokens, shift: int) -> CompactTokens:
    """One text's tokens from two encodes of it: ``head``'s before offset ``at``, then
    ``tail``'s from there on. ``tail`` encoded the text from offset ``shift`` (its offsets
    are relative to it), resumed at ``at``, one of ``head``'s resume points; no token of
    either crosses ``at``.

    ``head`` is not used again: its arrays are cut at ``at`` and extended in place (a
    window grown step by step copied all it had at every step: 0.5 s of a 9 MB one)."""
    n = bisect_left(head.starts, at)
    m = bisect_left(tail.starts, at - shift)
    irregular = head.irregular
    for i in [i for i in irregular if i >= n]:
        del irregular[i]
    irregular.update((n + j - m, tok) for j, tok in tail.irregular.items() if j >= m)
    resume = None
    if head.resume is not None and tail.resume is not None:
        resume = head.resume
        k = bisect_left(resume.offsets, at)
        q = bisect_left(tail.resume.offsets, at - shift)
        del resume.offsets[k:], resume.states[k:]
        resume.offsets.extend(shifted_array(tail.resume.offsets[q:], shift))
        resume.states.extend(tail.resume.states[q:])
    del head.ids[n:], head.starts[n:], head.ends[n:]
    head.ids.extend(tail.ids[m:])
    head.starts.extend(shifted_array(tail.starts[m:], shift))
    head.ends.extend(shifted_array(tail.ends[m:], shift))
    head.unknown_ids = head.unknown_ids | tail.unknown_ids
    head.resume = resume
    return head


def clean_cut(toks: CompactTokens, least: int) -> int | None:
    """The first offset from ``least`` on where one of ``toks`` starts and none crosses
    (a line start may not be one: tiktoken's ``"\n"`` + spaces runs across it; nor a token
    start: the byte tokens of one character share its span); None when there is none."""
    starts, ends = toks.starts, toks.ends
    for k in range(bisect_left(starts, least), len(starts)):
        if not k or ends[k - 1] <= starts[k]:
            return int(starts[k])
    return None


def tokens_before(toks: CompactTokens, at: int) -> CompactTokens:
    """``toks``' tokens that start before offset ``at`` (no token crosses it), offsets as
    they are (no resume points: :func:`tokens_from`'s other half, for texts without)."""
    n = bisect_left(toks.starts, at)
    return CompactTokens(toks.ids[:n], toks.starts[:n], toks.ends[:n],
                         {i: tok for i, tok in toks.irregular.items() if i < n},
                         toks.unknown_ids)


def tokens_from(toks: CompactTokens, at: int) -> CompactTokens:
    """``toks``' tokens that start at or after offset ``at`` (no token crosses it), with
    offsets (and resume points) counted from ``at``."""
    n = bisect_left(toks.starts, at)
    irregular = {i - n: tok for i, tok in toks.irregular.items() if i >= n}
    resume = None
    if toks.resume is not None:
        k = bisect_left(toks.resume.offsets, at)
        resume = ResumePoints(shifted_array(toks.resume.offsets[k:], -at),
                              toks.resume.states[k:])
    return CompactTokens(toks.ids[n:], shifted_array(toks.starts[n:], -at),
                         shifted_array(toks.ends[n:], -at), irregular, toks.unknown_ids, resume)


class TokenTable:
    """Vocabulary entries of one tokenizer, to rebuild tokens from ``(id, start, end)``.

    Thread-safe for the pattern used (dict reads and idempotent inserts under the GIL).
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._tokenizer = tokenizer
        self._text_pieces = tokenizer.text_piece_ids
        self._protos: dict[int, Token | None] = {}
        self._keys: dict[int, _Key | None] = {}
        self._flags: dict[int, tuple[bool, bool]] = {}

    def proto(self, token_id: int) -> Token | None:
        """The vocabulary entry ``token_id`` (empty span), None when the tokenizer has none."""
        try:
            return self._protos[token_id]
        except KeyError:
            pass
        try:
            tok: Token | None = self._tokenizer.compact_entry(token_id)
        except (KeyError, IndexError, ValueError):
            tok = None
        self._protos[token_id] = tok
        return tok

    def key(self, token_id: int) -> _Key | None:
        """Everything of entry ``token_id`` except its span (None when it has no entry)."""
        try:
            return self._keys[token_id]
        except KeyError:
            pass
        p = self.proto(token_id)
        k = None if p is None else _key(p)
        self._keys[token_id] = k
        return k

    def known_flags(self) -> Callable[[int], tuple[bool, bool] | None]:
        """A lookup of the flags :meth:`flags` has found so far (None: not looked up yet);
        for hot loops, which call :meth:`flags` on a miss."""
        return self._flags.get

    def flags(self, token_id: int) -> tuple[bool, bool]:
        """``(special, unknown)`` of a regular token with id ``token_id``."""
        f = self._flags.get(token_id)
        if f is None:
            p = self.proto(token_id)
            f = self._flags[token_id] = (False, False) if p is None else (p.special, p.unknown)
        return f

    def make(self, token_id: int, start: int, end: int, text: str, origin: int = 0) -> Token:
        """The regular token ``token_id`` over ``[start, end)`` of the tokens of ``text``
        (their offsets start at ``origin`` in it): the text it covers is the piece of a
        :attr:`~explorer.engine.tokenizer.Tokenizer.text_piece_ids` id."""
        p = self.proto(token_id)
        if p is None:
            raise KeyError(f"token id {token_id} has no vocabulary entry")
        if token_id in self._text_pieces:
            return replace(p, piece=text[start - origin:end - origin], start=start, end=end)
        return replace(p, start=start, end=end)

    def compact(self, tokens: Sequence[Token]) -> CompactTokens:
        """``tokens`` as arrays; those that are not regular are kept whole."""
        keys, text_pieces = self._keys, self._text_pieces  # (those kept whole: the text
        key_of = self.key  # they cover is not known here)
        irregular: dict[int, Token] = {}
        unknown: set[int] = set()
        for i, t in enumerate(tokens):
            tid = t.id
            k = keys.get(tid)
            if k is None:
                k = key_of(tid)
            if k is None or tid in text_pieces or (t.piece, t.token_bytes, t.special,
                                                   t.unknown, t.score, t.rank) != k:
                irregular[i] = t
            elif t.unknown:
                unknown.add(tid)
        return CompactTokens(
            int_array([t.id for t in tokens]),
            int_array([t.start for t in tokens]),
            int_array([t.end for t in tokens]),
            irregular,
            frozenset(unknown),
        )


def _key(t: Token) -> _Key:
    return (t.piece, t.token_bytes, t.special, t.unknown, t.score, t.rank)


_TABLES: weakref.WeakKeyDictionary[Tokenizer, TokenTable] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def token_table(tokenizer: Tokenizer) -> TokenTable:
    """The (shared) :class:`TokenTable` of ``tokenizer``."""
    table = _TABLES.get(tokenizer)
    if table is None:
        with _LOCK:
            table = _TABLES.get(tokenizer)
            if table is None:
                table = _TABLES[tokenizer] = TokenTable(tokenizer)
    return table
