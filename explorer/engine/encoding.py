"""The result of encoding: tokens with ids, bytes, pieces and offsets into the user's text.

Offsets are code-point offsets into the *original* text (before normalization), half-open.
A token whose bytes are not valid UTF-8 on their own (byte-level BPE splitting a character,
or ``<0xNN>`` byte-fallback pieces) is *partial*: its span is the span of the characters its
bytes touch, so neighbouring partial tokens share a span. Displays must use ``token_bytes``
(hex) for them, never a U+FFFD replacement character.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields


@dataclass(frozen=True, slots=True)
class Token:
    """One token of an encoding."""

    id: int
    piece: str
    """The vocabulary's own spelling: HF/GPT-2 byte-level string, SentencePiece ``▁piece``,
    WordPiece ``##piece``, or ``<0xNN>``."""
    token_bytes: bytes
    """The bytes this token contributes to the decoded text (for ``<0xNN>``, that byte)."""
    start: int
    """Code-point offset of the first character this token covers in the original text."""
    end: int
    """Code-point offset one past the last character it covers (``end >= start``)."""
    special: bool = False
    """A special/control/added token split out before the model."""
    unknown: bool = False
    """The model's unknown token (``<unk>``, ``[UNK]``)."""
    score: float | None = None
    """Unigram/SentencePiece score of the piece, where the model has scores."""
    rank: int | None = None
    """BPE merge rank of the token, where the model has ranks."""

    @property
    def is_partial_utf8(self) -> bool:
        """True when ``token_bytes`` are not a complete UTF-8 sequence on their own."""
        try:
            self.token_bytes.decode("utf-8")
        except UnicodeDecodeError:
            return True
        return False

    @property
    def text(self) -> str:
        """The decoded text of the token; partial UTF-8 shown as ``\\xNN`` escapes."""
        return self.token_bytes.decode("utf-8", errors="backslashreplace")


@dataclass(slots=True)
class Encoding:
    """Tokens of one text, in order."""

    text: str
    tokens: list[Token] = field(default_factory=list)

    @property
    def ids(self) -> list[int]:
        """Token ids in order."""
        return [t.id for t in self.tokens]

    @property
    def pieces(self) -> list[str]:
        """Vocabulary pieces in order."""
        return [t.piece for t in self.tokens]

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """Code-point ``(start, end)`` spans in order."""
        return [(t.start, t.end) for t in self.tokens]

    def __len__(self) -> int:
        return len(self.tokens)

    def __iter__(self) -> Iterator[Token]:
        return iter(self.tokens)

    def __getitem__(self, index: int) -> Token:
        return self.tokens[index]

    def token_at(self, offset: int) -> int | None:
        """Index of the first token whose span contains code-point ``offset``, or None."""
        lo, hi = 0, len(self.tokens)
        while lo < hi:  # first token with end > offset
            mid = (lo + hi) // 2
            if self.tokens[mid].end <= offset:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self.tokens) and self.tokens[lo].start <= offset:
            return lo
        return None


def byte_to_char_offsets(text: str) -> list[int]:
    """Map every UTF-8 byte offset of ``text`` (0..len(bytes)) to the index of its character.

    Byte offsets inside a multi-byte character map to that character.
    """
    out: list[int] = []
    for i, ch in enumerate(text):
        n = len(ch.encode("utf-8")) if ord(ch) > 0x7F else 1
        out.extend([i] * n)
    out.append(len(text))
    return out


def decode_bytes(pieces: Sequence[bytes]) -> str:
    """Join token bytes and decode as UTF-8, invalid sequences replaced (like tiktoken)."""
    return b"".join(pieces).decode("utf-8", errors="replace")


# -- fast Token construction for hot encode paths ---------------------------------------------
# A frozen dataclass sets each field through ``object.__setattr__`` behind its generated
# ``__init__``; the factories below do the same without the call's argument handling. They
# are used only while Token has exactly the fields they set and no ``__post_init__``;
# otherwise they are the real constructor, so a new field can never be left unset.

_KNOWN_FIELDS = ("id", "piece", "token_bytes", "start", "end", "special", "unknown", "score",
                 "rank")
_FAST = (tuple(f.name for f in fields(Token)) == _KNOWN_FIELDS
         and not hasattr(Token, "__post_init__"))


def _make_scored() -> Callable[[int, str, bytes, int, int, bool, bool, float | None], Token]:
    if not _FAST:
        return lambda i, p, b, s, e, sp, unk, sc: Token(i, p, b, s, e, sp, unk, sc)
    new, set_ = object.__new__, object.__setattr__

    def make(tid: int, piece: str, data: bytes, start: int, end: int, special: bool,
             unknown: bool, score: float | None) -> Token:
        t = new(Token)
        set_(t, "id", tid)
        set_(t, "piece", piece)
        set_(t, "token_bytes", data)
        set_(t, "start", start)
        set_(t, "end", end)
        set_(t, "special", special)
        set_(t, "unknown", unknown)
        set_(t, "score", score)
        set_(t, "rank", None)
        return t

    return make


def _make_ranked() -> Callable[[int, str, bytes, int, int], Token]:
    if not _FAST:
        return lambda i, p, b, s, e: Token(i, p, b, s, e, rank=i)
    new, set_ = object.__new__, object.__setattr__

    def make(tid: int, piece: str, data: bytes, start: int, end: int) -> Token:
        t = new(Token)
        set_(t, "id", tid)
        set_(t, "piece", piece)
        set_(t, "token_bytes", data)
        set_(t, "start", start)
        set_(t, "end", end)
        set_(t, "special", False)
        set_(t, "unknown", False)
        set_(t, "score", None)
        set_(t, "rank", tid)
        return t

    return make


scored_token = _make_scored()
"""``scored_token(id, piece, token_bytes, start, end, special, unknown, score)``, fast."""
ranked_token = _make_ranked()
"""``ranked_token(id, piece, token_bytes, start, end)``: an ordinary BPE token whose rank is
its id, fast."""
