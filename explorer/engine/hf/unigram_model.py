"""HF tokenizers' Unigram model (``encode_optimized``), distinct from sentencepiece's.

Differences from :class:`explorer.engine.unigram.model.UnigramModel` (sentencepiece rules)
that change ids, so HF files get this class:

- scores are summed in float64 (sentencepiece: float32);
- every vocabulary entry is matchable, and ``min_score`` is over *all* entries;
- consecutive unknown characters fuse into one unk token, then a piece not in the vocab
  becomes ``<0xNN>`` byte pieces when ``byte_fallback`` is set.

The prefix dictionary is a plain dict of every piece prefix (the same idea as
``explorer.engine.unigram.trie``); :meth:`lattice` builds the shared
:class:`explorer.engine.unigram.lattice.Lattice` for the UI.
"""

from __future__ import annotations

from typing import Any

from explorer.engine.errors import VocabFormatError
from explorer.engine.hf.models import ModelToken

UNK_PENALTY = 10.0
_CACHE_LIMIT = 32_768  # pre-tokens cached (see explorer.engine.hf.models._CACHE_LIMIT)


class HFUnigramModel:
    """Unigram pieces with float64 log-probabilities, HF semantics."""

    kind = "unigram"

    def __init__(self, pieces: list[tuple[str, float]], *, unk_id: int | None,
                 byte_fallback: bool = False) -> None:
        self.pieces = pieces
        self.vocab: dict[str, int] = {}
        for i, (p, _) in enumerate(pieces):
            self.vocab.setdefault(p, i)
        self.id_to_piece = {i: p for i, (p, _) in enumerate(pieces)}
        self.scores = [s for _, s in pieces]
        if unk_id is not None and not 0 <= unk_id < len(pieces):
            raise VocabFormatError(f"tokenizer.json: Unigram unk_id {unk_id} is out of range")
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        self.min_score = min(self.scores, default=0.0)
        self.unk_score = self.min_score - UNK_PENALTY
        # Every prefix of every piece; full pieces map to (id, score), prefixes to None.
        self.entries: dict[str, tuple[int, float] | None] = {}
        entries = self.entries
        for i, (p, s) in enumerate(pieces):
            if not p or self.vocab[p] != i:
                continue
            for k in range(1, len(p)):
                entries.setdefault(p[:k], None)
            entries[p] = (i, s)
        self._cache: dict[str, list[ModelToken]] = {}

    def _best_path(self, text: str) -> list[tuple[int, int, int]]:
        """``(start, end, id)`` of the best path; ``id`` -1 marks unknown characters."""
        n = len(text)
        entries = self.entries
        best = [0.0] * (n + 1)
        start_at = [-1] * (n + 1)
        best_id = [0] * (n + 1)
        unk_score = self.unk_score
        for i in range(n):
            base = best[i]
            has_single = False
            j = i + 1
            while j <= n:
                key = text[i:j]
                if key not in entries:
                    break
                entry = entries[key]
                if entry is not None:
                    cand = base + entry[1]
                    if start_at[j] == -1 or cand > best[j]:
                        best[j], start_at[j], best_id[j] = cand, i, entry[0]
                    if j == i + 1:
                        has_single = True
                j += 1
            if not has_single:
                cand = base + unk_score
                if start_at[i + 1] == -1 or cand > best[i + 1]:
                    best[i + 1], start_at[i + 1], best_id[i + 1] = cand, i, -1
        out: list[tuple[int, int, int]] = []
        end = n
        while end > 0:
            begin = start_at[end]
            out.append((begin, end, best_id[end]))
            end = begin
        out.reverse()
        return out

    def tokenize(self, text: str) -> list[ModelToken]:
        """Tokens of one pre-token."""
        if not text:
            return []
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        path = self._best_path(text)
        unk_id = self.unk_id if self.unk_id is not None else -1
        if all(tid != -1 and tid != unk_id for _, _, tid in path):
            # Only known pieces (each path entry's id is its piece's vocabulary id): nothing
            # to fuse or fall back on.
            # (the vocabulary's own string, not a slice of the word: one per piece cached)
            texts = self.id_to_piece
            out = [(tid, texts[tid], a, b) for a, b, tid in path]
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[text] = out
            return out
        # Fuse runs of unknown characters (HF fuse_unk is always on for Unigram).
        segs: list[list[int]] = []
        for a, b, tid in path:
            if tid == -1:
                tid = unk_id
            if tid == unk_id and segs and segs[-1][2] == unk_id and unk_id != -1:
                segs[-1][1] = b
            else:
                segs.append([a, b, tid])
        out: list[ModelToken] = []
        vocab = self.vocab
        for a, b, _tid in segs:
            piece = text[a:b]
            known = vocab.get(piece)
            if known is not None:
                out.append((known, piece, a, b))
                continue
            if self.byte_fallback:
                ids = [vocab.get(f"<0x{x:02X}>") for x in piece.encode("utf-8")]
                if all(x is not None for x in ids):
                    # HF gives every byte piece the span of the whole unknown run.
                    for byte in piece.encode("utf-8"):
                        out.append((vocab[f"<0x{byte:02X}>"], f"<0x{byte:02X}>", a, b))
                    continue
            if self.unk_id is None:
                raise VocabFormatError("tokenizer.json: Unigram text has unknown characters "
                                       "but the model has no unk_id")
            out.append((self.unk_id, piece, a, b))  # HF keeps the text as the token value
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[text] = out
        return out

    def lattice(self, text: str, norm_to_orig: list[int] | None = None) -> Any:
        """Every candidate piece of ``text`` (float64 scores) as the shared lattice type."""
        from explorer.engine.unigram.lattice import Lattice

        lattice = Lattice(text, norm_to_orig)
        entries = self.entries
        for pos in range(len(text)):
            has_single = False
            end = pos + 1
            while end <= len(text) and text[pos:end] in entries:
                entry = entries[text[pos:end]]
                if entry is not None:
                    lattice.insert(pos, end - pos, entry[0], entry[1])
                    has_single = has_single or end - pos == 1
                end += 1
            if not has_single and self.unk_id is not None:
                lattice.insert(pos, 1, self.unk_id, self.unk_score)
        return lattice
