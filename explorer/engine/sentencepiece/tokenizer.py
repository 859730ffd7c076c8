"""The SentencePiece tokenizer: normalizer + Unigram or BPE model + sentencepiece's post-rules.

:class:`SentencePieceTokenizer` implements :class:`explorer.engine.tokenizer.Tokenizer` for any
model with ``encode(normalized) -> [(start, end, id)]`` (:class:`UnigramModel`,
:class:`SentencePieceBPEModel`, :class:`SimpleLookupModel`) and any normalizer returning
``Normalized`` (usually :class:`SentencePieceNormalizer`). It adds what
``sentencepiece_processor.cc`` does after the model: consecutive ``<unk>`` pieces merge into
one, unknown pieces become ``<0xNN>`` byte pieces when ``byte_fallback`` is on, offsets go
back to the original text through ``norm_to_orig``, and decoding drops the dummy-prefix space
and renders ``<unk>`` as ``unk_surface``.

Special tokens: sentencepiece itself never recognises control pieces (``<s>``, ``[INST]``) in
text. With ``allowed_special`` they are split out first and every text segment between them is
normalized on its own (llama.cpp's SPM behaviour: a dummy prefix after each special); pass
``allowed_special=()`` for plain sentencepiece output. Token ``token_bytes`` are the piece's
own bytes with ``▁`` as a space (the first token keeps its dummy-prefix space; ``decode``
strips it).
"""

from __future__ import annotations

import copy
import random
from array import array
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from itertools import compress
from typing import Literal, Protocol

import numpy as np

from explorer.engine.compact import (
    CompactTokens,
    ResumePoints,
    TokenTable,
    int_array,
    token_table,
)
from explorer.engine.encoding import Encoding, Token
from explorer.engine.hf.post_processors import AddSpecialPost
from explorer.engine.normalizers.base import Normalized, Normalizer
from explorer.engine.sentencepiece.decoding import (
    decode_pieces,
    decode_utf8_like_sentencepiece,
    specials_pattern,
    split_specials,
)
from explorer.engine.sentencepiece.piece_bytes import PieceBytes
from explorer.engine.sentencepiece.pieces import PieceType, byte_piece, piece_byte
from explorer.engine.soft_cuts import end_after
from explorer.engine.tokenizer import (
    ModelType,
    PipelineStages,
    PreToken,
    Tokenizer,
    TokenizerInfo,
)
from explorer.engine.unigram.lattice import Lattice
from explorer.engine.unigram.model import BATCH_TEXT_CHARS, UnigramModel
from explorer.engine.unigram.word_keys import codes_of

Span = tuple[int, int, int]


class SentencePieceModel(Protocol):
    """What the tokenizer needs from a model (Unigram or SentencePiece BPE)."""

    model_type: str
    pieces: list[str]
    scores: list[float]
    types: list[int]
    unk_id: int

    def encode(self, normalized: str) -> list[Span]: ...

    def encode_ids(self, normalized: str) -> list[int]: ...

    def segments(self, normalized: str) -> list[tuple[int, int]]: ...


def _same_spans(a: str, a_lo: np.ndarray, a_hi: np.ndarray, b: str, b_lo: np.ndarray,
                b_hi: np.ndarray) -> np.ndarray:
    """Per ``k``, whether ``a[a_lo[k]:a_hi[k]] == b[b_lo[k]:b_hi[k]]`` (spans not empty),
    by array passes over the spans' code points (of the parts of ``a`` and ``b`` they
    lie in: ``b`` may be a whole window, and this one part of it)."""
    sizes = a_hi - a_lo
    same = sizes == b_hi - b_lo
    at = np.flatnonzero(same)
    if not at.size:
        return same
    sizes = sizes[at]
    starts = np.cumsum(sizes) - sizes
    step = np.arange(int(sizes.sum())) - np.repeat(starts, sizes)
    a_at, b_at = a_lo[at], b_lo[at]
    a_from, b_from = int(a_at.min()), int(b_at.min())
    a_codes = codes_of(a[a_from:int(a_hi[at].max())])[np.repeat(a_at - a_from, sizes) + step]
    b_codes = codes_of(b[b_from:int(b_hi[at].max())])[np.repeat(b_at - b_from, sizes) + step]
    same[at] = np.logical_and.reduceat(a_codes == b_codes, starts)
    return same


