"""Test doubles: Tokenizer adapters over reference libraries and tiny context-sensitive models.

Only for tests of the document/worker machinery (they must not depend on which engine formats
have landed). The app itself only ever loads tokenizers through explorer.engine.formats.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from typing import Literal

from explorer.engine.encoding import Encoding, Token, byte_to_char_offsets
from explorer.engine.tokenizer import PipelineStages, Tokenizer, TokenizerInfo


def tokens_from_bytes(text: str, ids: Sequence[int], pieces: Sequence[bytes]) -> list[Token]:
    """Tokens with code-point spans from per-token bytes (partial UTF-8 shares a span)."""
    b2c = byte_to_char_offsets(text)
    out, pos = [], 0
    for i, b in zip(ids, pieces, strict=True):
        start, end = b2c[pos], b2c[pos + len(b) - 1] + 1 if b else b2c[pos]
        out.append(Token(id=i, piece=b.decode("latin-1"), token_bytes=b, start=start, end=end))
        pos += len(b)
    return out


class _Base(Tokenizer):
    name = "double"

    @property
    def info(self) -> TokenizerInfo:
        return TokenizerInfo(self.name, "test", "bpe", 100)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        raise NotImplementedError

    def id_to_token(self, token_id: int) -> Token:
        return Token(token_id, str(token_id), b"", 0, 0)

    def stages(self, text: str) -> PipelineStages:
        raise NotImplementedError


class TiktokenDouble(_Base):
    """The reference ``tiktoken`` library behind our Tokenizer interface."""

    def __init__(self) -> None:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        from explorer.bundled import resource_path

        ranks = load_tiktoken_bpe(str(resource_path("vocab", "cl100k_base.tiktoken")))
        pat = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
               r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
        # Network-free construction (tiktoken.get_encoding would download).
        self._enc = tiktoken.Encoding("cl100k_base", pat_str=pat, mergeable_ranks=ranks,
                                      special_tokens={"<|endoftext|>": 100257})
        self.name = "cl100k_base (tiktoken)"

    def encode(self, text: str, *,
               allowed_special: Literal["all"] | Collection[str] = "all") -> Encoding:
        ids = self._enc.encode(text, allowed_special="all")
        pieces = [self._enc.decode_single_token_bytes(i) for i in ids]
        return Encoding(text, tokens_from_bytes(text, ids, pieces))


class DummyPrefixDouble(_Base):
    """Words joined to a following blank-line run, plus a marker on the text's first token.

    Context-sensitive on purpose: encoding a slice gives different tokens than encoding
    the whole text, which the incremental document logic must detect and widen for.
    """

    def encode(self, text: str, *,
               allowed_special: Literal["all"] | Collection[str] = "all") -> Encoding:
        import re

        toks = []
        for n, m in enumerate(re.finditer(r"\S+\n*|\s+", text)):
            piece = m.group()
            tid = hash(piece) % 1000 + (1000 if n == 0 else 0)
            toks.append(Token(tid, piece, piece.encode(), m.start(), m.end()))
        return Encoding(text, toks)


class SlowDouble(_Base):
    """Sleeps per character (for cancellation and latest-wins tests)."""

    def __init__(self, seconds_per_char: float = 0.001) -> None:
        self._delay = seconds_per_char

    def encode(self, text: str, *,
               allowed_special: Literal["all"] | Collection[str] = "all") -> Encoding:
        time.sleep(self._delay * len(text))
        return Encoding(text, [Token(ord(c), c, c.encode(), i, i + 1) for i, c in enumerate(text)])
