"""A complete byte-level BPE tokenizer: special tokens, regex split, ranks model, offsets.

This is what a ``.tiktoken`` file loads as (and what other byte-level BPE formats can build
from ranks). Pipeline: split out allowed special tokens -> split each ordinary segment with the
pre-tokenizer pattern -> BPE each chunk's UTF-8 bytes. No normalization. Pieces are shown in
the GPT-2 byte-level spelling (``Ġthe``), as HF ``tokens`` are. Offsets are code-point offsets
into the text; a token holding only part of a character's UTF-8 bytes gets the span of every
character its bytes touch.

``encode`` builds full :class:`Token` objects (spans, pieces); ``encode_ids`` is the fast path
for ids only (what benchmarks and batch CLI use).
"""

from __future__ import annotations

import copy
import dataclasses
from array import array
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from operator import itemgetter

import numpy as np

from explorer.engine.bpe.layout import (
    GC_PAUSE_CHARS,
    Layout,
    chunk_layout,
    gc_paused,
    make_token,
)
from explorer.engine.bpe.model import BytePairModel
from explorer.engine.bpe.specials import (
    AllowedSpecial,
    check_disallowed,
    resolve,
    split_specials,
)
from explorer.engine.bpe.trace import MergeStep
from explorer.engine.compact import CompactTokens, int_array
from explorer.engine.encoding import Encoding, Token
from explorer.engine.hf.post_processors import AddSpecialPost
from explorer.engine.pretokenizers.byte_level import bytes_to_piece
from explorer.engine.pretokenizers.regex_split import RegexSplitter
from explorer.engine.tokenizer import PipelineStages, PreToken, Tokenizer, TokenizerInfo
from explorer.engine.vocab import Vocab

_ID, _REL_START, _REL_END = itemgetter(0), itemgetter(3), itemgetter(4)
"""A layout entry's id, relative start and relative end (:mod:`~explorer.engine.bpe.layout`)."""


def _no_piece(_token_id: int) -> str:
    """The layouts made for arrays need no piece."""
    return ""