UNKNOWN_RUNS_KEPT = 1 << 16
"""Distinct ``<unk>`` run texts whose shared Token a SentencePiece tokenizer keeps
(:meth:`SentencePieceTokenizer._unknown_run_tokens`; then it starts a new set)."""
SHARE_GROWTH = 0.8
"""The exponent of a word-solving copy's estimate of what it will have sent in all (the
text's length over what it solved so far, to this power, times what it sent). The 10 MB
English text's first quarter megabyte held a twentieth of its rows with the 32k model
(10k of 202k): scaled in proportion (38x) it sized the receiver's key table for 392k rows,
6 MB more than it needed; to the power 0.8, for 189k. The all-language UDHR text's first
share held 16k of 340k (a twenty-first, in a thirtieth of the text): the estimate (251k)
grows with the later shares."""


class SentencePieceTokenizer(Tokenizer):
    """A SentencePiece tokenizer over an in-memory model and normalizer."""

    def __init__(
        self,
        model: SentencePieceModel,
        normalizer: Normalizer,
        *,
        name: str = "sentencepiece",
        format: str = "sentencepiece",
        byte_fallback: bool = False,
        unk_surface: str = " \u2047 ",
        strip_decoded_prefix: bool = True,
        decode_remove_extra_whitespaces: bool = True,
        special_tokens: Mapping[str, int] | None = None,
        extra_info: Mapping[str, str] | None = None,
        post_processor: AddSpecialPost | None = None,
    ) -> None:
        """``special_tokens``: strings split out of the text (default: CONTROL and UNKNOWN pieces).

        ``strip_decoded_prefix``: decoding drops the first token's leading ``▁`` (sentencepiece
        does so when ``add_dummy_prefix`` or ``remove_extra_whitespaces`` is set);
        ``decode_remove_extra_whitespaces``: ... from every leading piece while output is empty.
        ``post_processor``: what ``encode(text, add_special_tokens=True)`` adds around the text
        (llama.cpp's BOS/EOS for a GGUF vocabulary); a plain ``.model`` file has none.
        """
        self.model = model
        self.normalizer = normalizer
        # text-only normalization (no alignment) where the normalizer offers it
        self._normalize_text = getattr(normalizer, "normalize_text", None)
        self.byte_fallback = byte_fallback
        self.unk_surface = unk_surface
        self.strip_decoded_prefix = strip_decoded_prefix
        self.decode_remove_extra_whitespaces = decode_remove_extra_whitespaces
        self._name, self._format = name, format
        self._extra = dict(extra_info or {})
        self.post_processor = post_processor
        if post_processor is not None:
            self._extra["post-processor"] = post_processor.describe()
        types = model.types
        self._piece_bytes = PieceBytes(model.pieces)
        self._byte_ids: dict[int, int] = {}
        odd = frozenset((PieceType.BYTE, PieceType.CONTROL))
        for i in compress(range(len(types)), map(odd.__contains__, types)):  # C-level scan
            if types[i] == PieceType.BYTE:
                byte = piece_byte(model.pieces[i])
                if byte is not None:
                    self._byte_ids.setdefault(byte, i)
                    self._piece_bytes[i] = bytes((byte,))
            else:
                self._piece_bytes[i] = b""
        self._piece_bytes[model.unk_id] = unk_surface.encode("utf-8")
        if special_tokens is None:
            marked = frozenset((PieceType.CONTROL, PieceType.UNKNOWN))
            which = list(map(marked.__contains__, types))  # (C-level passes: 250k pieces)
            special_tokens = dict(zip(compress(model.pieces, which),
                                      compress(range(len(which)), which), strict=True))
        self.special_tokens = dict(special_tokens)
        self._all_specials = specials_pattern(self.special_tokens)
        self._odd: np.ndarray | None = None  # see _odd_ids
        self._plain_bytes: tuple[list[int], bytes] | None = None  # see _byte_tokens
        self._unknown_runs: dict[str, Token] = {}  # see _unknown_run_tokens

    # -- Tokenizer interface --------------------------------------------------------------------
    @property
    def text_piece_ids(self) -> frozenset[int]:
        """``<unk>``: sentencepiece's piece for a run of unknown pieces is the text it covers
        (normalized; where the normalizer changed it, the run is kept whole)."""
        return frozenset((self.model.unk_id,))

    def with_post_processor(self, post: AddSpecialPost | None) -> SentencePieceTokenizer:
        """This tokenizer with ``post`` as its post-processor (a shallow copy: the model and
        normalizer are shared)."""
        other = copy.copy(self)
        other.post_processor = post
        other._extra = {k: v for k, v in self._extra.items() if k != "post-processor"}
        if post is not None:
            other._extra["post-processor"] = post.describe()
        return other

    def supports_post_processor(self) -> bool:
        """True for GGUF vocabularies (llama.cpp's BOS/EOS rule); plain ``.model`` files
        have no post-processor."""
        return self.post_processor is not None

    @property
    def info(self) -> TokenizerInfo:
        """Name, sizes and the sentencepiece settings."""
        extra = {"byte_fallback": str(self.byte_fallback), **self._extra}
        kinds: dict[str, ModelType] = {"unigram": "unigram", "bpe": "bpe"}
        model_type = kinds.get(self.model.model_type, "wordlevel")  # CHAR / WORD lookups
        return TokenizerInfo(
            name=self._name,
            format=self._format,
            model_type=model_type,
            vocab_size=len(self.model.pieces),
            special_tokens=dict(self.special_tokens),
            normalizer=getattr(self.normalizer, "name", "sentencepiece"),
            pre_tokenizer="whitespace as \u2581",
            decoder="sentencepiece",
            extra=extra,
        )

    def encode(
        self, text: str, *, allowed_special: Literal["all"] | Collection[str] = "all",
        add_special_tokens: bool = False,
    ) -> Encoding:
        """Encode ``text``; ids and pieces are sentencepiece's (see module docstring).

        ``add_special_tokens=True`` adds the :attr:`post_processor`'s tokens (special, with an
        empty ``(0, 0)`` span); without a post-processor it changes nothing.
        """
        tokens: list[Token] = []
        for start, end, special_id in self._segments(text, allowed_special):
            if special_id is not None:
                piece = self.model.pieces[special_id]
                tokens.append(Token(special_id, piece, b"", start, end, special=True))
                continue
            normalized = self.normalizer.normalize(text[start:end])
            spans = self.model.encode(normalized.text)
            tokens.extend(self._tokens(normalized, spans, start))
        post = self.post_processor
        if add_special_tokens and post is not None:
            post.process([], True)  # raises the post-processor's error, if any
            tokens = [*(Token(i, p, b"", 0, 0, special=True) for i, p in post.prefix), *tokens,
                      *(Token(i, p, b"", 0, 0, special=True) for i, p in post.suffix)]
        return Encoding(text, tokens)

    def encode_compact(self, text: str) -> CompactTokens:
        """:meth:`encode` as arrays, without Token objects where tokens are plain pieces
        (an ``<unk>`` run and a control piece are kept whole)."""
        return self._compact(text, None, resumable=False)

    def cache_shares(self, text: str, step: int,
                     floor: Callable[[], int] | None = None) -> Iterator[object]:
        """A Unigram model's words of ``text`` solved, ``step`` code points (to a line end,
        or in a long line a word start: :func:`~explorer.engine.soft_cuts.end_after`) at a
        time: the word rows each added (:meth:`UnigramModel.share_rows`). ``floor``: asked
        before each batch, the place before which words need not be solved (the batch then
        starts at the line after it)."""
        model = self.model
        if not isinstance(model, UnigramModel) or model.word_pattern is None:
            return
        pos = solved = 0
        while pos < len(text):
            least = floor() if floor is not None else 0
            if least > pos:
                pos = end_after(text, least)
                if pos >= len(text):
                    return
            end = end_after(text, pos + step)  # (a line end, or in a long line a word start)
            part = text[pos:end]
            solved += end - pos
            # what was solved so far, scaled to the text (the receiver makes room once); a
            # text's new words come ever fewer, so less than in proportion (SHARE_GROWTH)
            # (the text only: the words need no offsets)
            yield model.share_rows([self._normalized_text(part[a:b])
                                    for a, b, special in self._segments(part, "all")
                                    if special is None],
                                   scale=(len(text) / solved) ** SHARE_GROWTH)
            pos = end

    def prepare(self) -> None:
        """:meth:`Tokenizer.prepare`, then a Unigram model forgets the made-up words: it
        keeps words as rows of arrays grown by doubling, and the warm-up's ~1,300 rows put
        a 250k-piece model's rows for the 10 MB UDHR text over one more doubling (+10-15 MB
        at the end of its encode, in-process)."""
        super().prepare()
        if isinstance(self.model, UnigramModel):
            self.model.forget_words()

    def take_cache_share(self, share: object) -> None:
        """Take a Unigram model's word rows from another copy's :meth:`cache_shares`."""
        if isinstance(self.model, UnigramModel):
            self.model.take_rows(share)  # (it takes only its own kind of share)

    def encode_compact_resumed(
        self, text: str, resume: tuple[int, float] | None
    ) -> CompactTokens:
        """:meth:`encode_compact` of a window of a longer text, carrying sentencepiece's state.

        A Unigram model's tokens depend on the float32 path score of everything before them
        (near ties); ``resume=(offset, score)`` is a point of a previous window's
        ``resume`` (offset relative to ``text``) where that score is known exactly: from
        there on the tokens are the longer text's, and this result's ``resume`` points
        (every word start from there on) are exact in the longer text too. ``None``:
        ``text`` is where the longer text starts. Other models report no points.
        """
        model = self.model
        if not isinstance(model, UnigramModel) or model.word_pattern is None:
            return self.encode_compact(text)
        return self._compact(text, resume, resumable=True)

    def _compact(
        self, text: str, resume: tuple[int, float] | None, *, resumable: bool
    ) -> CompactTokens:
        """The body of :meth:`encode_compact` and :meth:`encode_compact_resumed`."""
        table = token_table(self)
        model = self.model
        out = CompactTokens()
        point_offsets, point_states = int_array(), array("d")
        known = resume is None  # is sentencepiece's state known from here on?
        lost = False  # the resume point was not found: no point of this window is exact
        for start, end, special_id in self._segments(text, "all"):
            if special_id is not None:
                piece = model.pieces[special_id]
                tok = Token(special_id, piece, b"", start, end, special=True)
                _extend(out, table.compact([tok]))
                continue
            normalized = self.normalizer.normalize(text[start:end])
            resumed = None
            if resumable and not lost and normalized.text:  # (nothing to decide: no loss)
                anchor: int | None = None
                if not known and resume is not None and resume[0] < end:
                    local = resume[0] - start
                    n2o = normalized.offset_array()
                    p = int(np.searchsorted(n2o, local))  # bisect_left
                    if local >= 0 and p < len(normalized.text) and n2o[p] == local:
                        anchor = p
                    else:
                        lost = True
                if known or anchor is not None:
                    assert isinstance(model, UnigramModel)
                    score = 0.0 if anchor is None else resume[1]  # type: ignore[index]
                    resumed = model.encode_from(normalized.text, anchor, score)
                    if resumed is None:
                        lost = True
                    else:
                        known = True
                        _add_points(point_offsets, point_states, resumed.word_starts,
                                    resumed.word_scores, normalized.offset_array(), start)
            if resumed is not None:
                lengths, ids = resumed.lengths, resumed.ids
            else:
                spans = model.encode(normalized.text)
                lengths = [b - a for a, b, _ in spans]
                ids = [x[2] for x in spans]
            self._append_pieces(out, normalized, lengths, ids, start, table, text)
        if resumable and known and not lost:
            out.resume = ResumePoints(point_offsets, point_states)
        return out

    def _append_pieces(self, out: CompactTokens, normalized: Normalized,
                       lengths: Sequence[int] | np.ndarray, ids: Sequence[int] | np.ndarray,
                       shift: int, table: TokenTable, text: str) -> None:
        """Append the model's pieces of one normalized part (of ``text`` from ``shift``)
        to ``out``: plain pieces as arrays, ``<unk>`` runs (merged, or byte fallback) as
        arrays where they can be, else through :meth:`_tokens`."""
        if not len(ids):
            return
        bounds = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=bounds[1:])
        mapped = (np.take(normalized.offset_array(), bounds) + shift).astype(np.int32)
        id_array = np.asarray(ids, np.int64)
        ids32 = id_array.astype(np.int32)
        odd_at = np.flatnonzero(np.take(self._odd_ids(), id_array))  # (np.take: see
        # the array normalizer)
        unk_id = self.model.unk_id
        if len(odd_at) and (ids32[odd_at] == self.model.unk_id).all():  # (no control piece)
            if not self.byte_fallback:
                self._append_unknown_runs(out, normalized, bounds, mapped, ids32, odd_at, table,
                                          text)
                return
            if self._append_all_bytes(out, normalized, bounds, mapped, ids32, odd_at, table):
                return
        odd = odd_at.tolist()
        k = 0
        for u in [*odd, len(ids32)]:  # plain pieces up to each odd one, as arrays
            if u > k:
                out.ids.frombytes(ids32[k:u].tobytes())
                out.starts.frombytes(mapped[k:u].tobytes())
                out.ends.frombytes(mapped[k + 1:u + 1].tobytes())
            if u == len(ids32):
                break
            if u >= k:  # a run of unknowns starts here (merged, or bytes), or a control piece
                v = u + 1
                if ids32[u] == unk_id:
                    while v < len(ids32) and ids32[v] == unk_id:
                        v += 1
                starts_n, ends_n = bounds[u:v].tolist(), bounds[u + 1:v + 1].tolist()
                spans = list(zip(starts_n, ends_n, ids32[u:v].tolist(), strict=True))
                _extend(out, table.compact(self._tokens(normalized, spans, shift)))
                k = v

    def _append_unknown_runs(self, out: CompactTokens, normalized: Normalized,
                             bounds: np.ndarray, mapped: np.ndarray, ids32: np.ndarray,
                             odd_at: np.ndarray, table: TokenTable, text: str) -> None:
        """:meth:`_append_pieces` when every odd piece is ``<unk>`` and there is no byte
        fallback (the common case): each run of them is one token, as sentencepiece merges
        them, whose piece is its normalized text. Where that is the text of ``text`` it
        covers (nearly always), the run is kept as arrays (its piece is rebuilt from the
        text, :attr:`text_piece_ids`); else as a Token, one shared by equal runs. Every
        token by array passes: a Token per run, made and moved with its window, was over
        half the document encode of a small English model on code (an ``<unk>`` every ~20
        characters)."""
        unk_id = self.model.unk_id
        is_unk = np.zeros(len(ids32) + 1, bool)
        is_unk[odd_at] = True
        keep = np.ones(len(ids32), bool)
        keep[1:] = ~(is_unk[1:-1] & is_unk[:-2])  # (a run's later pieces merge into its first)
        heads = np.flatnonzero(is_unk[:-1] & keep)
        tails = np.flatnonzero(is_unk[:-1] & ~is_unk[1:])
        ends = mapped[1:].copy()
        ends[heads] = mapped[tails + 1]
        base = len(out.ids)
        out.ids.frombytes(ids32[keep].tobytes())
        out.starts.frombytes(mapped[:-1][keep].tobytes())
        out.ends.frombytes(ends[keep].tobytes())
        out.unknown_ids = out.unknown_ids | {unk_id}  # (counted as regular tokens)
        lo, hi = bounds[heads], bounds[tails + 1]
        odd = np.flatnonzero(~_same_spans(normalized.text, lo, hi, text, mapped[heads],
                                          ends[heads]))
        if not odd.size:
            return
        norm = normalized.text
        pieces = list(map(norm.__getitem__, map(slice, lo[odd].tolist(), hi[odd].tolist())))
        at = ((np.cumsum(keep) - 1)[heads[odd]] + base).tolist()  # their places in `out`
        out.irregular.update(zip(at, self._unknown_run_tokens(pieces, table), strict=True))

    def _unknown_run_tokens(self, pieces: list[str], table: TokenTable) -> list[Token]:
        """The ``<unk>`` token of each run of unknown pieces (``pieces``: the normalized
        text each covers, sentencepiece's piece for it), one shared Token per distinct text
        (their spans are the arrays', :func:`~explorer.engine.compact.placed`). Kept for
        the next texts, up to :data:`UNKNOWN_RUNS_KEPT`."""
        runs = self._unknown_runs
        if len(runs) > UNKNOWN_RUNS_KEPT:
            runs = self._unknown_runs = {}  # (a new dict: another thread may read the old)
        unk_id = self.model.unk_id
        unk_bytes, unk_score = self._piece_bytes[unk_id], self.model.scores[unk_id]
        for piece in set(pieces).difference(runs):
            runs[piece] = Token(unk_id, piece, unk_bytes, 0, len(piece), unknown=True,
                                score=unk_score)
        return list(map(runs.__getitem__, pieces))

    def _append_all_bytes(self, out: CompactTokens, normalized: Normalized,
                          bounds: np.ndarray, mapped: np.ndarray, ids32: np.ndarray,
                          odd_at: np.ndarray, table: TokenTable) -> bool:
        """:meth:`_append_pieces` when every odd piece is an unknown (the caller checks)
        that falls back to plain byte tokens (the common case): all the part's tokens by
        array passes, each unknown piece repeated once per byte of its text, with its span.
        False (nothing appended) otherwise: then unknown runs are built as Tokens and
        compacted, ~40 µs a run (a multilingual text under a small vocabulary has one
        every ~20 characters)."""
        ids_of, plain = self._byte_tokens(table)
        raw, lengths = utf8_of_spans(normalized.text, bounds[odd_at], bounds[odd_at + 1])
        if not np.frombuffer(plain, np.uint8)[raw].all():
            return False
        byte_ids = np.asarray(ids_of, np.int32)[raw]
        if len(raw) == len(odd_at):  # (each unknown piece one byte: nothing to repeat)
            ids = ids32.copy()
            ids[odd_at] = byte_ids
            out.ids.frombytes(ids.tobytes())
            out.starts.frombytes(mapped[:-1].tobytes())
            out.ends.frombytes(mapped[1:].tobytes())
            return True
        counts = np.ones(len(ids32), np.int64)
        counts[odd_at] = lengths
        ids = np.repeat(ids32, counts)
        is_odd = np.zeros(len(ids32), bool)
        is_odd[odd_at] = True
        ids[np.repeat(is_odd, counts)] = byte_ids
        out.ids.frombytes(ids.tobytes())
        out.starts.frombytes(np.repeat(mapped[:-1], counts).tobytes())
        out.ends.frombytes(np.repeat(mapped[1:], counts).tobytes())
        return True

    def _byte_tokens(self, table: TokenTable) -> tuple[list[int], bytes]:
        """Per byte value: the id of its byte-fallback token, and 1 when that token is a
        plain vocabulary piece (kept as arrays), else 0."""
        if self._plain_bytes is None:
            unk_id = self.model.unk_id
            scores = self.model.scores
            ids, plain = [], bytearray(256)
            for byte in range(256):
                byte_id = self._byte_ids.get(byte, unk_id)
                token = Token(byte_id, byte_piece(byte), bytes((byte,)), 0, 1,
                              unknown=byte_id == unk_id, score=scores[byte_id])
                one = table.compact([token])
                plain[byte] = byte_id != unk_id and not one.irregular and not one.unknown_ids
                ids.append(byte_id)
            self._plain_bytes = (ids, bytes(plain))
        return self._plain_bytes

    def _odd_ids(self) -> np.ndarray:
        """Per id: True for ``<unk>`` and control pieces (kept as whole Tokens)."""
        odd = self._odd
        if odd is None:
            odd = np.array(self.model.types, np.int64) == PieceType.CONTROL  # (no loop per id)
            odd[self.model.unk_id] = True
            self._odd = odd
        return odd

    def encode_ids(self, text: str) -> list[int]:
        """Ids only, no special-token splitting: exactly ``SentencePieceProcessor.encode``."""
        normalized = self._normalized_text(text)
        if len(normalized) >= BATCH_TEXT_CHARS and isinstance(self.model, UnigramModel):
            return self._ids_many([normalized])[0]  # one batch call, pieces reused for unknowns
        # no (length, id) pairs unless unknowns need them
        return self._finish_ids(normalized, self.model.encode_ids(normalized))

    def encode_ids_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """:meth:`encode_ids` of each text: ``SentencePieceProcessor.encode(texts)``.

        Unigram models solve the batch's new words together (vectorized, see
        ``UnigramModel.encode_ids_many``): the fast way to encode a corpus or a large document
        line by line. Other models encode text by text.
        """
        if not isinstance(self.model, UnigramModel):
            return list(map(self.encode_ids, texts))
        return self._ids_many(list(map(self._normalized_text, texts)))

    def _ids_many(self, normalized: list[str]) -> list[list[int]]:
        """Ids of many normalized texts through ``UnigramModel.encode_many``."""
        assert isinstance(self.model, UnigramModel)
        many = self.model.encode_many(normalized)
        out = many.ids
        unk_id = self.model.unk_id
        for k in [k for k, ids in enumerate(out) if unk_id in ids]:
            # unknown merging; byte fallback needs the pieces' lengths
            lengths = many.lengths(k) if self.byte_fallback else None
            out[k] = self._finish_ids(normalized[k], out[k], lengths)
        return out

    def _normalized_text(self, text: str) -> str:
        normalize_text = self._normalize_text
        if normalize_text is not None:
            return normalize_text(text)
        return self.normalizer.normalize(text).text

    def _finish_ids(
        self, normalized: str, ids: list[int], lengths: Sequence[int] | np.ndarray | None = None
    ) -> list[int]:
        """The model's ids after sentencepiece's unknown merging and byte fallback.

        ``lengths``: the model's pieces' lengths in code points when the caller has them.
        """
        model = self.model
        unk_id = model.unk_id
        if unk_id not in ids:
            return ids
        if not self.byte_fallback:  # a run of unknowns is one <unk>
            return [i for i, prev in zip(ids, [-1, *ids], strict=False)
                    if i != unk_id or prev != unk_id]
        if lengths is None:
            lengths = [s[0] for s in model.segments(normalized)]
        starts = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=starts[1:])
        # byte fallback: each <unk> piece becomes its text's UTF-8 byte pieces
        byte_ids, out, last = self._byte_ids, [], 0
        k = ids.index(unk_id)
        while True:
            out += ids[last:k]
            piece = normalized[int(starts[k]) : int(starts[k + 1])]
            out.extend(byte_ids.get(b, unk_id) for b in _utf8(piece))
            last = k + 1
            try:
                k = ids.index(unk_id, last)
            except ValueError:
                break
        out += ids[last:]
        return out

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """Decoded bytes: controls vanish, ``<unk>`` is ``unk_surface``, byte pieces are raw."""
        return decode_pieces(
            ids,
            self.model.pieces,
            self.model.types,
            self._piece_bytes,
            strip_prefix=self.strip_decoded_prefix,
            remove_extra_whitespaces=self.decode_remove_extra_whitespaces,
        )

    def decode(self, ids: Sequence[int]) -> str:
        """Decoded text; each invalid byte becomes U+FFFD, as sentencepiece does."""
        return decode_utf8_like_sentencepiece(self.decode_bytes(ids))

    def id_to_token(self, token_id: int) -> Token:
        """Vocabulary entry ``token_id`` with an empty span."""
        kind = self.model.types[token_id]
        return Token(
            token_id,
            self.model.pieces[token_id],
            self._piece_bytes[token_id],
            0,
            0,
            special=kind == PieceType.CONTROL,
            unknown=token_id == self.model.unk_id,
            score=self.model.scores[token_id],
        )

    def piece_type(self, token_id: int) -> str:
        """The model's type of piece ``token_id``: ``normal``, ``byte``, ``control``, ..."""
        return PieceType(self.model.types[token_id]).name.lower().replace("_", "-")

    def stages(self, text: str) -> PipelineStages:
        """Normalized text with alignment, words as pre-tokens, tokens and decode."""
        normalized = self.normalizer.normalize(text)
        pre_tokens: list[PreToken] = []
        splitter = getattr(self.model, "word_pattern", None)
        n2o = normalized.norm_to_orig
        if splitter is not None:
            for m in splitter.finditer(normalized.text):
                pre_tokens.append(PreToken(m.group(), n2o[m.start()], n2o[m.end()]))
        elif normalized.text:
            pre_tokens.append(PreToken(normalized.text, n2o[0], n2o[-1]))
        encoding = self.encode(text)
        return PipelineStages(
            original=text,
            normalized=normalized.text,
            norm_to_orig=list(n2o),
            pre_tokens=pre_tokens,
            encoding=encoding,
            decoded=self.decode(encoding.ids),
        )

    def supports_lattice(self) -> bool:
        """True for Unigram models."""
        return isinstance(self.model, UnigramModel)

    # -- Unigram extras -------------------------------------------------------------------------

    def lattice(self, text: str) -> Lattice:
        """The Unigram lattice of normalized ``text``; ``orig_span(node)`` maps to ``text``."""
        if not isinstance(self.model, UnigramModel):
            raise TypeError("lattice() needs a Unigram model")
        normalized = self.normalizer.normalize(text)
        return self.model.lattice(normalized.text, normalized.norm_to_orig)

    def nbest(self, text: str, k: int) -> list[tuple[Encoding, float]]:
        """``k`` best encodings with their float32 scores (``NBestEncode``)."""
        if not isinstance(self.model, UnigramModel):
            raise TypeError("nbest() needs a Unigram model")
        normalized = self.normalizer.normalize(text)
        return [
            (Encoding(text, self._tokens(normalized, spans, 0)), score)
            for spans, score in self.model.nbest(normalized.text, k)
        ]

    def sample_encode(
        self, text: str, alpha: float = 1.0, rng: random.Random | None = None
    ) -> Encoding:
        """One segmentation sampled with ``P ∝ exp(alpha * score)`` (subword regularization)."""
        lattice = self.lattice(text)
        path = lattice.sample(alpha, rng)
        normalized = Normalized(lattice.sentence, lattice.norm_to_orig or [])
        spans = [(n.pos, n.end, n.id) for n in path]
        return Encoding(text, self._tokens(normalized, spans, 0))

    # -- helpers --------------------------------------------------------------------------------

    def _segments(
        self, text: str, allowed: Literal["all"] | Collection[str]
    ) -> list[tuple[int, int, int | None]]:
        if allowed == "all":
            pattern = self._all_specials
        else:
            pattern = specials_pattern([s for s in allowed if s in self.special_tokens])
        return split_specials(text, pattern, self.special_tokens)

    def _tokens(self, normalized: Normalized, spans: list[Span], shift: int) -> list[Token]:
        """Tokens for model spans: unknown merging, byte fallback, original offsets."""
        model = self.model
        pieces, scores, piece_bytes = model.pieces, model.scores, self._piece_bytes
        unk_id = model.unk_id
        n2o = normalized.norm_to_orig
        text = normalized.text
        tokens: list[Token] = []
        prev_unk = False
        for start, end, id_ in spans:
            o_start, o_end = n2o[start] + shift, n2o[end] + shift
            if id_ != unk_id:  # positional arguments: measurably faster for a hot path
                tokens.append(
                    Token(
                        id_,
                        pieces[id_],
                        piece_bytes[id_],
                        o_start,
                        o_end,
                        False,
                        False,
                        scores[id_],
                    )
                )
                prev_unk = False
                continue
            surface = text[start:end]
            if self.byte_fallback:
                for byte in _utf8(surface):
                    byte_id = self._byte_ids.get(byte, unk_id)
                    tokens.append(
                        Token(
                            byte_id,
                            byte_piece(byte),
                            bytes((byte,)),
                            o_start,
                            o_end,
                            unknown=byte_id == unk_id,
                            score=scores[byte_id],
                        )
                    )
            elif prev_unk:  # sentencepiece merges a run of unknowns into one piece
                last = tokens[-1]
                tokens[-1] = Token(
                    unk_id,
                    last.piece + surface,
                    last.token_bytes,
                    last.start,
                    o_end,
                    unknown=True,
                    score=last.score,
                )
            else:
                tokens.append(
                    Token(
                        unk_id,
                        surface,
                        piece_bytes[unk_id],
                        o_start,
                        o_end,
                        unknown=True,
                        score=scores[unk_id],
                    )
                )
            prev_unk = True
        return tokens


