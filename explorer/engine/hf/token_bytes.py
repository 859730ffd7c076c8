"""Per-token decoded bytes without running the whole decoder for every encode.

``decode_tokens`` runs the decoder over the whole token list; most decoder steps act on each
token alone, some look at its position (Metaspace and WordPiece treat the first token apart,
BPEDecoder the last one, no decoder puts a space before all but the first). Such a
*positional* step's output for token ``i`` depends only on its input, ``i == 0`` and
``i == n - 1``, and a chain of positional steps keeps that property, so its result can be
cached per ``(piece, first, last)``. :class:`TokenBytes` caches the longest positional prefix
of the decoder's steps and runs the remaining steps (a ``Strip`` after a join, which looks at
the first/last *non-empty* token, a nested ``Sequence``, ...) on the list as usual, exactly as
:class:`~explorer.engine.hf.decoders.SequenceDecoder` would.

:func:`make_token` is :func:`explorer.engine.encoding.scored_token` (every field given,
without the dataclass constructor's argument handling).
"""

from __future__ import annotations

from explorer.engine.encoding import scored_token
from explorer.engine.hf.decoders import (
    BPEDecoder,
    ByteFallbackDecoder,
    ByteLevelDecoder,
    Decoder,
    FuseDecoder,
    MetaspaceDecoder,
    ReplaceDecoder,
    SequenceDecoder,
    StripDecoder,
    WordPieceDecoder,
    decode_tokens,
)

_PER_TOKEN = (ByteLevelDecoder, ByteFallbackDecoder, FuseDecoder, ReplaceDecoder,
              MetaspaceDecoder, WordPieceDecoder, BPEDecoder)
_CACHE_LIMIT = 200_000


class _NoDecoder:
    """What ``decode_tokens`` does without a decoder: a space before all but the first."""

    joins = False

    def decode(self, tokens: list[bytes], joined: bool) -> list[bytes]:
        return [t if i == 0 else b" " + t for i, t in enumerate(tokens)]


def _split_steps(decoder: Decoder | None) -> tuple[list[Decoder], list[Decoder], bool]:
    """``(positional prefix, remaining steps, joined before the remaining steps)``."""
    if decoder is None:
        return [_NoDecoder()], [], False
    steps = list(decoder.steps) if type(decoder) is SequenceDecoder else [decoder]
    joined = False
    for i, step in enumerate(steps):
        positional = isinstance(step, _PER_TOKEN) or (
            isinstance(step, StripDecoder) and not joined)
        if not positional:
            return steps[:i], steps[i:], joined
        joined = joined or step.joins
    return steps, [], joined


class TokenBytes:
    """``decode_tokens(decoder, pieces)`` with the positional part cached per piece."""

    def __init__(self, decoder: Decoder | None) -> None:
        self._decoder = decoder
        self._prefix, self._tail, self._tail_joined = _split_steps(decoder)
        # Keyed by piece; one dict per position class (middle, first, last, only).
        self._mid: dict[str, bytes] = {}
        self._first: dict[str, bytes] = {}
        self._last: dict[str, bytes] = {}
        self._only: dict[str, bytes] = {}

    def _run_prefix(self, tokens: list[bytes]) -> list[bytes]:
        joined = False
        for s in self._prefix:
            tokens = s.decode(tokens, joined)
            joined = joined or s.joins
        return tokens

    def _compute(self, piece: str, cache: dict[str, bytes], count: int, index: int) -> bytes:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        value = self._run_prefix([piece.encode("utf-8")] * count)[index]
        cache[piece] = value
        return value

    def context_free(self) -> bool:
        """True when a token's decoded bytes depend only on its piece and on whether it is
        first, last or in the middle (no decoder step looks at its neighbours)."""
        return bool(self._prefix) and not self._tail

    def middle(self, piece: str) -> bytes:
        """The decoded bytes of ``piece`` between two other tokens (:meth:`context_free`
        decoders: what :meth:`decode` gives every token but the first and the last)."""
        v = self._mid.get(piece)
        return v if v is not None else self._compute(piece, self._mid, 3, 1)

    def decode(self, pieces: list[str]) -> list[bytes]:
        """Per-token decoded bytes of ``pieces``; equal to ``decode_tokens``."""
        n = len(pieces)
        if not n:
            return decode_tokens(self._decoder, pieces)
        if not self._prefix:
            return decode_tokens(self._decoder, pieces)
        if n == 1:
            p = pieces[0]
            v = self._only.get(p)
            out = [v if v is not None else self._compute(p, self._only, 1, 0)]
        else:
            mid = self._mid
            out = [b""] * n
            p = pieces[0]
            v = self._first.get(p)
            out[0] = v if v is not None else self._compute(p, self._first, 2, 0)
            for i in range(1, n - 1):
                p = pieces[i]
                v = mid.get(p)
                out[i] = v if v is not None else self._compute(p, mid, 3, 1)
            p = pieces[-1]
            v = self._last.get(p)
            out[-1] = v if v is not None else self._compute(p, self._last, 2, 1)
        joined = self._tail_joined
        for s in self._tail:
            out = s.decode(out, joined)
            joined = joined or s.joins
        return out


make_token = scored_token
"""``make_token(id, piece, token_bytes, start, end, special, unknown, score)``."""
