"""The HF-style pipeline tokenizer: added tokens -> normalizer -> pre-tokenizer -> model.

:class:`PipelineTokenizer` implements :class:`explorer.engine.tokenizer.Tokenizer` for
tokenizer.json files and for GGUF vocabularies expressed as the same components. Offsets are
code points of the original text; ``token_bytes`` come from the decoder run per token.
By default ``encode`` matches HF ``encode(text, add_special_tokens=False)``: no template
tokens, but a post-processor that trims offsets (RoBERTa, ByteLevel) trims them, as HF does;
``encode(text, add_special_tokens=True)`` runs the whole post-processor (templates adding
``[CLS]``/``[SEP]``, ``<s>``/``</s>``, a Llama BOS, RoBERTa/ByteLevel offset trimming; single
sequences only, see :mod:`explorer.engine.hf.post_processors`) and matches HF
``encode(text, add_special_tokens=True)``. ``stages`` shows the default encode.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from explorer.engine.bpe.layout import GC_PAUSE_CHARS
from explorer.engine.compact import CompactTokens, int_array, token_table
from explorer.engine.encoding import Encoding, Token
from explorer.engine.errors import VocabFormatError
from explorer.engine.gc_pause import gc_paused
from explorer.engine.hf.added_tokens import AddedToken, AddedTokenMatcher
from explorer.engine.hf.byte_level_memo import ByteLevelMemo
from explorer.engine.hf.compact_fast import ByteLevelCompact
from explorer.engine.hf.decoders import (
    Decoder,
    decode_tokens,
    has_byte_fallback,
    repair_byte_runs,
)
from explorer.engine.hf.models import Model
from explorer.engine.hf.normalized import Aligned, clear_normalized_runs
from explorer.engine.hf.normalizers import Normalizer
from explorer.engine.hf.post_processors import PostProcessor
from explorer.engine.hf.pre_tokenizers import PreTokenizer, SequencePre, byte_level_spell
from explorer.engine.hf.token_bytes import TokenBytes, make_token
from explorer.engine.hf.wordpiece_compact import WordPieceCompact
from explorer.engine.tokenizer import (
    ModelType,
    PipelineStages,
    PreToken,
    Tokenizer,
    TokenizerInfo,
)

WARM_MIN_CHARS = 4096
"""From this many characters of a text's part, its pre-tokens' new words are merged together
first (the model's ``warm``; a keystroke's re-encode is shorter)."""
WARM_GROUP_CHARS = 65_536
"""Pre-tokens warmed at a time (their new words must fit the model's word cache)."""


def _warmed(pieces: list[Aligned], warm: Callable[[list[str]], None]) -> Iterator[Aligned]:
    """``pieces``, each group of about :data:`WARM_GROUP_CHARS` characters warmed before it
    is yielded."""
    i, n = 0, len(pieces)
    while i < n:
        j, size = i, 0
        while j < n and size < WARM_GROUP_CHARS:
            size += len(pieces[j].text)
            j += 1
        group = pieces[i:j]
        warm([p.text for p in group])
        yield from group
        i = j


_PIECE_TYPE_NAMES = {1: "normal", 2: "unknown", 3: "control", 4: "user-defined", 5: "unused",
                     6: "byte"}


def _pre_steps(pre: PreTokenizer | None) -> list[PreTokenizer]:
    if pre is None:
        return []
    if isinstance(pre, SequencePre):
        return [s for step in pre.steps for s in _pre_steps(step)]
    return [pre]


@dataclass
class Components:
    """Everything a pipeline tokenizer is made of."""

    model: Model
    normalizer: Normalizer | None = None
    pre_tokenizer: PreTokenizer | None = None
    decoder: Decoder | None = None
    added_tokens: list[AddedToken] = field(default_factory=list)
    post_processor: PostProcessor | None = None


@dataclass
class _Trace:
    """Intermediate results of one encode (for :meth:`PipelineTokenizer.stages`)."""

    normalized: list[Aligned] = field(default_factory=list)
    pre_tokens: list[PreToken] = field(default_factory=list)
    pieces: list[Aligned] = field(default_factory=list)
    """The model's input pieces with alignment (added tokens excluded)."""


class PipelineTokenizer(Tokenizer):
    """A tokenizer made of HF components. Immutable after construction; thread-safe."""

    def __init__(self, components: Components, *, name: str, fmt: str,
                 extra: dict[str, str] | None = None,
                 piece_types: Sequence[int] | None = None) -> None:
        """``piece_types``: per-id GGUF/SentencePiece entry types, when the file has them."""
        self.c = components
        self._piece_types = piece_types
        self.model = components.model
        self._added = {t.id: t for t in components.added_tokens}
        self._raw_matcher = AddedTokenMatcher(
            [t for t in components.added_tokens if not t.normalized], lambda t: t.content)
        norm = components.normalizer

        def normalized_content(t: AddedToken) -> str:
            return norm.normalize(Aligned.from_original(t.content)).text if norm else t.content

        self._norm_matcher = AddedTokenMatcher(
            [t for t in components.added_tokens if t.normalized], normalized_content)
        pieces: dict[int, str] = self.model.id_to_piece  # type: ignore[attr-defined]
        if any(pieces.get(t.id) != t.content for t in components.added_tokens):
            pieces = dict(pieces)  # (the model's stays as it is; shared when it agrees:
            for t in components.added_tokens:  # a 262k-piece model's copy was 10 MB)
                pieces[t.id] = t.content
        self._id_to_piece = pieces
        self._size = max(self._id_to_piece, default=-1) + 1
        self._token_bytes = TokenBytes(components.decoder)
        self._byte_level = ByteLevelMemo.for_pipeline(components.pre_tokenizer, self.model)
        self._compact_fast: ByteLevelCompact | None = None
        self._unk_id = getattr(self.model, "unk_id", None)
        self._scores = getattr(self.model, "scores", None)
        specials = {t.content: t.id for t in components.added_tokens if t.special}
        self._info = TokenizerInfo(
            name=name,
            format=fmt,
            model_type=self._model_type(),
            vocab_size=self._size,
            special_tokens=specials,
            normalizer=norm.describe() if norm else "none",
            pre_tokenizer=components.pre_tokenizer.describe() if components.pre_tokenizer
            else "none",
            decoder=components.decoder.describe() if components.decoder else "none",
            extra={"post-processor": components.post_processor.describe()
                   if components.post_processor else "none", **(extra or {})},
        )

    def _model_type(self) -> ModelType:
        kind = self.model.kind
        if kind not in ("bpe", "unigram", "wordpiece", "wordlevel"):
            raise VocabFormatError(f"unknown model kind {kind!r}")
        return kind  # type: ignore[return-value]

    @property
    def info(self) -> TokenizerInfo:
        """Name, format, model type, sizes and component summary."""
        return self._info

    # -- encoding -------------------------------------------------------------------------

    def _run(self, text: str, allowed: Literal["all"] | Collection[str],
             trace: _Trace | None) -> list[tuple[int, str, int, int, bool]]:
        """``(id, piece, start, end, special)`` for ``text``."""
        out: list[tuple[int, str, int, int, bool]] = []
        original = Aligned.from_original(text)
        norm = self.c.normalizer
        pre = self.c.pre_tokenizer
        tokenize = self.model.tokenize
        warm = getattr(self.model, "warm", None)
        append = out.append
        byte_level = self._byte_level
        for a, b, tok in self._raw_matcher.split(text, allowed):
            if tok is not None:
                self._emit_added(tok, original.slice(a, b), out, trace)
                continue
            seg = original.slice(a, b)
            normed = norm.normalize(seg) if norm is not None else seg
            for na, nb, ntok in self._norm_matcher.split(normed.text, allowed):
                part = normed.slice(na, nb)
                if ntok is not None:
                    self._emit_added(ntok, part, out, trace)
                    continue
                if trace is not None:
                    trace.normalized.append(part)
                elif byte_level is not None:
                    ranges = byte_level.cut_ranges(part.text)
                    if ranges is not None:
                        self._emit_ranges(byte_level, part, ranges, out)
                        continue
                    for u in byte_level.cut(part):
                        layout = byte_level.layout(u.text)
                        if layout is None:
                            self._emit_general(byte_level, u, out)
                            continue
                        starts, ends = u.starts, u.ends
                        for tid, piece, cs, ce in layout:
                            if ce - cs == 1:
                                append((tid, piece, starts[cs], ends[cs], False))
                            else:
                                append((tid, piece, starts[cs], max(ends[cs:ce]), False))
                    continue
                pieces = pre.split([part]) if pre is not None else [part]
                if warm is not None and len(part.text) >= WARM_MIN_CHARS:
                    pieces = _warmed(pieces, warm)  # (new words merged together)
                for p in pieces:
                    if trace is not None:
                        s, e = p.span(0, len(p))
                        trace.pre_tokens.append(PreToken(p.text, s, e))
                        trace.pieces.append(p)
                    starts, ends = p.starts, p.ends
                    for tid, piece, ts, te in tokenize(p.text):
                        # Aligned.span inlined (the hot loop): first start, largest end.
                        if te - ts == 1:
                            append((tid, piece, starts[ts], ends[ts], False))
                        elif ts < te:
                            append((tid, piece, starts[ts], max(ends[ts:te]), False))
                        else:
                            s, e = p.span(ts, te)
                            append((tid, piece, s, e, False))
        return out

    @staticmethod
    def _emit_ranges(byte_level: ByteLevelMemo, part: Aligned, ranges: list[tuple[int, int]],
                     out: list[tuple[int, str, int, int, bool]]) -> None:
        """Model tokens of the pieces ``part.text[a:b]`` (byte-level memo, no slicing)."""
        text, starts, ends = part.text, part.starts, part.ends
        append = out.append
        layout_of = byte_level.layout
        for a, b in ranges:
            layout = layout_of(text[a:b])
            if layout is None:
                PipelineTokenizer._emit_general(byte_level, part.slice(a, b), out)
                continue
            for tid, piece, cs, ce in layout:
                if ce - cs == 1:
                    append((tid, piece, starts[a + cs], ends[a + cs], False))
                else:
                    append((tid, piece, starts[a + cs], max(ends[a + cs:a + ce]), False))

    @staticmethod
    def _emit_general(byte_level: ByteLevelMemo, u: Aligned,
                      out: list[tuple[int, str, int, int, bool]]) -> None:
        p = byte_level_spell(u)
        for tid, piece, ts, te in byte_level.tokenize(p.text):
            s, e = p.span(ts, te)
            out.append((tid, piece, s, e, False))

    def _emit_added(self, tok: AddedToken, part: Aligned,
                    out: list[tuple[int, str, int, int, bool]], trace: _Trace | None) -> None:
        s, e = part.span(0, len(part))
        # HF reports the matched text (with any lstrip/rstrip whitespace) as the token.
        out.append((tok.id, part.text, s, e, True))
        if trace is not None:
            trace.normalized.append(part)
            trace.pre_tokens.append(PreToken(part.text, s, e))

    def _encoding(self, text: str, raw: list[tuple[int, str, int, int, bool]]) -> Encoding:
        # Decode vocabulary spellings (HF's Unigram reports an unknown token's *text* as
        # its value, but decodes the id to the unk piece).
        get = self._id_to_piece.get
        chunks = self._token_bytes.decode([get(r[0], r[1]) for r in raw])
        unk = self._unk_id
        scores = self._scores
        make = make_token
        if scores is None:
            tokens = [make(tid, piece, chunk, s, e, special, tid == unk, None)
                      for (tid, piece, s, e, special), chunk in zip(raw, chunks, strict=True)]
        else:
            n = len(scores)
            tokens = [
                make(tid, piece, chunk, s, e, special, tid == unk,
                     scores[tid] if not special and tid < n else None)
                for (tid, piece, s, e, special), chunk in zip(raw, chunks, strict=True)
            ]
        return Encoding(text, tokens)

    def encode(self, text: str, *,
               allowed_special: Literal["all"] | Collection[str] = "all",
               add_special_tokens: bool = False) -> Encoding:
        """Encode ``text`` like HF ``encode(text, add_special_tokens=False)`` (spans trimmed
        past spaces when the post-processor trims offsets, as HF does even then).

        ``add_special_tokens=True`` also runs the file's post-processor, like HF
        ``encode(text, add_special_tokens=True)``: template tokens come out with
        ``special=True`` and an empty ``(0, 0)`` span, and trimming post-processors shrink
        spans. Raises :class:`UnsupportedComponentError` naming the post-processor when it
        cannot be run; a tokenizer without one returns the plain encoding.
        """
        with gc_paused(len(text) >= GC_PAUSE_CHARS):  # (see encode_compact)
            raw = self._run(text, allowed_special, None)
            post = self.c.post_processor
            if post is not None:
                raw = (post.process(raw, True) if add_special_tokens
                       else post.process_offsets(raw))
            return self._encoding(text, raw)

    def encode_compact(self, text: str) -> CompactTokens:
        """:meth:`encode` as arrays, without a Token object per regular token: the test
        :meth:`TokenTable.compact` makes on each Token (its fields but the span equal the
        vocabulary entry's), made on the raw tuples; only irregular tokens are built
        (a document's encode built and dropped ~2.5 million of them for 10 MB).

        The cyclic collector is paused for a long text: its aligned pieces, tuples and
        cache entries hold no cycles, and the collections they set off were half the time
        (a Unigram ``tokenizer.json`` with Metaspace: 1.50 -> 0.77 s per MB)."""
        with gc_paused(len(text) >= GC_PAUSE_CHARS):
            return self._encode_compact(text)

    def _encode_compact(self, text: str) -> CompactTokens:
        """The body of :meth:`encode_compact`."""
        fast = self._compact_fast
        if fast is None and ByteLevelCompact.fits(self):
            fast = self._compact_fast = ByteLevelCompact(self)
        elif fast is None and WordPieceCompact.fits(self):
            fast = self._compact_fast = WordPieceCompact(self)
        if fast is not None:  # byte-level pipelines: per pre-token, from a memo
            done = fast.encode(text)
            if done is not None:
                return done
        raw = self._run(text, "all", None)
        post = self.c.post_processor
        if post is not None:
            raw = post.process_offsets(raw)
        table = token_table(self)
        get = self._id_to_piece.get
        chunks = self._token_bytes.decode([get(r[0], r[1]) for r in raw])
        unk = self._unk_id
        scores = self._scores
        n = 0 if scores is None else len(scores)
        known = table._keys
        key_of = table.key
        irregular: dict[int, Token] = {}
        unknown: set[int] = set()
        for i, ((tid, piece, s, e, special), chunk) in enumerate(zip(raw, chunks,
                                                                      strict=True)):
            k = known.get(tid)
            if k is None:
                k = key_of(tid)
            score = scores[tid] if scores is not None and not special and tid < n else None
            is_unknown = tid == unk
            # (a Token's key: piece, bytes, special, unknown, score, rank; rank is None here)
            if k is None or (piece, chunk, special, is_unknown, score, None) != k:
                irregular[i] = make_token(tid, piece, chunk, s, e, special, is_unknown, score)
            elif is_unknown:
                unknown.add(tid)
        return CompactTokens(int_array([r[0] for r in raw]), int_array([r[2] for r in raw]),
                             int_array([r[3] for r in raw]), irregular, frozenset(unknown))

    def clear_caches(self) -> None:
        """Forget every memo keyed by input text (the model's per-word results and merge
        pairs, byte-level words, pre-tokenizer cuts, normalization runs): for benchmarks
        that measure a cold start. The per-vocabulary-piece decoded bytes stay (a table of
        the vocabulary, as HF precomputes). Results never depend on any of them."""
        for name in ("_cache", "_pair_memo"):
            cache = getattr(self.model, name, None)
            if cache is not None:
                cache.clear()
        clear_normalized_runs()
        if self._compact_fast is not None:
            self._compact_fast.clear()
        if self._byte_level is not None:
            self._byte_level.clear()
        for step in _pre_steps(self.c.pre_tokenizer):
            clear = getattr(step, "clear_memo", None)
            if clear is not None:
                clear()

    def encode_ids(self, text: str) -> list[int]:
        """``encode(text).ids`` without building tokens, spans' users or decoded bytes."""
        return [r[0] for r in self._run(text, "all", None)]

    def supports_post_processor(self) -> bool:
        """tokenizer.json files have the post-processor concept (even when theirs is null,
        then ``add_special_tokens=True`` adds nothing, as in HF); GGUF vocabularies have
        llama.cpp's BOS/EOS rule as theirs."""
        return (self._info.format in ("tokenizer.json", "folder")
                or self.c.post_processor is not None)

    def stages(self, text: str) -> PipelineStages:
        """Normalized text with alignment, pre-tokens with spans, tokens and decoded text."""
        trace = _Trace()
        raw = self._run(text, "all", trace)
        enc = self._encoding(text, raw)
        normalized = "".join(p.text for p in trace.normalized)
        norm_to_orig = [s for p in trace.normalized for s in p.starts]
        norm_to_orig.append(len(text))
        decoded = self.decode(enc.ids)
        return PipelineStages(
            original=text,
            normalized=normalized,
            norm_to_orig=norm_to_orig,
            pre_tokens=trace.pre_tokens,
            encoding=enc,
            decoded=decoded,
        )

    # -- decoding and vocabulary ----------------------------------------------------------

    def _pieces(self, ids: Sequence[int]) -> list[str]:
        pieces = []
        for i in ids:
            p = self._id_to_piece.get(i)
            if p is None:
                raise VocabFormatError(f"token id {i} is not in the vocabulary")
            pieces.append(p)
        return pieces

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """Decoder output for ``ids`` (special tokens included), no UTF-8 repair."""
        return b"".join(decode_tokens(self.c.decoder, self._pieces(ids)))

    def decode(self, ids: Sequence[int]) -> str:
        """Decoded text as HF ``decode(ids, skip_special_tokens=False)`` gives it.

        HF's ``ByteFallback`` turns a run of ``<0xNN>`` pieces that is not valid UTF-8 into
        one U+FFFD *per piece*; elsewhere invalid bytes are replaced per maximal subpart.
        """
        pieces = self._pieces(ids)
        if has_byte_fallback(self.c.decoder):
            pieces = repair_byte_runs(pieces)
        return b"".join(decode_tokens(self.c.decoder, pieces)).decode("utf-8", errors="replace")

    def id_to_token(self, token_id: int) -> Token:
        """The vocabulary entry ``token_id`` with an empty span."""
        piece = self._id_to_piece.get(token_id)
        if piece is None:
            raise VocabFormatError(f"token id {token_id} is not in the vocabulary")
        added = self._added.get(token_id)
        chunk = decode_tokens(self.c.decoder, [piece])[0]
        scores = getattr(self.model, "scores", None)
        return Token(
            id=token_id, piece=piece, token_bytes=chunk, start=0, end=0,
            special=bool(added and added.special),
            unknown=token_id == getattr(self.model, "unk_id", None),
            score=scores[token_id] if scores is not None and token_id < len(scores) else None,
        )

    def compact_entry(self, token_id: int) -> Token:
        """The entry with the bytes the decoder gives it between two others (its bytes in
        most places of a text: a WordPiece word's first token has a leading space, a
        ``##`` piece none, a Metaspace word its space), so those tokens are kept as arrays
        (a 10 MB document with all-MiniLM held a Token object for 90% of its tokens). The
        model's unknown id is as the model reports it (unknown, not special)."""
        entry = self.id_to_token(token_id)
        if token_id == self._unk_id:
            # (as the model reports an unknown piece: not special, though the file may list
            # its unk token among the special added ones; a CJK document under all-MiniLM
            # held a Token object for each of its 1.2 million [UNK]s, ~300 MB)
            scores = self._scores
            score = scores[token_id] if scores is not None and token_id < len(scores) else None
            entry = replace(entry, special=False, unknown=True, score=score)
        elif token_id in self._added and not (entry.special and entry.score is None):
            # (as every added token is reported in a text: special, no score; mpt's
            # whitespace runs, added but not special, were a Token object each)
            entry = replace(entry, special=True, score=None)
        middle = self._token_bytes.decode([entry.piece] * 3)[1]
        return entry if middle == entry.token_bytes else replace(entry, token_bytes=middle)

    def piece_type(self, token_id: int) -> str | None:
        """The file's own entry type of ``token_id`` (GGUF ``token_type``), else None."""
        if self._piece_types is None or not 0 <= token_id < len(self._piece_types):
            return None
        return _PIECE_TYPE_NAMES.get(self._piece_types[token_id])

    def token_to_id(self, piece: str) -> int | None:
        """Id of a vocabulary piece or added token, or None."""
        for t in self.c.added_tokens:
            if t.content == piece:
                return t.id
        return self.model.vocab.get(piece)

    def supports_merge_trace(self) -> bool:
        """BPE models without a continuation prefix can show their merge queue."""
        return self.model.kind == "bpe" and not getattr(self.model, "prefix", "")

    def trace_merges(self, pre_token: str) -> Iterator[Any]:
        """Every step of the merge queue for one pre-token given as *original text* (the
        slice ``text[p.start:p.end]`` of a ``stages(text).pre_tokens`` entry): it is
        normalized and pre-tokenized like ``encode`` does, and the model input of its first
        pre-token is traced. Symbols are vocabulary pieces (``str``; byte-level spelling for
        byte-level BPE). ``ignore_merges`` models emit a pre-token that is itself in the
        vocabulary whole; the trace still shows how merges would build it.
        """
        from explorer.engine.bpe.trace import trace_merges

        if not self.supports_merge_trace():
            raise VocabFormatError("this tokenizer has no BPE merge queue to trace")
        trace = _Trace()
        self._run(pre_token, "all", trace)
        model_input = next((p.text for p in trace.pieces if p.text), "")
        model = self.model
        symbols = [s[0] for s in model._initial(model_input)]  # type: ignore[attr-defined]
        return trace_merges(symbols, model.rank)  # type: ignore[attr-defined]

    def model_inputs(self, text: str) -> list[str]:
        """The pieces the model encodes for ``text`` (normalized and pre-tokenized like
        ``encode``; added tokens excluded), in order."""
        trace = _Trace()
        self._run(text, "all", trace)
        return [p.text for p in trace.pieces]

    def token_id(self, piece: str) -> int | None:
        """Id of a vocabulary piece (labels the final symbols of a merge trace)."""
        return self.token_to_id(piece)

    def supports_lattice(self) -> bool:
        """Unigram models can show their lattice."""
        return self.model.kind == "unigram"

    def lattice(self, text: str):  # noqa: ANN201 - explorer.engine.unigram.lattice.Lattice
        """The Unigram lattice over the model's input: the pre-tokens of ``text`` joined.

        HF encodes each pre-token on its own, so the best path never crosses a pre-token
        boundary; the lattice still shows every candidate piece of the joined text.
        """
        if self.model.kind != "unigram":
            raise VocabFormatError("only Unigram models have a lattice")
        trace = _Trace()
        self._run(text, "all", trace)
        joined = "".join(p.text for p in trace.pieces)
        norm_to_orig = [s for p in trace.pieces for s in p.starts]
        norm_to_orig.append(len(text))
        return self.model.lattice(joined, norm_to_orig)  # type: ignore[attr-defined]