def _extend(out: CompactTokens, more: CompactTokens) -> None:
    """Append ``more`` (offsets in the same text) to ``out``."""
    base = len(out.ids)
    out.ids.extend(more.ids)
    out.starts.extend(more.starts)
    out.ends.extend(more.ends)
    out.irregular.update((base + i, t) for i, t in more.irregular.items())
    if more.unknown_ids:
        out.unknown_ids = out.unknown_ids | more.unknown_ids


def _add_points(offsets: array, states: array, word_starts: np.ndarray, scores: np.ndarray,
                where: np.ndarray, shift: int) -> None:
    """Append resume points: each word start's original offset (only where it is the first
    normalized position at that offset, so a later window finds the same word) and score.
    ``where``: the part's ``norm_to_orig`` as an array. The offsets kept are then strictly
    increasing (``norm_to_orig`` never decreases)."""
    if not len(word_starts):
        return
    at = word_starts
    offset = where[at]
    first = np.ones(len(at), bool)
    inner = at > 0
    first[inner] = where[at[inner] - 1] < offset[inner]
    offset = offset[first] + shift
    if offsets:
        first_new = int(np.searchsorted(offset, offsets[-1], side="right"))
        offset, kept_scores = offset[first_new:], scores[first][first_new:]
    else:
        kept_scores = scores[first]
    offsets.frombytes(offset.astype(np.int32).tobytes())
    states.frombytes(kept_scores.astype(np.float64).tobytes())


