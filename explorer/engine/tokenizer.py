"""The interface every loaded tokenizer offers, whatever its format or algorithm.

The UI and CLI talk only to :class:`Tokenizer`. A concrete tokenizer (tiktoken-style BPE,
SentencePiece, HF tokenizer.json pipeline, GGUF) implements the abstract methods and answers
the capability predicates so the UI asks instead of type-switching.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from explorer.engine.compact import CompactTokens, token_table
from explorer.engine.encoding import Encoding, Token

ModelType = Literal["bpe", "unigram", "wordpiece", "wordlevel"]

_ALPHABETS = (
    "abcdefghijklmnopqrstuvwxyz",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "àéîõüçñßøåæœ",
    "абвгдежзийклмнопрстуфхцчшщыэюя",
    "αβγδεζηθικλμνξοπρστυφχψω",
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年",
    "あいうえおかきくけこさしすせそたちつてとなにぬねの",
    "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
    "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशसह",
    "0123456789",
)


def _warm_up_text(alphabets: Sequence[str], words: int = 640, seed: int = 0x5EED) -> str:
    """Made-up words of ``alphabets``, with punctuation and line breaks: nearly none a
    whole token of any vocabulary, enough of them (~5k characters) for every batch path of
    an encode (byte-level BPE's lock-step merges, the Unigram batch Viterbi, the
    normalizer's arrays) to run."""
    rng = random.Random(seed)
    out: list[str] = []
    for k in range(words):
        letters = rng.choice(alphabets)
        out.append("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))))
        out.append("\n" if k % 16 == 15 else rng.choice((" ", " ", " ", ", ", ". ", " (", ") ")))
    return "".join(out)


@cache
def warm_up_texts() -> tuple[str, str]:
    """What :meth:`Tokenizer.prepare` encodes: ASCII text (which has fast paths of its own),
    then ten scripts and digits (made when first asked: ~4 ms no other process needs)."""
    return _warm_up_text(_ALPHABETS[:2] + _ALPHABETS[-1:]), _warm_up_text(_ALPHABETS)


@dataclass(frozen=True, slots=True)
class PreToken:
    """One pre-token: a piece of the normalized text the model encodes on its own."""

    text: str
    """The pre-token as the model sees it (after normalization and any byte-level mapping)."""
    start: int
    """Code-point offset into the original text."""
    end: int


@dataclass(slots=True)
class PipelineStages:
    """Every stage of tokenizing one text, for the pipeline view."""

    original: str
    normalized: str
    norm_to_orig: list[int]
    """For each code point of ``normalized`` plus one past the end: its original offset."""
    pre_tokens: list[PreToken]
    encoding: Encoding
    decoded: str


@dataclass(frozen=True, slots=True)
class TokenizerInfo:
    """What ``tokenizer-explorer info`` prints and the About/status areas show."""

    name: str
    format: str
    """``tiktoken``, ``tokenizer.json``, ``sentencepiece``, ``gguf``, ``trained``."""
    model_type: ModelType
    vocab_size: int
    special_tokens: dict[str, int] = field(default_factory=dict)
    normalizer: str = "none"
    pre_tokenizer: str = "none"
    decoder: str = "none"
    extra: dict[str, str] = field(default_factory=dict)


class Tokenizer(ABC):
    """A loaded tokenizer: immutable after construction, safe to share between threads."""

    @property
    @abstractmethod
    def info(self) -> TokenizerInfo:
        """Name, format, model type, sizes and component summary."""

    @abstractmethod
    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = "all",
    ) -> Encoding:
        """Encode ``text``: ids, pieces, bytes and original-text offsets.

        ``allowed_special``: special tokens recognised in the text. ``"all"`` (the default in
        the explorer, where users type chat templates), or a set; others are encoded as
        ordinary text.
        """

    def encode_compact(self, text: str) -> CompactTokens:
        """:meth:`encode` (all special tokens allowed) as arrays of ids and spans, for long
        documents (see :mod:`explorer.engine.compact`); a Token is rebuilt exactly from it.

        This default builds the Tokens and drops the regular ones; engines override it to
        fill the arrays without any Token object.
        """
        return token_table(self).compact(self.encode(text).tokens)

    def encode_compact_resumed(
        self, text: str, resume: tuple[int, float] | None
    ) -> CompactTokens:
        """:meth:`encode_compact` of ``text`` as a window of a longer text.

        ``resume=(offset, state)``: one of the ``resume`` points a previous window reported
        (``CompactTokens.resume``, offsets made relative to ``text``); tokens from there on
        are then decided as in one encode of the longer text, and this result's points are
        valid in it too. ``None``: ``text`` starts the longer text. Tokenizers whose tokens
        never depend on what came before a safe cut ignore it and report no points (this
        default).
        """
        return self.encode_compact(text)

    def cache_shares(self, text: str, step: int,
                     floor: Callable[[], int] | None = None) -> Iterator[object]:
        """Work that makes a later encode of ``text`` faster, done ahead (in another process:
        the window's first encode of a big document) about ``step`` code points at a time,
        as picklable data for :meth:`take_cache_share` of a copy of this tokenizer; the
        text before ``floor()`` (asked before each step) needs none. Tokens never depend on
        it, only speed. This default has nothing to share."""
        del floor
        return iter(())

    def prepare(self) -> None:
        """Build what a first encode builds on its way (tables, a batch solver, a normalizer's
        arrays...) now, by encoding :func:`warm_up_texts` the document's way: the window
        calls this right after a load, while Qt lays a new text out, so that a big
        document's first window does not wait for them (~40-80 ms of a 131k-character
        window for the bundled models, ~170 ms for a 250k-piece Unigram model)."""
        for text in warm_up_texts():
            self.encode_compact_resumed(text, None)

    def take_cache_share(self, share: object) -> None:
        """Take one item of another copy's :meth:`cache_shares` (this default ignores it)."""
        del share

    @abstractmethod
    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes of the decoded token sequence (no UTF-8 repair)."""

    def decode(self, ids: Sequence[int]) -> str:
        """Decoded text; invalid UTF-8 replaced by U+FFFD, like the reference libraries."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    @abstractmethod
    def id_to_token(self, token_id: int) -> Token:
        """The vocabulary entry ``token_id`` as a Token with an empty span (for the browser)."""

    @property
    def text_piece_ids(self) -> frozenset[int]:
        """Ids whose tokens are their entry (:meth:`compact_entry`) with the text they cover
        as their piece, where kept as arrays (:mod:`explorer.engine.compact`): a
        SentencePiece ``<unk>`` run, whose piece is its normalized text, where the
        normalizer left that text as it was. This default: none."""
        return frozenset()

    def compact_entry(self, token_id: int) -> Token:
        """Entry ``token_id`` as most of its tokens inside a text are, but their span (what
        :mod:`explorer.engine.compact` keeps as arrays; others are kept whole). This
        default: :meth:`id_to_token`."""
        return self.id_to_token(token_id)

    @property
    def vocab_size(self) -> int:
        """Number of ids (including specials)."""
        return self.info.vocab_size

    def piece_type(self, token_id: int) -> str | None:
        """The vocabulary's own type of entry ``token_id`` where the format records one
        (SentencePiece: ``normal``, ``unknown``, ``control``, ``user-defined``, ``unused``,
        ``byte``); None when it does not (the browser then derives a type from the Token)."""
        return None

    @abstractmethod
    def stages(self, text: str) -> PipelineStages:
        """Every pipeline stage for ``text`` (normalized text, pre-tokens, tokens, decode)."""

    # Capability predicates: the UI asks these instead of checking classes.
    def supports_merge_trace(self) -> bool:
        """True when :meth:`trace_merges` can show the BPE merge queue."""
        return False

    def supports_lattice(self) -> bool:
        """True when :meth:`lattice` can build a Unigram lattice."""
        return False

    def supports_post_processor(self) -> bool:
        """True when ``encode(text, add_special_tokens=True)`` runs the format's
        post-processor (HF tokenizer.json); other tokenizers do not take that keyword."""
        return False