class ByteLevelBPETokenizer(Tokenizer):
    """tiktoken-compatible tokenizer: ranks + split pattern + special tokens."""

    def __init__(
        self,
        ranks: Mapping[bytes, int],
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        *,
        name: str = "byte-level BPE",
        format: str = "tiktoken",
        pattern_name: str = "custom",
        extra: Mapping[str, str] | None = None,
        id_to_bytes: list[bytes | None] | None = None,
        pair_table: list[int] | None = None,
    ) -> None:
        """Build from ``ranks`` (token bytes -> rank = id), a split ``pattern`` and specials.

        ``id_to_bytes`` (the inverse of ``ranks``) and ``pair_table``
        (:func:`explorer.engine.bpe.model.byte_pair_table`) may be passed when cached.
        """
        self.post_processor: AddSpecialPost | None = None
        """What ``encode(text, add_special_tokens=True)`` adds (tekken: mistral-common's BOS);
        None for tiktoken files, which add nothing."""
        self.vocab = Vocab(ranks, special_tokens, id_to_bytes=id_to_bytes)
        self.model = BytePairModel(self.vocab.bytes_to_id, pair_table=pair_table)
        self.splitter = RegexSplitter(pattern)
        self._pieces: dict[int, str] = {}
        self._layouts: dict[str, Layout] = {}  # chunk -> token layout (see bpe.layout)
        self._sizes: np.ndarray | None = None  # see _byte_sizes
        self._info = TokenizerInfo(
            name=name,
            format=format,
            model_type="bpe",
            vocab_size=self.vocab.size,
            special_tokens=dict(self.vocab.special_tokens),
            normalizer="none",
            pre_tokenizer=f"regex split ({pattern_name} pattern) + byte-level bytes",
            decoder="byte-level (concatenate token bytes, decode UTF-8)",
            extra={"ranks": str(len(self.vocab.bytes_to_id)), "pattern": pattern, **(extra or {})},
        )

    # -- Tokenizer interface -------------------------------------------------------------
    @property
    def info(self) -> TokenizerInfo:
        """Name, format, sizes, specials and the pattern."""
        return self._info

    def with_post_processor(self, post: AddSpecialPost | None) -> ByteLevelBPETokenizer:
        """This tokenizer with ``post`` as its post-processor (a shallow copy: the model, the
        vocabulary and the caches are shared)."""
        other = copy.copy(self)
        other.post_processor = post
        extra = {k: v for k, v in self._info.extra.items() if k != "post-processor"}
        if post is not None:
            extra["post-processor"] = post.describe()
        other._info = dataclasses.replace(self._info, extra=extra)
        return other

    def supports_post_processor(self) -> bool:
        """True when a post-processor is set (tekken files); tiktoken files have none."""
        return self.post_processor is not None

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token string -> id."""
        return self.vocab.special_tokens

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: AllowedSpecial = (),
        add_special_tokens: bool = False,
    ) -> Encoding:
        """Encode ``text`` into tokens with ids, pieces, bytes and code-point spans.

        ``disallowed_special="all"`` gives tiktoken's default: raise :class:`SpecialTokenError`
        for any special token in the text that is not allowed. ``add_special_tokens=True``
        adds the :attr:`post_processor`'s tokens (special, with an empty ``(0, 0)`` span);
        without a post-processor it changes nothing.
        """
        allowed, disallowed = resolve(
            self.vocab.special_tokens, allowed_special, disallowed_special
        )
        check_disallowed(text, disallowed)
        tokens: list[Token] = []
        specials = self.vocab.special_tokens
        with gc_paused(len(text) >= GC_PAUSE_CHARS):
            for segment, seg_start, is_special in split_specials(text, allowed):
                if is_special:
                    tokens.append(Token(specials[segment], segment, segment.encode("utf-8"),
                                        seg_start, seg_start + len(segment), special=True))
                else:
                    self._encode_segment(segment, seg_start, tokens)
        post = self.post_processor
        if add_special_tokens and post is not None:
            post.process([], True)  # raises the post-processor's error, if any
            tokens = [*(Token(i, p, b"", 0, 0, special=True) for i, p in post.prefix), *tokens,
                      *(Token(i, p, b"", 0, 0, special=True) for i, p in post.suffix)]
        return Encoding(text, tokens)

    def _encode_segment(self, segment: str, offset: int, tokens: list[Token]) -> None:
        layouts = self._layouts
        get_layout = layouts.get
        append = tokens.append
        make = make_token
        for chunk, start in self.splitter.split_with_starts(segment):
            layout = get_layout(chunk)
            if layout is None:
                layout = chunk_layout(chunk, self.model.encode_chunk(chunk),
                                      self.vocab.id_to_bytes, self._piece)
                if len(layouts) >= self.model.cache_limit:
                    layouts.clear()
                layouts[chunk] = layout
            pos = offset + start
            for tid, piece, data, rel_start, rel_end in layout:
                append(make(tid, piece, data, pos + rel_start, pos + rel_end))

    def encode_compact(self, text: str) -> CompactTokens:
        """:meth:`encode` as arrays (every token is its vocabulary entry: none irregular)."""
        allowed, _ = resolve(self.vocab.special_tokens, "all", ())
        ids, starts, ends = int_array(), int_array(), int_array()
        specials = self.vocab.special_tokens
        with gc_paused(len(text) >= GC_PAUSE_CHARS):
            for segment, seg_start, is_special in split_specials(text, allowed):
                if is_special:
                    ids.append(specials[segment])
                    starts.append(seg_start)
                    ends.append(seg_start + len(segment))
                else:
                    self._compact_segment(segment, seg_start, ids, starts, ends)
        return CompactTokens(ids, starts, ends)

    def _compact_segment(self, segment: str, offset: int, ids: array, starts: array,
                         ends: array) -> None:
        """Append the tokens of ``segment`` (at ``offset``) to the arrays.

        The pre-tokens' ids come from the model's memo (its misses encoded together, as
        :meth:`encode_ordinary_ids` does); the spans come from the tokens' byte lengths
        (:meth:`_append_by_bytes`). The arrays are filled by C-level and numpy passes: no
        Python loop per token.
        """
        chunks = self.splitter.split(segment)
        if segment.isascii():  # (a token's characters are its bytes: spans by a cumsum)
            ascii_ids = np.fromiter(chain.from_iterable(self.model.encode_each(chunks)),
                                    np.int64)
            sizes = np.take(self._byte_sizes(), ascii_ids)
            if int(sizes.sum()) == len(segment):  # (else the pattern skipped characters)
                tok_ends = np.cumsum(sizes)
                tok_ends += offset
                ids.frombytes(ascii_ids.astype(np.int32).tobytes())
                starts.frombytes((tok_ends - sizes).astype(np.int32).tobytes())
                ends.frombytes(tok_ends.astype(np.int32).tobytes())
                return
        lens = np.fromiter(map(len, chunks), np.int64, len(chunks))
        if int(lens.sum()) != len(segment):  # (the pattern skipped characters: slow way)
            self._compact_by_chunk(segment, offset, ids, starts, ends)
            return
        self._append_by_bytes(segment, offset, self.model.encode_each(chunks), ids, starts,
                              ends)

    def _append_by_bytes(self, segment: str, offset: int, each: list[tuple[int, ...]],
                         ids: array, starts: array, ends: array) -> None:
        """The tokens ``each`` (every pre-token's, in order, covering ``segment``) appended
        with their spans found from byte positions, for the whole segment at once: a token
        spans the characters its first and last bytes fall in, as :func:`chunk_layout`
        gives per pre-token (laying out each new pre-token of several tokens alone took
        ~6 us, most of a multilingual text's encode)."""
        all_ids = np.fromiter(chain.from_iterable(each), np.int64)
        token_bytes = np.take(self._byte_sizes(), all_ids)  # (np.take: faster gathers)
        codes = np.frombuffer(segment.encode("utf-32-le", "surrogatepass"), np.uint32)
        char_bytes = 1 + (codes >= 0x80) + (codes >= 0x800) + (codes >= 0x10000)
        # each byte's character (a gather per token: twice as fast as two binary searches
        # of the characters' first bytes on the all-language UDHR text)
        char_of_byte = np.repeat(np.arange(offset, offset + len(codes), dtype=np.int64),
                                 char_bytes)
        token_end_byte = np.cumsum(token_bytes)
        token_starts = np.take(char_of_byte, token_end_byte - token_bytes)
        token_ends = np.take(char_of_byte, token_end_byte - 1)
        token_ends += 1
        ids.frombytes(all_ids.astype(np.int32).tobytes())
        starts.frombytes(token_starts.astype(np.int32).tobytes())
        ends.frombytes(token_ends.astype(np.int32).tobytes())

    def _byte_sizes(self) -> np.ndarray:
        """Each ordinary token's length in bytes, by id (int64; 0 for ids without bytes)."""
        sizes = self._sizes
        if sizes is None:
            table = self.vocab.id_to_bytes
            sizes = np.fromiter((0 if b is None else len(b) for b in table), np.int64,
                                len(table))
            self._sizes = sizes
        return sizes

    def _compact_by_chunk(self, segment: str, offset: int, ids: array, starts: array,
                          ends: array) -> None:
        """:meth:`_compact_segment` for a pattern that skips characters (spans by
        ``finditer``), one pre-token at a time."""
        id_bytes = self.vocab.id_to_bytes
        for chunk, start in self.splitter.split_with_starts(segment):
            pos = offset + start
            layout = chunk_layout(chunk, self.model.encode_chunk(chunk), id_bytes, _no_piece)
            ids.extend(map(_ID, layout))
            starts.extend(map(pos.__add__, map(_REL_START, layout)))
            ends.extend(map(pos.__add__, map(_REL_END, layout)))

    def _piece(self, token_id: int) -> str:
        p = self._pieces.get(token_id)
        if p is None:
            p = self._pieces[token_id] = bytes_to_piece(self.vocab.token_bytes(token_id))
        return p

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """Concatenated token bytes (special tokens as their text); KeyError for unknown ids."""
        id_bytes = self.vocab.id_to_bytes
        n = len(id_bytes)
        try:
            return b"".join(
                [
                    id_bytes[i]
                    if 0 <= i < n and id_bytes[i] is not None  # type: ignore[misc]
                    else self.vocab.token_bytes(i)
                    for i in ids
                ]
            )
        except TypeError:
            raise KeyError("token ids must be integers") from None

    def id_to_token(self, token_id: int) -> Token:
        """Vocabulary entry ``token_id`` with an empty span; KeyError when unknown."""
        b = self.vocab.token_bytes(token_id)
        if self.vocab.is_special(token_id):
            return Token(token_id, b.decode("utf-8"), b, 0, 0, special=True)
        return Token(token_id, self._piece(token_id), b, 0, 0, rank=token_id)

    def stages(self, text: str) -> PipelineStages:
        """Identity normalization, pre-tokens (byte-level spelling) with spans, tokens, decode."""
        allowed, _ = resolve(self.vocab.special_tokens, "all", ())
        pre_tokens: list[PreToken] = []
        for segment, seg_start, is_special in split_specials(text, allowed):
            if is_special:
                pre_tokens.append(PreToken(segment, seg_start, seg_start + len(segment)))
                continue
            for chunk, start, end in self.splitter.split_with_spans(segment):
                pre_tokens.append(
                    PreToken(
                        bytes_to_piece(chunk.encode("utf-8")), seg_start + start, seg_start + end
                    )
                )
        encoding = self.encode(text)
        return PipelineStages(
            original=text,
            normalized=text,
            norm_to_orig=list(range(len(text) + 1)),
            pre_tokens=pre_tokens,
            encoding=encoding,
            decoded=self.decode(encoding.ids),
        )

    def clear_cache(self) -> None:
        """Forget every memoised pre-token (cold-cache benchmarks)."""
        self.model.clear_cache()
        self._layouts.clear()

    def supports_merge_trace(self) -> bool:
        """Byte-level BPE can show its merge queue."""
        return True

    # -- BPE-specific ---------------------------------------------------------------------
    def trace_merges(self, pre_token: str | bytes) -> Iterator[MergeStep[bytes]]:
        """Every step of the merge queue for ``pre_token``, treated as ONE pre-token.

        Pass one chunk of :meth:`stages` (or any text: it is not split). Symbols are bytes;
        spell them with :func:`explorer.engine.pretokenizers.bytes_to_piece` for display.
        """
        return self.model.encode_trace(pre_token)

    def encode_ordinary_ids(self, text: str) -> list[int]:
        """Ids of ``text`` with special tokens treated as ordinary text (fast path)."""
        return self.model.encode_chunks(self.splitter.split(text))

    def encode_ids(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: AllowedSpecial = (),
    ) -> list[int]:
        """Ids only, same rules as :meth:`encode` (fast path: no spans, no Token objects)."""
        allowed, disallowed = resolve(
            self.vocab.special_tokens, allowed_special, disallowed_special
        )
        check_disallowed(text, disallowed)
        if not allowed:
            return self.encode_ordinary_ids(text)
        out: list[int] = []
        specials = self.vocab.special_tokens
        for segment, _start, is_special in split_specials(text, allowed):
            if is_special:
                out.append(specials[segment])
            else:
                out += self.model.encode_chunks(self.splitter.split(segment))
        return out

    def token_id(self, token: bytes | str) -> int | None:
        """Id of ordinary token bytes, or of a special token's string; None when absent."""
        if isinstance(token, str):
            sid = self.vocab.special_tokens.get(token)
            return sid if sid is not None else self.vocab.bytes_to_id.get(token.encode("utf-8"))
        return self.vocab.bytes_to_id.get(token)


__all__ = ["ByteLevelBPETokenizer"]