def utf8_of_spans(text: str, starts: np.ndarray, ends: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of ``text[starts[i]:ends[i]]`` for every span, joined (uint8), and
    each span's byte length (int64): array passes instead of a slice and an encode per span
    (half a million spans in a 10 MB English text under a 4k byte-fallback model). Only the
    spans' characters are gathered and encoded. Lone surrogates keep their 3-byte form, as
    :func:`_utf8`."""
    starts, ends = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
    sizes = ends - starts
    total = int(sizes.sum())
    firsts = np.cumsum(sizes) - sizes  # each span's first character among the gathered
    index = np.arange(total, dtype=np.int64) + np.repeat(starts - firsts, sizes)
    if text.isascii():  # (a character is a byte)
        return np.frombuffer(text.encode("ascii"), np.uint8)[index], sizes
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)[index]
    data = _utf8(codes.tobytes().decode("utf-32-le", "surrogatepass"))
    widths = 1 + (codes >= 0x80) + (codes >= 0x800) + (codes >= 0x10000).astype(np.int64)
    before = np.zeros(total + 1, np.int64)
    np.cumsum(widths, out=before[1:])
    return np.frombuffer(data, np.uint8), before[firsts + sizes] - before[firsts]


def _utf8(text: str) -> bytes:
    """UTF-8 bytes; a lone surrogate (possible in text from a UI) keeps its 3-byte form."""
    return text.encode("utf-8", "surrogatepass")
