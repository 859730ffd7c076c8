"""Text with alignment: every character knows the span of the original text it came from.

HF tokenizers keeps a ``NormalizedString`` that remembers, for each normalized character, the
original characters it came from; offsets of tokens are read through it. :class:`Aligned` is
our equivalent: ``text`` plus one ``(start, end)`` code-point span of the *original* text per
character. Inserted characters (``Prepend``, a ``Metaspace`` prefix) take the span of the
character they attach to; removed characters simply vanish; a character composed from
several originals (NFC) takes the span of the first, and a decomposition (NFKD of ``½``)
belongs to the character it came from, as in HF.

Handles: per-character mapping, filtering, unicode normalization forms with alignment,
regex/string replacement, prepend/strip, slicing. Does not handle: HF's offset "referential"
switching (we always report original offsets).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress

import numpy as np
import regex

_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_NON_ASCII_RUN = regex.compile(r"[\x00-\x7f]?[^\x00-\x7f]+")
_FEW_RESIZED = 32
""":meth:`Aligned.translate` splices the spans with list slices when at most one character
in this many changes length, else it gathers them with numpy."""


@dataclass(slots=True)
class Aligned:
    """A string and, per character, the half-open original span it stands for."""

    text: str
    starts: list[int]
    ends: list[int]

    @classmethod
    def from_original(cls, text: str, offset: int = 0) -> Aligned:
        """Identity alignment of ``text`` whose first character is original ``offset``."""
        n = len(text)
        return cls(text, list(range(offset, offset + n)), list(range(offset + 1, offset + n + 1)))

    def __len__(self) -> int:
        return len(self.text)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original span covered by characters ``start:end`` (empty ranges collapse)."""
        if start >= end:
            if start < len(self.starts):
                p = self.starts[start]
            elif self.ends:
                p = self.ends[-1]
            else:
                p = 0
            return p, p
        return self.starts[start], max(self.ends[start:end])

    def slice(self, start: int, end: int) -> Aligned:
        """Characters ``start:end`` with their alignment."""
        return Aligned(self.text[start:end], self.starts[start:end], self.ends[start:end])

    def map_chars(self, fn: Callable[[str], str]) -> Aligned:
        """Replace each character ``c`` by ``fn(c)`` (0..n characters, all with c's span)."""
        out: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        for ch, s, e in zip(self.text, self.starts, self.ends, strict=True):
            rep = fn(ch)
            if rep == ch:
                out.append(ch)
                starts.append(s)
                ends.append(e)
                continue
            out.append(rep)
            starts.extend([s] * len(rep))
            ends.extend([e] * len(rep))
        return Aligned("".join(out), starts, ends)

    def translate(self, table: Mapping[int, str]) -> Aligned:
        """Replace each character whose code point is in ``table`` by its string there
        (0..n characters, all with that character's span): :meth:`map_chars` for a map given
        per character, run with C-level passes (a per-character callback cost ~1 us a
        character, a 1 MB text a second)."""
        text = self.text
        resized = {k: len(v) for k, v in table.items() if len(v) != 1}
        where = _positions_of(text, resized) if resized else None
        if where is None or not where.size:
            return Aligned(_translated(text, table), self.starts, self.ends)  # 1 for 1
        n = len(text)
        if where.size * _FEW_RESIZED <= n:  # splice: slices between the resized characters
            same = _translated(text, {k: v for k, v in table.items() if k not in resized})
            old_starts, old_ends = self.starts, self.ends
            reps = [table[ord(text[p])] for p in where.tolist()]
            return self._spliced(same, ((p, p + 1, rep, [old_starts[p]] * len(rep),
                                         [old_ends[p]] * len(rep))
                                        for p, rep in zip(where.tolist(), reps, strict=True)))
        out = text.translate(table)
        counts = np.array([resized[c] for c in map(ord, map(text.__getitem__,
                                                              where.tolist()))], np.int64)
        if not counts.any():  # only deletions: keep the rest
            keep = np.ones(n, bool)
            keep[where] = False
            mask = keep.tolist()
            return Aligned(out, list(compress(self.starts, mask)),
                           list(compress(self.ends, mask)))
        repeat = np.ones(n, np.int64)
        repeat[where] = counts
        source = np.repeat(np.arange(n), repeat)
        return Aligned(out, np.array(self.starts, np.int64)[source].tolist(),
                       np.array(self.ends, np.int64)[source].tolist())

    def filter(self, keep: Callable[[str], bool]) -> Aligned:
        """Drop characters for which ``keep`` is false."""
        idx = [i for i, ch in enumerate(self.text) if keep(ch)]
        if len(idx) == len(self.text):
            return self
        return Aligned(
            "".join(self.text[i] for i in idx),
            [self.starts[i] for i in idx],
            [self.ends[i] for i in idx],
        )

    def drop_matching(self, char_class: regex.Pattern[str]) -> Aligned:
        """Drop every character matched by the one-character pattern ``char_class``."""
        text = self.text
        if char_class.search(text) is None:
            return self
        match = char_class.match
        return self.translate({ord(c): "" for c in set(text) if match(c)})

    def unicode_normalize(self, form: str) -> Aligned:
        """Apply NFC/NFD/NFKC/NFKD, aligning each normalization segment to its originals."""
        if unicodedata.is_normalized(form, self.text):
            return self
        if form in ("NFD", "NFKD"):
            return self._decompose(form)
        # ASCII is invariant under every form and never composes backwards, so only runs of
        # non-ASCII characters (with the one character before, their possible starter) need
        # the segment-by-segment work.
        parts: list[Aligned] = []
        pos = 0
        for m in _NON_ASCII_RUN.finditer(self.text):
            a, b = m.span()
            if pos < a:
                parts.append(self.slice(pos, a))
            norm, sources = _normalized_run(self.text[a:b], form)
            starts, ends = self.starts, self.ends
            parts.append(Aligned(norm, [starts[a + j] for j in sources],
                                 [ends[a + j] for j in sources]))
            pos = b
        if pos < len(self.text):
            parts.append(self.slice(pos, len(self.text)))
        return concat(parts)

    def _decompose(self, form: str) -> Aligned:
        """NFD or NFKD. A character that does not decompose and is a starter (combining
        class 0) stays itself, where it is: decomposition leaves it, and canonical
        reordering moves only non-starters. So only the runs of the other characters
        change, each on its own (:func:`_normalized_run`), the rest is copied by slices
        (the runs of all non-ASCII characters took ~1 us a character in a text of another
        script)."""
        text = self.text
        where = _positions_of(text, _decomposing(form, set(text)))
        if not where.size:
            return self
        cut = np.flatnonzero(np.diff(where) != 1)
        run_starts = where[np.concatenate(([0], cut + 1))].tolist()
        run_ends = (where[np.concatenate((cut, [len(where) - 1]))] + 1).tolist()
        old_starts, old_ends = self.starts, self.ends

        def runs() -> Iterator[tuple[int, int, str, list[int], list[int]]]:
            for a, b in zip(run_starts, run_ends, strict=True):
                norm, sources = _normalized_run(text[a:b], form)
                yield (a, b, norm, [old_starts[a + j] for j in sources],
                       [old_ends[a + j] for j in sources])

        return self._spliced(text, runs())

    def _spliced(self, text: str,
                 changes: Iterable[tuple[int, int, str, list[int], list[int]]]) -> Aligned:
        """``text`` (this one's length, aligned as this one) with each ``text[a:b]`` of
        ``changes`` (in order, apart) replaced by a string and its spans; what lies between
        is copied by slices."""
        old_starts, old_ends = self.starts, self.ends
        parts: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        prev = 0
        for a, b, new, new_starts, new_ends in changes:
            parts += (text[prev:a], new)
            starts += old_starts[prev:a]
            starts += new_starts
            ends += old_ends[prev:a]
            ends += new_ends
            prev = b
        parts.append(text[prev:])
        starts += old_starts[prev:]
        ends += old_ends[prev:]
        return Aligned("".join(parts), starts, ends)

    def _normalize_segments(self, form: str) -> Aligned:
        segments = _segments(self.text, form)
        out: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        for a, b in segments:
            seg = self.text[a:b]
            norm = unicodedata.normalize(form, seg)
            if norm == seg or (b - a == 1 and len(norm) == 1):  # unchanged or 1 -> 1
                out.append(norm)
                starts.extend(self.starts[a:b])
                ends.extend(self.ends[a:b])
                continue
            # Track where every output character comes from (HF's alignments): a
            # decomposition belongs to the character it decomposes; a composed character
            # belongs to the first character it was composed from.
            out.append(norm)
            for j in _sources(seg, form, norm):
                starts.append(self.starts[a + j])
                ends.append(self.ends[a + j])
        return Aligned("".join(out), starts, ends)

    def replace(self, pattern: regex.Pattern[str], content: str) -> Aligned:
        """Replace every match of ``pattern`` by ``content`` (HF ``Replace`` semantics).

        As in HF, the matched characters are removed and the replacement is inserted after
        them, so every replacement character takes the span of the match's *last* character
        (an empty match is skipped).
        """
        text = self.text
        if len(content) == 1:
            # One character for one character keeps every span (the replacement takes the
            # span of the match's last, here only, character): no alignment work, and a
            # match already equal to ``content`` changes nothing (``\p{Zs}`` -> " ").
            if not pattern.groups:  # findall gives the matched strings: C-level checks
                found = set(pattern.findall(text))
                if not found or found == {content}:
                    return self
                if {len(m) for m in found} == {1}:
                    new = pattern.sub(content.replace("\\", "\\\\"), text)
                    return Aligned(new, self.starts, self.ends)
            spans = [m.span() for m in pattern.finditer(text)]
            if not spans:
                return self
            if all(b - a == 1 for a, b in spans):
                if all(text[a] == content for a, _ in spans):
                    return self
                chars = list(text)
                for a, _ in spans:
                    chars[a] = content
                return Aligned("".join(chars), self.starts, self.ends)
        pieces: list[Aligned] = []
        pos = 0
        for m in pattern.finditer(text):
            a, b = m.span()
            if a == b:
                continue
            pieces.append(self.slice(pos, a))
            s, e = self.starts[b - 1], self.ends[b - 1]
            pieces.append(Aligned(content, [s] * len(content), [e] * len(content)))
            pos = b
        if not pieces:
            return self
        pieces.append(self.slice(pos, len(self.text)))
        return concat(pieces)

    def prepend(self, prefix: str) -> Aligned:
        """Insert ``prefix`` before the text; it takes the first character's span."""
        if not self.text or not prefix:
            return self
        s, e = self.starts[0], self.ends[0]
        n = len(prefix)
        return Aligned(prefix + self.text, [s] * n + self.starts, [e] * n + self.ends)

    def append(self, suffix: str) -> Aligned:
        """Append ``suffix``; it takes the last character's span."""
        if not self.text or not suffix:
            return self
        s, e = self.starts[-1], self.ends[-1]
        n = len(suffix)
        return Aligned(self.text + suffix, self.starts + [s] * n, self.ends + [e] * n)

    def strip(self, left: bool, right: bool) -> Aligned:
        """Remove leading and/or trailing whitespace (Unicode White_Space, as Rust's
        ``trim``; Python's ``strip`` would also remove U+001C..U+001F)."""
        text = self.text
        a, b = 0, len(text)
        if left:
            a = len(text) - len(text.lstrip(_WHITE_SPACE))
        if right:
            b = len(text.rstrip(_WHITE_SPACE))
        if a == 0 and b == len(text):
            return self
        return self.slice(a, max(a, b))


