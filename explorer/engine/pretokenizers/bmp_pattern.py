"""The same split pattern for text without astral characters, for Python's own ``re``.

On text in many scripts the split is a third of a byte-level BPE encode, and ``regex`` runs
the known patterns at ~100 ns a character. Python's ``re`` has no ``\\p{..}`` classes, but
every class escape can be written out as the code points it holds, and ``re`` then runs
o200k's pattern 2.3x faster on the all-language UDHR text (3M characters: 0.13 against
0.30 s; cl100k 0.10 against 0.27 s; identical chunks), *as long as the classes hold no code
point past the BMP*. ``re`` keeps a big class's BMP part as a two-level bitmap (one look-up)
but its astral part as a list of ranges, tried one by one for every character that is not
in the bitmap: with the astral ranges spelled out too, ``re`` was 3-5x *slower* than
``regex`` (docs/benchmarks.md, sessions 8 and 31).

So :func:`bmp_equivalent` rewrites each class escape into the BMP code points ``regex``
itself puts in it (found by matching every one of them: ``regex``'s own Unicode version, no
table of properties assumed), written as characters and ranges, and checks the rewrite
against ``regex`` on every BMP code point in order and many in several neighbourhoods; any
difference and it is None (the caller keeps ``regex``). The checked rewrite is kept in the
vocabulary cache; compiling it costs ~0.02 s (o200k: ~12k characters), so a splitter
compiles it only once it has a long text to split
(:mod:`~explorer.engine.pretokenizers.regex_split`). Text with astral characters is split
by the twin through BMP stand-ins of the same classes (:class:`AstralProxies`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

import numpy as np
import regex

from explorer.engine.pretokenizers.ascii_pattern import rewrite_classes

__all__ = ["CACHE_KIND", "PROXY_POOL", "RUN_STEP", "AstralProxies", "bmp_equivalent", "has_astral",
           "rewrite", "samples"]

_NEVER = "[^\x00-\uffff]"  # matches no BMP character
_EVERYTHING = "[\x00-\uffff]"


def has_astral(text: str) -> bool:
    """True when ``text`` holds a code point past U+FFFF (emoji, CJK Extension B, ...):
    one it has takes two UTF-16 units (0.2 ms a 131k window; a search for one, 0.6-1.3)."""
    return len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)


CACHE_KIND = "bmp-split-pattern-v1"
"""The vocabulary cache's kind for a pattern's checked rewrite (keyed by the pattern and
``regex``'s version: its Unicode data decides the classes)."""


@cache
def bmp_equivalent(pattern: str) -> re.Pattern[str] | None:
    """``pattern`` (a ``regex`` pattern) rewritten for ``re``, valid on text without astral
    characters; None when it cannot be rewritten or the rewrite does not split
    :func:`samples` as ``regex`` does. The checked rewrite is kept in the vocabulary cache
    (making it takes ~0.07 s for o200k's pattern, compiling it ~0.02 s: each process)."""
    from explorer.engine.formats.vocab_cache import cached_by_key

    key = f"{regex.__version__}\n{pattern}".encode("utf-8", "surrogatepass")
    try:
        rewritten = cached_by_key(key, CACHE_KIND, lambda: rewrite(pattern) or "")
        return re.compile(rewritten) if isinstance(rewritten, str) and rewritten else None
    except (re.error, ValueError, RecursionError, OverflowError):
        return None


def rewrite(pattern: str) -> str | None:
    """The ``re`` source of :func:`bmp_equivalent`, checked against ``regex`` on
    :func:`samples`; None when it cannot be made or splits them differently."""
    if _case_blind_classes(pattern):
        return None
    try:
        original = regex.compile(pattern)
        rewritten = rewrite_classes(pattern, _members, _NEVER, _EVERYTHING, anchors="AZ")
        if rewritten is None:
            return None
        compiled = re.compile(rewritten)
    except (regex.error, re.error, ValueError, RecursionError, OverflowError):
        return None
    if any(_spans(compiled, text) != _spans(original, text) for text in samples(RUN_STEP)):
        return None
    return rewritten


_FLAGS = re.compile(r"\(\?([aiLmsux]*)(?:-[imsx]+)?([:)])")


def _case_blind_classes(pattern: str) -> bool:
    """True when ``pattern`` matches a class escape or a non-ASCII character without regard
    to case (global ``(?i)``, or in an ``(?i:...)`` group): ``re`` and ``regex`` may fold
    those their own ways, which the checks' samples could miss. (The known patterns'
    ``(?i:'s|'t|...)`` and ``(?i:[sdmt]|...)`` hold ASCII letters, which both fold alike:
    the tests try every BMP character after an apostrophe.)"""
    for m in _FLAGS.finditer(pattern):
        escapes = len(pattern[:m.start()]) - len(pattern[:m.start()].rstrip("\\"))
        if "i" not in m.group(1) or escapes % 2:  # (an escaped parenthesis)
            continue
        if m.group(2) == ")":
            return True
        depth, i, in_class = 1, m.end(), False
        while i < len(pattern) and depth:
            c = pattern[i]
            if c == "\\":
                if pattern[i + 1:i + 2] in tuple("pPsSdDwW"):
                    return True
                i += 2
                continue
            if not c.isascii():
                return True
            if in_class:
                in_class = c != "]"
            elif c == "[":
                in_class = True
                i += 2 if pattern[i + 1:i + 2] == "]" else 1  # (a literal ] first)
                continue
            else:
                depth += (c == "(") - (c == ")")
            i += 1
    return False


RUN_STEP = 61
"""Every this-many-th BMP code point is tried in each neighbourhood of :func:`samples` when
a rewrite is made (all of them in order too); the tests try every one (~0.7 s a pattern)."""


def samples(step: int) -> list[str]:
    """Texts a rewrite must split as ``regex`` does: every BMP code point in order, and
    every ``step``-th one (and every ASCII one) after a letter, a space, an apostrophe and a
    digit, each followed by a space."""
    every = _every_bmp()
    some = "".join(map(chr, range(128))) + every[128::step]
    return [every] + ["".join(f"{before}{c} " for c in some) for before in ("a", " ", "'", "7")]


def _spans(pattern: re.Pattern[str] | regex.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


@cache
def _every_bmp() -> str:
    """Every BMP code point in order (lone surrogates too: a text decoded with
    ``surrogateescape`` holds some)."""
    return "".join(map(chr, range(0x10000)))


@cache
def _members(escape: str) -> str:
    """The BMP code points ``regex`` puts in the class ``escape`` (e.g. ``\\p{Lu}``), as
    the inside of an ``re`` character class (runs of code points as ranges)."""
    found = "".join(regex.compile(escape).findall(_every_bmp()))
    points = np.frombuffer(found.encode("utf-32-le", "surrogatepass"), np.uint32)
    if not points.size:
        return ""
    breaks = np.flatnonzero(np.diff(points) != 1)
    firsts = np.concatenate(([points[0]], points[breaks + 1])).tolist()
    lasts = np.concatenate((points[breaks], [points[-1]])).tolist()
    return "".join(_literal(a) if a == b else f"{_literal(a)}-{_literal(b)}"
                   for a, b in zip(firsts, lasts, strict=True))


_SPECIAL_IN_CLASS = frozenset("\\]^-[")


def _literal(point: int) -> str:
    """Code point ``point`` as written in an ``re`` class: itself (``re`` parses ``\\uXXXX``
    escapes ~3x slower), escaped where the class syntax needs it, controls as ``\\xXX``."""
    c = chr(point)
    if c in _SPECIAL_IN_CLASS:
        return "\\" + c
    return f"\\x{point:02x}" if point < 0x20 or point == 0x7F else c


PROXY_POOL = ("àÀǅʰאاअ\u0301\u0903\u20dd\u0bcd٣३Ⅻ²½‿‐⁅⁆«»¡·±¢˂©\u2000\u3000\u200b\u00ad"
              "\ue000\ufdd0\u0378\u2028\u0085")
"""BMP characters tried as stand-ins for astral ones (a few of each kind a split pattern
tells apart: letters of each case, marks, digits and other numbers, punctuation, symbols,
spaces, format and private-use and unassigned code points)."""


class AstralProxies:
    """BMP stand-ins for astral characters, so that a pattern's BMP twin
    (:func:`bmp_equivalent`) splits text holding some (emoji, CJK Extension B, scripts past
    the BMP: 6 of the UDHR text's 60 windows of 131k) as ``regex`` splits the text itself
    (those windows 11 ms each against ``regex``'s 14).

    A pattern looks at a character only through its classes and its literal characters. A
    stand-in matches every class of the pattern (bracket class or class escape) exactly
    where the astral character does (both asked of ``regex``) and is none of the twin's
    literal characters in any case (an astral character is none of them either), so every
    attempt of the twin at every place matches what ``regex``'s does on the text itself:
    the chunks have the same lengths. An astral character with no stand-in in
    :data:`PROXY_POOL` (or a pattern with astral literals) leaves the text to ``regex``."""

    __slots__ = ("_signatures", "_stand_ins", "_table", "_tests")

    def __init__(self, pattern: str, twin: re.Pattern[str]) -> None:
        tokens: list[str] = []  # (the classes as the rewrite reads them)
        rewrite_classes(pattern, lambda _escape: "", _NEVER, _EVERYTHING, anchors="AZ",
                        classes=tokens)
        self._table: dict[int, str] | None = {}
        """Each astral code point met so far -> its stand-in; None: this pattern takes
        none (astral literals, a class that does not compile alone, or a twin whose
        literals cannot be read)."""
        self._signatures: dict[tuple[bool, ...], str | None] = {}
        try:
            self._tests = [regex.compile(t).fullmatch for t in dict.fromkeys(tokens)]
        except (regex.error, RecursionError, OverflowError):
            self._tests = []
            self._table = None
        literals = _literals(twin)
        if literals is None or has_astral(pattern) or "\\U" in pattern:
            self._table = None
            literals = set()
        folds = [regex.compile("(?i)" + regex.escape(chr(c))).fullmatch for c in literals]
        self._stand_ins = [c for c in PROXY_POOL
                           if ord(c) not in literals and not any(f(c) for f in folds)]

    def findall(self, twin: re.Pattern[str], text: str) -> list[str] | None:
        """``twin.findall`` of ``text`` with each astral character replaced by its
        stand-in, the chunks that hold one read from ``text`` again; None when one has no
        stand-in, or the chunks do not cover the text (a pattern that skips characters)."""
        table = self._table
        if table is None:
            return None
        # (as code points: str.translate took ~60 ns a character, 11 ms a 131k window)
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32).copy()
        where = np.flatnonzero(codes > 0xFFFF)
        points, which = np.unique(codes[where], return_inverse=True)
        stand_ins = []
        for point in points.tolist():
            stand_in = table.get(point)
            if stand_in is None:
                stand_in = self._stand_in(self._signature(chr(point)))
                if stand_in is None:
                    return None
                table[point] = stand_in
            stand_ins.append(ord(stand_in))
        codes[where] = np.array(stand_ins, np.uint32)[which]
        chunks = twin.findall(codes.tobytes().decode("utf-32-le", "surrogatepass"))
        sizes = np.fromiter(map(len, chunks), np.int64, len(chunks))
        ends = np.cumsum(sizes)
        if not len(ends) or ends[-1] != len(text):
            return None
        fixed = np.unique(np.searchsorted(ends, where, "right"))  # (chunks holding one)
        stops = np.take(ends, fixed)
        for k, chunk in zip(fixed.tolist(), map(text.__getitem__, map(
                slice, (stops - np.take(sizes, fixed)).tolist(), stops.tolist())), strict=True):
            chunks[k] = chunk
        return chunks

    def _signature(self, c: str) -> tuple[bool, ...]:
        return tuple(test(c) is not None for test in self._tests)

    def _stand_in(self, signature: tuple[bool, ...]) -> str | None:
        if signature not in self._signatures:
            self._signatures[signature] = next(
                (c for c in self._stand_ins if self._signature(c) == signature), None)
        return self._signatures[signature]


def _literals(twin: re.Pattern[str]) -> set[int] | None:
    """Every character the compiled ``twin`` matches literally outside its classes, or in a
    class without regard to case (``(?i:[sdmt])``: what the signatures, asked of the classes
    as written, do not see); None when its source cannot be parsed again or a class holds a
    range without regard to case."""
    try:
        from re import _constants, _parser  # (the parse tree: where literals are named)

        tree = _parser.parse(twin.pattern, twin.flags)
    except Exception:  # (a private module: any change there only turns stand-ins off)
        return None
    kinds = {_constants.LITERAL, _constants.NOT_LITERAL}
    found: set[int] = set()

    def parts(av: object) -> Iterator[_parser.SubPattern]:
        if isinstance(av, _parser.SubPattern):
            yield av
        elif isinstance(av, (list, tuple)):
            for item in av:
                yield from parts(item)

    def walk(sub: _parser.SubPattern, blind: bool) -> bool:
        for op, av in sub.data:
            if op in kinds:
                found.add(av)
            elif op is _constants.IN:
                if blind:
                    for item_op, item in av:
                        if item_op is _constants.LITERAL:
                            found.add(item)
                        elif item_op is not _constants.NEGATE:
                            return False
            elif op is _constants.SUBPATTERN:
                _group, add, remove, inner = av
                if not walk(inner, (blind or bool(add & re.IGNORECASE))
                            and not remove & re.IGNORECASE):
                    return False
            elif not all(walk(inner, blind) for inner in parts(av)):
                return False
        return True

    return found if walk(tree, bool(tree.state.flags & re.IGNORECASE)) else None
