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

import re
from collections.abc import Callable, Iterable
from heapq import heapify, heappop, heappush
from itertools import pairwise
from typing import Any, Protocol

from explorer.engine.errors import VocabFormatError
from explorer.engine.hf.bpe_lockstep import (
    LOCKSTEP_MAX_CHARS,
    LOCKSTEP_MIN_WORDS,
    MergeTable,
    merge_words,
)
from explorer.engine.hf.merge_ranks import MergeRanks
from explorer.engine.sentencepiece.pieces import SPACE_SYMBOL

ModelToken = tuple[int, str, int, int]
"""``(id, piece, start, end)``: code-point span inside the pre-token."""

_MAX_ID = 2**31 - 1
"""The largest vocabulary id a BPE model takes (HF's are u32; a pair of ids then keys an
int64 table)."""
_CACHE_LIMIT = 32_768
"""Pre-tokens whose tokens a model keeps (cleared when full). Measured on English text
(CPU time, one document encode): a 262k-piece GGUF BPE 4 MB 10.8-11.9 s at this and at
100k, peak RSS 312 MB against 370 MB; a 64k-piece tokenizer.json Unigram 5 MB the same
within the noise from 10k to 100k, 208 MB against 255 MB (docs/benchmarks.md, session 22)."""
_PAIR_MEMO_LIMIT = 65_536
"""Adjacent pairs whose merge rank the BPE model remembers (cleared when full)."""


def vocabulary_string(pieces: dict[int, str], tid: int, text: str) -> str:
    """The vocabulary's own string for ``text`` spelled by piece ``tid`` (``text`` when the
    map has another): what a model caches then holds one string per piece, not one per
    word it was made for."""
    held = pieces.get(tid)
    return held if held == text else text


_WARM_PROBE = 4096
""":meth:`BPEModel.warm` gives up after this many words if fewer than 1 in 20 are new."""
_WORDS_BLOCK = 8192
"""A long pre-token's words are looked up, and the new ones merged together, this many at a
time (they must fit the word cache)."""
_CUT_MIN = 16
"""A BPE pre-token this long is merged word by word where :func:`word_cut` allows it."""
_MISSING = object()