_DECOMPOSING: dict[str, dict[str, bool]] = {"NFD": {}, "NFKD": {}}
_DECOMPOSING_LIMIT = 1 << 17


def _decomposing(form: str, chars: Iterable[str]) -> list[int]:
    """The code points of ``chars`` that ``form`` (NFD or NFKD) decomposes, or that are
    not starters (remembered per character)."""
    known = _DECOMPOSING[form]
    if len(known) > _DECOMPOSING_LIMIT:
        known.clear()
    out: list[int] = []
    for c in chars:
        hot = known.get(c)
        if hot is None:
            hot = known[c] = (unicodedata.combining(c) != 0
                              or unicodedata.normalize(form, c) != c)
        if hot:
            out.append(ord(c))
    return out


def _positions_of(text: str, chars: Iterable[int]) -> np.ndarray:
    """The positions in ``text`` of the characters whose code points are ``chars``."""
    keys = np.array(sorted(chars), np.uint32)
    if not keys.size:
        return np.zeros(0, np.int64)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    at = np.minimum(np.searchsorted(keys, codes), len(keys) - 1)
    return np.flatnonzero(keys[at] == codes)


def _translated(text: str, table: Mapping[int, str]) -> str:
    """``text.translate(table)`` for a table of one character for one: a few characters
    by ``str.replace`` (C-speed scans; ``translate`` looks each character up, ~80 ns)."""
    if not table:
        return text
    if len(table) > 4 or any(chr(code) in rep for rep in table.values() for code in table):
        return text.translate(table)  # (one replacement must not be replaced again)
    for code, rep in table.items():
        text = text.replace(chr(code), rep)
    return text


