"""Special-token handling with tiktoken semantics: split text around allowed specials.

``allowed_special`` ("all" or a set) decides which special strings in the text become special
tokens; the rest of the text is ordinary. ``disallowed_special`` ("all" = every special not
allowed, or a set) makes the presence of those strings an error, as tiktoken does by default.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from functools import lru_cache
from typing import Literal

import regex

from explorer.engine.errors import SpecialTokenError

AllowedSpecial = Literal["all"] | Collection[str]


@lru_cache(maxsize=64)
def _alternation(tokens: frozenset[str]) -> regex.Pattern[str] | None:
    if not tokens:
        return None
    # Longest first, so a special that is a prefix of another never wins over it.
    ordered = sorted(tokens, key=lambda s: (-len(s), s))
    return regex.compile("|".join(regex.escape(t) for t in ordered))


def resolve(
    special_tokens: Collection[str],
    allowed_special: AllowedSpecial,
    disallowed_special: AllowedSpecial,
) -> tuple[frozenset[str], frozenset[str]]:
    """The (allowed, disallowed) sets of special strings for one call."""
    known = frozenset(special_tokens)
    allowed = known if allowed_special == "all" else frozenset(allowed_special) & known
    if disallowed_special == "all":
        disallowed = known - allowed
    else:
        disallowed = frozenset(disallowed_special) & known
    return allowed, disallowed


def check_disallowed(text: str, disallowed: frozenset[str]) -> None:
    """Raise :class:`SpecialTokenError` if ``text`` contains a disallowed special token."""
    pattern = _alternation(disallowed)
    if pattern is None:
        return
    m = pattern.search(text)
    if m is not None:
        raise SpecialTokenError(
            f"text contains the special token {m.group()!r} at offset {m.start()}, which is "
            "not allowed here (allow it, or encode it as ordinary text)"
        )


def split_specials(text: str, allowed: frozenset[str]) -> Iterator[tuple[str, int, bool]]:
    """Yield ``(segment, start, is_special)`` covering ``text``; empty segments omitted."""
    pattern = _alternation(allowed)
    if pattern is None:
        if text:
            yield text, 0, False
        return
    pos = 0
    for m in pattern.finditer(text):
        if m.start() > pos:
            yield text[pos : m.start()], pos, False
        yield m.group(), m.start(), True
        pos = m.end()
    if pos < len(text):
        yield text[pos:], pos, False