def _word_spans(text: str, cut: re.Pattern[str]) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each part of ``text`` that ``cut`` (:func:`word_cut`) makes."""
    return list(pairwise([0, *(m.start() for m in cut.finditer(text)), len(text)]))


def word_cut(vocab: dict[str, int]) -> re.Pattern[str] | None:
    """A pattern matching the places where a BPE model with this vocabulary (no
    continuation prefix or word suffix) can cut a pre-token into parts merged apart with
    the same tokens: before a ``▁`` that follows a character ``x`` (not ``▁``) such that no
    piece holds ``x▁``.

    Every token a merge makes is a piece of the vocabulary, so no token can span such a
    place, and merges on either side never see the other: merging the parts apart gives
    the same tokens. ``▁`` must be a piece (the part after the cut then starts with a known
    symbol, so an ``<unk>`` run never spans a cut either). None when it is not, or no
    piece starts with ``▁`` (the vocabulary does not spell spaces that way).

    Models without a pre-tokenizer that splits words (Llama 2, Mistral, Gemma
    ``tokenizer.json``; Gemma 4 GGUF splits lines only) merge whole lines otherwise.
    """
    sp = SPACE_SYMBOL
    if sp not in vocab or not any(p.startswith(sp) and len(p) > 1 for p in vocab):
        return None
    joined = "\0".join(vocab)
    before = set(re.findall(f"([^{sp}\0]){sp}", joined)) | {"\0"}
    return re.compile(f"(?<=[^{sp}{re.escape(''.join(sorted(before)))}])(?={sp})")


class Model(Protocol):
    """What the pipeline needs from a model."""

    kind: str
    vocab: dict[str, int]

    def tokenize(self, text: str) -> list[ModelToken]:
        """Tokens of one pre-token."""
        ...


class BPEModel:
    """HF BPE with a merges list. Immutable; the per-pre-token cache is a plain dict.

    ``merges`` is either a list of ``(left, right)`` pairs (tokenizer.json) or a list of
    ``"left right"`` strings (GGUF, split at the first space after the first character as
    llama.cpp does); the latter are kept as strings so a 500k-merge file loads fast.
    """

    kind = "bpe"

    def __init__(
        self,
        vocab: dict[str, int],
        merges: list[tuple[str, str]] | list[str],
        *,
        unk_token: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
        strict: bool = True,
    ) -> None:
        """``strict``: refuse merges whose parts or result are not in the vocabulary (HF);
        otherwise such merges never apply (GGUF files converted from other formats)."""
        self.vocab = vocab
        self.id_to_piece = {i: p for p, i in vocab.items()}
        self.unk_token = unk_token
        self.prefix = continuing_subword_prefix or ""
        self.suffix = end_of_word_suffix or ""
        self.fuse_unk = fuse_unk
        self.byte_fallback = byte_fallback
        self.ignore_merges = ignore_merges
        self.strict = strict
        self.unk_id = vocab.get(unk_token) if unk_token is not None else None
        self.merges_count = len(merges)
        if strict:
            self._validate(merges)
        self.stride = max(vocab.values(), default=0) + 1
        """Pair keys are ``left_id * stride + right_id``."""
        low, high = min(vocab.values(), default=0), self.stride - 1
        if low < 0 or high > _MAX_ID:
            bad = low if low < 0 else high
            raise VocabFormatError(f"BPE vocabulary id {bad} is out of range (0 to {_MAX_ID})")
        self.ranks = MergeRanks.from_merges(vocab, merges, self.stride)
        """Each merge's rank keyed by its parts' ids (:mod:`~explorer.engine.hf.merge_ranks`:
        a dict of them held 51 MB for a 262k-piece GGUF model's 515k merges, and ``"left
        right"`` string keys 71 MB). Later duplicates win, as in HF's HashMap collect."""
        self._cache: dict[str, list[ModelToken]] = {}
        self._pair_memo: dict[tuple[str, str], int | None] = {}
        self.rank = self._make_rank()

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the data (process pools); the rank function, caches and merge table are
        rebuilt."""
        state = dict(self.__dict__)
        for key in ("rank", "_cache", "_pair_memo", "_merge_table"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._cache = {}
        self._pair_memo = {}
        self.rank = self._make_rank()

    def merge_pairs(self) -> list[tuple[str, str, int]]:
        """``(left, right, rank)`` of every merge kept, in rank order."""
        piece, stride = self.id_to_piece, self.stride
        keys, ranks = self.ranks.arrays()
        return [(piece[key // stride], piece[key % stride], rank)
                for key, rank in zip(keys.tolist(), ranks.tolist(), strict=True)]

    def _shared(self, piece: str) -> str:
        """The vocabulary's own string for ``piece`` (one in it): the cache and the pair
        memo then hold one string per piece, not one per word it was built in (a 10 MB
        document with a 262k-piece model held ~90 MB of merged copies)."""
        return vocabulary_string(self.id_to_piece, self.vocab.get(piece, -1), piece)

    def _make_rank(self) -> Callable[[str, str], int | None]:
        """The pair-rank function, specialised once (it runs for every adjacent pair)."""
        get = self.ranks.get
        vocab = self.vocab
        vocab_get = vocab.get
        stride = self.stride
        join = self._join
        strict = self.strict
        # The same pairs come back in word after word: remember each pair's answer (a tuple
        # key of two interned-hash strings is cheaper than building "a b" and re-checking
        # the merged piece against the vocabulary).
        memo = self._pair_memo
        memo_get = memo.get
        pieces = self.id_to_piece

        def rank(a: str, b: str) -> int | None:
            key = (a, b)
            r = memo_get(key, -1)
            if r != -1:
                return r
            left, right = vocab_get(a), vocab_get(b)
            r = None if left is None or right is None else get(left * stride + right)
            if r is not None and not strict and join(a, b) not in vocab:
                r = None
            if len(memo) >= _PAIR_MEMO_LIMIT:
                memo.clear()
            # (kept under the vocabulary's own strings, not the word's: see _shared)
            memo[(vocabulary_string(pieces, -1 if left is None else left, a),
                  vocabulary_string(pieces, -1 if right is None else right, b))] = r
            return r

        return rank

    def _split_key(self, m: str) -> tuple[str, str]:
        pos = m.find(" ", 1)
        if pos < 0:
            raise VocabFormatError(f"BPE merge {m!r} has no space")
        return m[:pos], m[pos + 1 :]

    def _join(self, a: str, b: str) -> str:
        p = self.prefix
        return a + b[len(p):] if p and b.startswith(p) else a + b

    def _validate(self, merges: list[tuple[str, str]] | list[str]) -> None:
        vocab = self.vocab
        for m in merges:
            a, b = self._split_key(m) if isinstance(m, str) else m
            for part in (a, b):
                if part not in vocab:
                    raise VocabFormatError(f"tokenizer.json: BPE merge {a!r} {b!r}: {part!r} "
                                           "is not in the vocabulary")
            if self._join(a, b) not in vocab:
                raise VocabFormatError(f"tokenizer.json: BPE merge {a!r} {b!r}: result "
                                       f"{self._join(a, b)!r} is not in the vocabulary")


    def tokenize(self, text: str) -> list[ModelToken]:
        """Tokens of one pre-token."""
        if not text:
            return []
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        if self.ignore_merges and text in self.vocab:
            out = [(self.vocab[text], text, 0, len(text))]
        elif len(text) >= _CUT_MIN and (cut := self._word_cut()) is not None:
            return self._by_words(text, cut)  # (its words are cached, not the text)
        else:
            out = self._merge(text)
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[text] = out
        return out

    def warm(self, texts: Iterable[str]) -> None:
        """Merge the words of ``texts`` that are not cached yet together, in lock step
        (:mod:`explorer.engine.hf.bpe_lockstep`), into the cache :meth:`tokenize` reads:
        when there are enough of them, each character a piece, in a model without a
        continuing prefix or word suffix. The tokens are those :meth:`tokenize` makes."""
        if self.prefix or self.suffix or self.ignore_merges:
            return
        cache = self._cache
        cut = self._word_cut()
        words: list[str] = []
        seen = 0
        for text in texts:
            if not text or text in cache:
                continue
            if len(text) >= _CUT_MIN and cut is not None:
                some = [text[a:b] for a, b in _word_spans(text, cut)]
                seen += len(some)
                words += [w for w in some if w not in cache]
            else:
                seen += 1
                words.append(text)
            if seen >= _WARM_PROBE and len(words) * 20 < seen:
                return  # (nearly every word cached already: a warm pass)
        self._warm_words(words)

    def _warm_words(self, words: list[str]) -> None:
        """:meth:`warm` for words (no prefix, suffix or ``ignore_merges``: the caller
        checks): the new ones merged in lock step when there are enough."""
        if len(words) < LOCKSTEP_MIN_WORDS:
            return
        cache, vocab = self._cache, self.vocab
        new = [w for w in dict.fromkeys(words) if w not in cache
               and len(w) <= LOCKSTEP_MAX_CHARS and all(map(vocab.__contains__, w))]
        if len(new) < LOCKSTEP_MIN_WORDS:
            return
        new = new[:_CACHE_LIMIT]
        table = self.__dict__.get("_merge_table")
        if table is None:
            table = self._merge_table = MergeTable(self)
        merged = merge_words(self, table, new)
        if len(cache) + len(new) > _CACHE_LIMIT:
            cache.clear()
        cache.update(zip(new, merged, strict=True))

    def _word_cut(self) -> re.Pattern[str] | None:
        """Where a pre-token can be cut into parts merged apart with the same result
        (see :func:`word_cut`), found once; None where it cannot."""
        cut = self.__dict__.get("_cut", _MISSING)
        if cut is _MISSING:
            cut = None
            if not (self.prefix or self.suffix or self.ignore_merges):
                cut = word_cut(self.vocab)
            self._cut = cut
        return cut  # type: ignore[return-value]

    def _by_words(self, text: str, cut: re.Pattern[str]) -> list[ModelToken]:
        """The tokens of ``text`` merged word by word (each word cached)."""
        spans = _word_spans(text, cut)
        out: list[ModelToken] = []
        extend = out.extend
        merge = self._merge
        cache, get = self._cache, self._cache.get
        for first in range(0, len(spans), _WORDS_BLOCK):
            block = spans[first:first + _WORDS_BLOCK]
            words = [text[a:b] for a, b in block]
            self._warm_words(words)  # (one long pre-token: a whole text without line cuts)
            for (a, _b), word in zip(block, words, strict=True):
                toks = get(word)
                if toks is None:
                    toks = merge(word)
                    if len(cache) >= _CACHE_LIMIT:
                        cache.clear()
                    cache[word] = toks
                if a:
                    extend([(tid, piece, s + a, e + a) for tid, piece, s, e in toks])
                else:
                    extend(toks)
        return out

    def _initial(self, text: str) -> list[list]:
        """Initial symbols as ``[piece, start, end]`` (HF ``merge_word``)."""
        vocab = self.vocab
        shared = self._shared
        syms: list[list] = []
        unk: list | None = None  # pending [unk_token, start, end]
        n = len(text)
        for i, ch in enumerate(text):
            s = ch
            if i and self.prefix:
                s = self.prefix + s
            if i == n - 1 and self.suffix:
                s = s + self.suffix
            if s in vocab:
                if unk is not None:
                    syms.append(unk)
                    unk = None
                syms.append([shared(s), i, i + 1])
                continue
            if self.byte_fallback:
                pieces = [f"<0x{b:02X}>" for b in s.encode("utf-8")]
                if all(p in vocab for p in pieces):
                    # HF adds these without flushing a pending unk first.
                    syms.extend([p, i, i + 1] for p in pieces)
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
                    unk = [self.unk_token, i, i + 1]
            # No unk token: HF drops the character.
        if unk is not None:
            syms.append(unk)
        return syms

    def _merge(self, text: str) -> list[ModelToken]:
        """Merge by pair rank, lowest first, leftmost on ties (HF ``Word::merge_all``).

        The parts are plain strings while they merge; the tokens hold the vocabulary's own
        strings (:meth:`_shared`, looked up for each token, not for each symbol and merge:
        a word of text in another script made ~14 lookups a token)."""
        if not (self.prefix or self.suffix) and None not in (ids := list(map(self.vocab.get,
                                                                               text))):
            if len(ids) == 1:  # (every character a piece: the symbols are the characters)
                return [(ids[0], self._shared(text), 0, 1)]
            starts: list[int] = list(range(len(text)))
            parts = list(text)
            ends = list(range(1, len(text) + 1))
        else:
            syms = self._initial(text)
            starts = [s[1] for s in syms]
            parts = [s[0] for s in syms]
            ends = [s[2] for s in syms]
        n = len(parts)
        # rank() inlined as a lookup in its memo (it runs for every adjacent pair); -1 means
        # "not asked yet", then rank() answers and remembers.
        rank = self.rank
        memo_get = self._pair_memo.get
        join = self._join if self.prefix else str.__add__
        alive = [True] * n
        nxt = list(range(1, n + 1))
        prev = list(range(-1, n - 1))
        heap: list[tuple[int, int]] = []  # (rank, left position)
        for i in range(n - 1):
            r = memo_get((parts[i], parts[i + 1]), -1)
            if r == -1:
                r = rank(parts[i], parts[i + 1])
            if r is not None:
                heap.append((r, i))
        heapify(heap)
        while heap:
            r, pos = heappop(heap)
            if not alive[pos]:
                continue
            right = nxt[pos]
            if right >= n:
                continue
            current = memo_get((parts[pos], parts[right]), -1)
            if current == -1:
                current = rank(parts[pos], parts[right])
            if current != r:
                continue  # stale: a side changed since this entry was pushed
            merged = join(parts[pos], parts[right])
            parts[pos] = merged
            ends[pos] = ends[right]
            alive[right] = False
            after = nxt[right]
            nxt[pos] = after
            if after < n:
                prev[after] = pos
            before = prev[pos]
            if before >= 0:
                r2 = memo_get((parts[before], merged), -1)
                if r2 == -1:
                    r2 = rank(parts[before], merged)
                if r2 is not None:
                    heappush(heap, (r2, before))
            if after < n:
                r2 = memo_get((merged, parts[after]), -1)
                if r2 == -1:
                    r2 = rank(merged, parts[after])
                if r2 is not None:
                    heappush(heap, (r2, pos))
        vocab = self.vocab
        shared = self._shared
        return [(vocab[parts[i]], shared(parts[i]), starts[i], ends[i])
                for i in range(n) if alive[i]]


class WordPieceModel:
    """HF WordPiece: greedy longest-match-first with a continuation prefix."""

    kind = "wordpiece"

    def __init__(
        self,
        vocab: dict[str, int],
        *,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ) -> None:
        self.vocab = vocab
        self.id_to_piece = {i: p for p, i in vocab.items()}
        self.unk_token = unk_token
        self.prefix = continuing_subword_prefix
        self.max_chars = max_input_chars_per_word
        self.max_len = max((len(p) for p in vocab), default=1)
        self.unk_id = vocab.get(unk_token)
        self._cache: dict[str, list[ModelToken]] = {}
        # The longest piece starting with each character, and the longest continuation
        # (after the prefix): the greedy match tries no longer candidate (a word in a script
        # the vocabulary holds only as single characters: one lookup a character, not 20)
        first: dict[str, int] = {}
        after: dict[str, int] = {}
        cut = len(continuing_subword_prefix)
        for piece in vocab:
            if piece and len(piece) > first.get(piece[0], 0):
                first[piece[0]] = len(piece)
            if (cut and len(piece) > cut and piece.startswith(continuing_subword_prefix)
                    and len(piece) - cut > after.get(piece[cut], 0)):
                after[piece[cut]] = len(piece) - cut
        self._longest_first = first
        self._longest_after = after if cut else first

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
        vocab, prefix, pieces = self.vocab, self.prefix, self.id_to_piece
        out: list[ModelToken] = []
        start, n = 0, len(text)
        longest = self._longest_first
        while start < n:
            end = min(n, start + longest.get(text[start], 0))
            longest = self._longest_after
            found: ModelToken | None = None
            while start < end:
                sub = text[start:end]
                if start:
                    sub = prefix + sub
                tid = vocab.get(sub)
                if tid is not None:
                    found = (tid, vocabulary_string(pieces, tid, sub), start, end)
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
        self.unk_id = vocab.get(unk_token)

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
