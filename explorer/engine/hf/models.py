"""HF tokenizers models: BPE, WordPiece, WordLevel (Unigram is in :mod:`.unigram_model`).

Every model tokenizes one pre-token and returns ``(id, piece, start, end)`` with code-point
offsets inside that pre-token. Behaviour follows the Rust crate:

- BPE: ``ignore_merges`` (a pre-token already in the vocab is emitted whole),
  ``continuing_subword_prefix`` / ``end_of_word_suffix`` on the initial characters,
  ``byte_fallback`` (``<0xNN>`` pieces for a character not in the vocab), ``unk_token`` with
  ``fuse_unk``, characters dropped when there is no ``unk_token``; merges by pair rank,
  lowest rank first, leftmost on ties (HF ``Word::merge_all``).
- WordPiece: greedy longest match first, ``max_input_chars_per_word``, whole word -> unk.
- WordLevel: whole pre-token lookup or unk.

Not handled: BPE ``dropout`` (random; refused when set).
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush
from typing import Protocol

from explorer.engine.errors import VocabFormatError

ModelToken = tuple[int, str, int, int]
"""``(id, piece, start, end)``: code-point span inside the pre-token."""

_CACHE_LIMIT = 100_000


class Model(Protocol):
    """What the pipeline needs from a model."""

    kind: str
    vocab: dict[str, int]

    def tokenize(self, text: str) -> list[ModelToken]:
        """Tokens of one pre-token."""
        ...


class BPEModel:
    """HF BPE with a merges list. Immutable; the per-pre-token cache is a plain dict."""

    kind = "bpe"

    def __init__(
        self,
        vocab: dict[str, int],
        merges: list[tuple[str, str]],
        *,
        unk_token: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
    ) -> None:
        self.vocab = vocab
        self.id_to_piece = {i: p for p, i in vocab.items()}
        self.merges = merges
        self.unk_token = unk_token
        self.prefix = continuing_subword_prefix
        self.suffix = end_of_word_suffix
        self.fuse_unk = fuse_unk
        self.byte_fallback = byte_fallback
        self.ignore_merges = ignore_merges
        if unk_token is not None and unk_token not in vocab:
            unk_token_id = None
        else:
            unk_token_id = vocab.get(unk_token) if unk_token is not None else None
        self.unk_id = unk_token_id
        plen = len(continuing_subword_prefix or "")
        table: dict[tuple[int, int], tuple[int, int]] = {}
        for rank, (a, b) in enumerate(merges):
            ia, ib = vocab.get(a), vocab.get(b)
            if ia is None or ib is None:
                missing = a if ia is None else b
                raise VocabFormatError(f"tokenizer.json: BPE merge {a!r} {b!r}: {missing!r} "
                                       "is not in the vocabulary")
            new = a + b[plen:] if plen and b.startswith(continuing_subword_prefix or "") else a + b
            nid = vocab.get(new)
            if nid is None:
                raise VocabFormatError(f"tokenizer.json: BPE merge {a!r} {b!r}: result {new!r} "
                                       "is not in the vocabulary")
            table[(ia, ib)] = (rank, nid)
        self.merge_table = table
        self._cache: dict[str, list[ModelToken]] = {}

    def tokenize(self, text: str) -> list[ModelToken]:
        """Tokens of one pre-token."""
        if not text:
            return []
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        if self.ignore_merges and text in self.vocab:
            out = [(self.vocab[text], text, 0, len(text))]
        else:
            out = self._merge(text)
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[text] = out
        return out

    def _initial(self, text: str) -> list[list[int]]:
        """Initial symbols as ``[id, start, end]`` (HF ``merge_word``)."""
        vocab = self.vocab
        syms: list[list[int]] = []
        unk: list[int] | None = None  # pending [unk_id, start, end]
        n = len(text)
        for i, ch in enumerate(text):
            s = ch
            if i and self.prefix:
                s = self.prefix + s
            if i == n - 1 and self.suffix:
                s = s + self.suffix
            tid = vocab.get(s)
            if tid is not None:
                if unk is not None:
                    syms.append(unk)
                    unk = None
                syms.append([tid, i, i + 1])
                continue
            if self.byte_fallback:
                ids = [vocab.get(f"<0x{b:02X}>") for b in s.encode("utf-8")]
                if all(x is not None for x in ids):
                    syms.extend([x, i, i + 1] for x in ids)  # type: ignore[misc]
                    continue
            if self.unk_token is not None:
                if self.unk_id is None:
                    raise VocabFormatError(
                        f"tokenizer.json: BPE unk_token {self.unk_token!r} is not in the vocabulary"
                    )
                if unk is not None and self.fuse_unk:
                    unk[2] = i + 1
                else:
                    if unk is not None:
                        syms.append(unk)
                    unk = [self.unk_id, i, i + 1]
        if unk is not None:
            syms.append(unk)
        return syms

    def _merge(self, text: str) -> list[ModelToken]:
        syms = self._initial(text)
        n = len(syms)
        table = self.merge_table
        ids = [s[0] for s in syms]
        alive = [True] * n
        nxt = list(range(1, n + 1))
        prev = list(range(-1, n - 1))
        ends = [s[2] for s in syms]
        heap: list[tuple[int, int, int]] = []  # (rank, pos, new_id)
        for i in range(n - 1):
            m = table.get((ids[i], ids[i + 1]))
            if m is not None:
                heap.append((m[0], i, m[1]))
        heapify(heap)
        while heap:
            _, pos, new_id = heappop(heap)
            if not alive[pos]:
                continue
            right = nxt[pos]
            if right >= n:
                continue
            m = table.get((ids[pos], ids[right]))
            if m is None or m[1] != new_id:
                continue  # stale entry
            ids[pos] = new_id
            ends[pos] = ends[right]
            alive[right] = False
            after = nxt[right]
            nxt[pos] = after
            if after < n:
                prev[after] = pos
            before = prev[pos]
            if before >= 0:
                m = table.get((ids[before], new_id))
                if m is not None:
                    heappush(heap, (m[0], before, m[1]))
            if after < n:
                m = table.get((new_id, ids[after]))
                if m is not None:
                    heappush(heap, (m[0], pos, m[1]))
        pieces = self.id_to_piece
        return [(ids[i], pieces[ids[i]], syms[i][1], ends[i]) for i in range(n) if alive[i]]


class WordPieceModel:
    """HF WordPiece: greedy longest-match-first with a continuation prefix."""

    kind = "wordpiece"

    def __init__(self, vocab: dict[str, int], *, unk_token: str = "[UNK]",
                 continuing_subword_prefix: str = "##",
                 max_input_chars_per_word: int = 100) -> None:
        self.vocab = vocab
        self.id_to_piece = {i: p for p, i in vocab.items()}
        self.unk_token = unk_token
        self.prefix = continuing_subword_prefix
        self.max_chars = max_input_chars_per_word
        self.max_len = max((len(p) for p in vocab), default=1)
        self._cache: dict[str, list[ModelToken]] = {}

    def _unk(self, text: str) -> list[ModelToken]:
        uid = self.vocab.get(self.unk_token)
        if uid is None:
            raise VocabFormatError(
                f"tokenizer.json: WordPiece unk_token {self.unk_token!r} is not in the vocabulary"
            )
        return [(uid, self.unk_token, 0, len(text))]

    def tokenize(self, text: str) -> list[ModelToken]:
        """Tokens of one pre-token (one word)."""
        if not text:
            return []
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        out = self._tokenize(text)
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[text] = out
        return out

    def _tokenize(self, text: str) -> list[ModelToken]:
        if len(text) > self.max_chars:
            return self._unk(text)
        vocab, prefix = self.vocab, self.prefix
        out: list[ModelToken] = []
        start, n = 0, len(text)
        while start < n:
            end = min(n, start + self.max_len)
            found: ModelToken | None = None
            while start < end:
                sub = text[start:end]
                if start:
                    sub = prefix + sub
                tid = vocab.get(sub)
                if tid is not None:
                    found = (tid, sub, start, end)
                    break
                end -= 1
            if found is None:
                return self._unk(text)
            out.append(found)
            start = end
        return out


class WordLevelModel:
    """HF WordLevel: the whole pre-token is a vocabulary entry, or the unk token."""

    kind = "wordlevel"

    def __init__(self, vocab: dict[str, int], *, unk_token: str = "<unk>") -> None:
        self.vocab = vocab
        self.id_to_piece = {i: p for p, i in vocab.items()}
        self.unk_token = unk_token

    def tokenize(self, text: str) -> list[ModelToken]:
        """One token for the pre-token."""
        if not text:
            return []
        tid = self.vocab.get(text)
        if tid is not None:
            return [(tid, text, 0, len(text))]
        uid = self.vocab.get(self.unk_token)
        if uid is None:
            raise VocabFormatError(
                f"tokenizer.json: WordLevel unk_token {self.unk_token!r} is not in the vocabulary"
            )
        return [(uid, self.unk_token, 0, len(text))]
