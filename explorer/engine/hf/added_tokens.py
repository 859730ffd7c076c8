"""Added and special tokens, split out of the text before the model, as HF does.

HF matches added tokens leftmost-longest (Aho-Corasick) in two passes: tokens with
``normalized: false`` on the original text, then (after normalizing the rest) tokens with
``normalized: true`` on the normalized text, their contents normalized first. Flags:
``single_word`` (skip a match touching a word character), ``lstrip``/``rstrip`` (the token
swallows neighbouring whitespace). ``allowed_special`` restricts which *special* tokens are
recognised (non-special added tokens always are).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal

import regex

from explorer.engine.errors import VocabFormatError
from explorer.engine.hf.jsonutil import opt, req


@dataclass(frozen=True)
class AddedToken:
    """One entry of tokenizer.json ``added_tokens``."""

    id: int
    content: str
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = False
    special: bool = False

    @classmethod
    def from_json(cls, obj: Any) -> AddedToken:
        """Parse one ``added_tokens`` entry."""
        if not isinstance(obj, dict):
            raise VocabFormatError("tokenizer.json: added_tokens entries must be objects")
        w = "added_tokens[]"
        content = req(obj, "content", str, w)
        special = opt(obj, "special", bool, False, w)
        id_ = req(obj, "id", int, w)
        if id_ < 0:
            raise VocabFormatError(f"tokenizer.json: added token {content!r} has id {id_}")
        return cls(
            id=id_,
            content=content,
            single_word=opt(obj, "single_word", bool, False, w),
            lstrip=opt(obj, "lstrip", bool, False, w),
            rstrip=opt(obj, "rstrip", bool, False, w),
            normalized=opt(obj, "normalized", bool, not special, w),
            special=special,
        )


Piece = tuple[int, int, AddedToken | None]
"""``(start, end, token)``: a range of the text, ``token`` None for plain text."""


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


class AddedTokenMatcher:
    """Finds the added tokens of one pass (normalized or not)."""

    def __init__(self, tokens: list[AddedToken], content_of: Callable[[AddedToken], str]) -> None:
        self.by_content: dict[str, AddedToken] = {}
        for t in tokens:
            c = content_of(t)
            if c:
                self.by_content.setdefault(c, t)
        contents = sorted(self.by_content, key=len, reverse=True)
        self.pattern = (regex.compile("|".join(regex.escape(c) for c in contents))
                        if contents else None)

    def split(self, text: str, allowed: Literal["all"] | Collection[str]) -> list[Piece]:
        """Cut ``text`` into plain ranges and added-token ranges (HF ``find_matches``)."""
        if self.pattern is None or not text:
            return [(0, len(text), None)]
        out: list[Piece] = []
        pos = 0
        for m in self.pattern.finditer(text):
            tok = self.by_content[m.group()]
            if tok.special and allowed != "all" and tok.content not in allowed:
                continue
            start, stop = m.span()
            if tok.single_word and ((start > 0 and _is_word(text[start - 1])) or (
                    stop < len(text) and _is_word(text[stop]))):
                continue
            if tok.lstrip:
                s = start
                while s > 0 and text[s - 1].isspace():
                    s -= 1
                start = max(s, pos)
            if tok.rstrip:
                while stop < len(text) and text[stop].isspace():
                    stop += 1
            if pos < start:
                out.append((pos, start, None))
            out.append((start, stop, tok))
            pos = stop
        if pos != len(text):
            out.append((pos, len(text), None))
        return out