@lru_cache(maxsize=1 << 16)
def _normalized_run(run: str, form: str) -> tuple[str, tuple[int, ...]]:
    """``run`` normalized and, per output character, its source index in ``run``.

    A function of the run's text alone (what ``_normalize_segments`` computes on an identity
    alignment), so repeated words cost one lookup.
    """
    a = Aligned.from_original(run)._normalize_segments(form)
    return a.text, tuple(a.starts)


def clear_normalized_runs() -> None:
    """Forget the remembered normalized runs (benchmarks measuring a cold start)."""
    _normalized_run.cache_clear()


def concat(parts: Iterable[Aligned]) -> Aligned:
    """Join aligned strings."""
    texts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for p in parts:
        texts.append(p.text)
        starts.extend(p.starts)
        ends.extend(p.ends)
    return Aligned("".join(texts), starts, ends)


def _segments(text: str, form: str) -> list[tuple[int, int]]:
    """Split ``text`` into ranges that normalize independently.

    A segment starts at a character of combining class 0; neighbouring segments are merged
    while normalizing them apart differs from normalizing them together (Hangul jamo, Indic
    two-part vowels).
    """
    bounds = [0]
    combining = unicodedata.combining
    for i in range(1, len(text)):
        if combining(text[i]) == 0:
            bounds.append(i)
    bounds.append(len(text))
    segs = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
    out: list[tuple[int, int]] = []
    norm = unicodedata.normalize
    for a, b in segs:
        if out and not text[a].isascii():  # an ASCII character never composes backwards
            pa, pb = out[-1]
            left, right = text[pa:pb], text[a:b]
            if norm(form, left + right) != norm(form, left) + norm(form, right):
                out[-1] = (pa, b)
                continue
        out.append((a, b))
    return out


