"""minbpe's tokenizers (Karpathy): byte-level BPE where a merge is a pair of *ids*.

``merges``: ``(id1, id2) -> new id`` (``256 + k`` for the k-th merge); encoding repeatedly
merges the adjacent pair with the lowest new id (all its occurrences, left to right) until
no pair has a merge -- minbpe's ``_encode_chunk``. Here it is a heap keyed by (new id,
position) with stale entries skipped: merging never creates a pair with a lower id than the
one just merged (a merge's parts are older tokens), so the order is the same.

``pattern`` empty = ``BasicTokenizer`` (no split); otherwise ``RegexTokenizer``. Optional
``byte_shuffle`` is ``GPT4Tokenizer``'s permutation of the 256 byte ids (cl100k's order).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping, Sequence

from explorer.engine.bpe.layout import chunk_layout
from explorer.engine.bpe.specials import AllowedSpecial, check_disallowed, resolve, split_specials
from explorer.engine.bpe.trace import MergeStep, trace_merges
from explorer.engine.encoding import Encoding, Token
from explorer.engine.pretokenizers.byte_level import bytes_to_piece
from explorer.engine.pretokenizers.regex_split import RegexSplitter
from explorer.engine.tokenizer import PipelineStages, PreToken, Tokenizer, TokenizerInfo


class MinBPETokenizer(Tokenizer):
    """minbpe ``BasicTokenizer`` / ``RegexTokenizer`` (/ ``GPT4Tokenizer`` with a shuffle)."""

    def __init__(self, merges: Mapping[tuple[int, int], int], pattern: str,
                 special_tokens: Mapping[str, int] | None = None, *, name: str = "minbpe",
                 byte_shuffle: Sequence[int] | None = None,
                 extra: Mapping[str, str] | None = None) -> None:
        """``merges`` in minbpe's form; ``pattern`` "" for no split; specials str -> id."""
        self.merges: dict[tuple[int, int], int] = dict(merges)  # (int, int) -> int
        self.pattern = pattern
        self.special_tokens: dict[str, int] = dict(special_tokens or {})
        self._special_ids = {i: s for s, i in self.special_tokens.items()}
        self.byte_shuffle = list(byte_shuffle) if byte_shuffle is not None else None
        self._splitter = RegexSplitter(pattern) if pattern else None
        # id -> bytes (real bytes: with a shuffle, byte id byte_shuffle[b] spells byte b)
        vocab: dict[int, bytes] = {}
        for b in range(256):
            vocab[self.byte_shuffle[b] if self.byte_shuffle else b] = bytes([b])
        for (p0, p1), idx in sorted(self.merges.items(), key=lambda kv: kv[1]):
            vocab[idx] = vocab[p0] + vocab[p1]  # parts are older ids (checked by loaders)
        self.vocab = vocab
        size = max([*(i + 1 for i in vocab), *(i + 1 for i in self._special_ids)])
        self._info = TokenizerInfo(
            name=name, format="minbpe", model_type="bpe", vocab_size=size,
            special_tokens=dict(self.special_tokens),
            pre_tokenizer=f"regex split ({pattern})" if pattern else "none (BasicTokenizer)",
            decoder="concatenate token bytes, decode UTF-8",
            extra={"merges": str(len(self.merges)), **(extra or {})},
        )

    @property
    def info(self) -> TokenizerInfo:
        """Name, sizes, specials, pattern."""
        return self._info

    def _merge(self, ids: list[int]) -> list[int]:
        n = len(ids)
        if n < 2:
            return ids
        merges = self.merges
        sym = list(ids)
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        alive = [True] * n
        heap = [(r, i) for i in range(n - 1) if (r := merges.get((sym[i], sym[i + 1])))]
        heapq.heapify(heap)
        while heap:
            r, i = heapq.heappop(heap)
            j = nxt[i]
            if not alive[i] or j >= n or merges.get((sym[i], sym[j])) != r:
                continue  # stale: a neighbour merged since this entry was queued
            sym[i] = r
            alive[j] = False
            nxt[i] = nxt[j]
            if nxt[j] < n:
                prv[nxt[j]] = i
            if prv[i] >= 0 and (q := merges.get((sym[prv[i]], r))):
                heapq.heappush(heap, (q, prv[i]))
            if nxt[i] < n and (q := merges.get((r, sym[nxt[i]]))):
                heapq.heappush(heap, (q, i))
        return [s for s, a in zip(sym, alive, strict=True) if a]

    def _chunk_ids(self, chunk: str) -> list[int]:
        data = chunk.encode("utf-8")
        shuffle = self.byte_shuffle
        return self._merge([shuffle[b] for b in data] if shuffle else list(data))

    def _chunks(self, segment: str) -> Iterator[tuple[str, int]]:
        if self._splitter is None:
            if segment:
                yield segment, 0
            return
        yield from self._splitter.split_with_starts(segment)

    def _piece(self, token_id: int) -> str:
        return bytes_to_piece(self.vocab[token_id])

    def encode(self, text: str, *, allowed_special: AllowedSpecial = "all",
               disallowed_special: AllowedSpecial = ()) -> Encoding:
        """Ids, pieces (byte-level spelling), bytes and code-point spans."""
        allowed, disallowed = resolve(self.special_tokens, allowed_special, disallowed_special)
        check_disallowed(text, disallowed)
        tokens: list[Token] = []
        for segment, seg_start, is_special in split_specials(text, allowed):
            if is_special:
                tokens.append(Token(self.special_tokens[segment], segment,
                                    segment.encode("utf-8"), seg_start,
                                    seg_start + len(segment), special=True))
                continue
            for chunk, start in self._chunks(segment):
                pos = seg_start + start
                for tid, piece, data, a, b in chunk_layout(chunk, self._chunk_ids(chunk),
                                                           self.vocab, self._piece):
                    tokens.append(Token(tid, piece, data, pos + a, pos + b, rank=tid))
        return Encoding(text, tokens)

    def encode_ids(self, text: str, *, allowed_special: AllowedSpecial = "all") -> list[int]:
        """Ids only (what minbpe's ``encode(text, allowed_special=...)`` returns)."""
        allowed, _ = resolve(self.special_tokens, allowed_special, ())
        out: list[int] = []
        for segment, _start, is_special in split_specials(text, allowed):
            if is_special:
                out.append(self.special_tokens[segment])
            else:
                for chunk, _ in self._chunks(segment):
                    out.extend(self._chunk_ids(chunk))
        return out

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """Concatenated token bytes; KeyError for an unknown id."""
        out = []
        for i in ids:
            if i in self._special_ids:
                out.append(self._special_ids[i].encode("utf-8"))
            elif i in self.vocab:
                out.append(self.vocab[i])
            else:
                raise KeyError(f"invalid token id: {i}")
        return b"".join(out)

    def id_to_token(self, token_id: int) -> Token:
        """Vocabulary entry ``token_id`` with an empty span; KeyError when unknown."""
        if token_id in self._special_ids:
            s = self._special_ids[token_id]
            return Token(token_id, s, s.encode("utf-8"), 0, 0, special=True)
        if token_id not in self.vocab:
            raise KeyError(token_id)
        return Token(token_id, self._piece(token_id), self.vocab[token_id], 0, 0, rank=token_id)

    def stages(self, text: str) -> PipelineStages:
        """No normalization; pre-tokens are the regex chunks (or whole segments)."""
        allowed, _ = resolve(self.special_tokens, "all", ())
        pre: list[PreToken] = []
        for segment, seg_start, is_special in split_specials(text, allowed):
            if is_special:
                pre.append(PreToken(segment, seg_start, seg_start + len(segment)))
                continue
            for chunk, start in self._chunks(segment):
                pre.append(PreToken(bytes_to_piece(chunk.encode("utf-8")), seg_start + start,
                                    seg_start + start + len(chunk)))
        enc = self.encode(text)
        return PipelineStages(text, text, list(range(len(text) + 1)), pre, enc,
                              self.decode(enc.ids))

    def supports_merge_trace(self) -> bool:
        """The id-pair merge queue can be shown."""
        return True

    def trace_merges(self, pre_token: str | bytes) -> Iterator[MergeStep[bytes]]:
        """Every step of the merge loop for ``pre_token`` (symbols as token bytes)."""
        data = pre_token.encode("utf-8") if isinstance(pre_token, str) else pre_token
        by_bytes = {b: i for i, b in self.vocab.items()}

        def rank_of(a: bytes, b: bytes) -> int | None:
            ia, ib = by_bytes.get(a), by_bytes.get(b)
            return None if ia is None or ib is None else self.merges.get((ia, ib))

        return trace_merges([bytes([b]) for b in data], rank_of)