# HF tracks alignment through normalization with (char, change) pairs
# (unicode-normalization-alignments): change 0 = this char stands for the next original
# char, +1 = inserted (it shares the previous char's span), -k = it also swallows the next k
# originals. Decomposition emits (first, 0), (rest, +1) per original; canonical reordering
# moves pairs; composition folds an absorbed pair into the starter (change + absorbed - 1).
# The spans are then read off positionally. We reproduce exactly that.
Change = tuple[str, int]


def _decompose_changes(seg: str, form: str) -> list[Change]:
    combining = unicodedata.combining
    out: list[Change] = []
    for c in seg:
        d = unicodedata.normalize(form, c)
        out.append((d[0], 0))
        out.extend((x, 1) for x in d[1:])
    i = 0
    while i < len(out):
        if combining(out[i][0]) == 0:
            i += 1
            continue
        j = i
        while j < len(out) and combining(out[j][0]) != 0:
            j += 1
        out[i:j] = sorted(out[i:j], key=lambda t: combining(t[0]))  # stable by class
        i = j
    return out


def _compose_pair(a: str, b: str) -> str | None:
    r = unicodedata.normalize("NFC", a + b)
    return r if len(r) == 1 else None


def _compose_changes(items: list[Change]) -> list[Change]:
    combining = unicodedata.combining
    out: list[Change] = []
    starter = -1  # index in out of the current starter
    last_class: int | None = None  # class of the last char kept after the starter
    for ch, change in items:
        cls = combining(ch)
        blocked = last_class is not None and (last_class >= cls or cls == 0)
        if starter >= 0 and not blocked:
            composed = _compose_pair(out[starter][0], ch)
            if composed is not None:
                out[starter] = (composed, out[starter][1] + change - 1)
                continue
        if cls == 0:
            starter = len(out)
            last_class = None
        else:
            last_class = cls
        out.append((ch, change))
    return out


def _sources(seg: str, form: str, norm: str) -> list[int]:
    """For every character of ``norm`` (= ``normalize(form, seg)``) its source index in seg."""
    decomp = "NFD" if form in ("NFC", "NFD") else "NFKD"
    items = _decompose_changes(seg, decomp)
    if form in ("NFC", "NFKC"):
        items = _compose_changes(items)
    last = len(seg) - 1
    if "".join(c for c, _ in items) == norm:
        srcs: list[int] = []
        ptr = 0
        for _, change in items:
            if change > 0:
                srcs.append(min(max(ptr - 1, 0), last))
            else:
                srcs.append(min(ptr, last))
                ptr += 1 - change
        return srcs
    # Fallback: positional (char i of the output stands for char i of the input).
    return [min(i, last) for i in range(len(norm))]
