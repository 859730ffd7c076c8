"""SentencePiece's normalizer (``normalizer.cc``) with code-point alignment.

Steps, exactly as sentencepiece runs them:

1. At each position, a *user-defined symbol* (longest match) is copied unchanged; otherwise the
   longest rule of the precompiled charsmap (``nmt_nfkc``, ``nfkc``, ``nmt_nfkc_cf``, custom
   TSV rules, ... all arrive as a charsmap) replaces the matched characters; otherwise one
   character passes through. With no charsmap (``identity``) everything passes through.
2. ``remove_extra_whitespaces``: leading chunks that normalize to exactly ``" "`` are skipped,
   a chunk's leading spaces are dropped when the previous output ended in a space, and trailing
   space symbols are removed at the end.
3. ``add_dummy_prefix``: one space is added in front (or at the end when
   ``treat_whitespace_as_suffix``); ``escape_whitespaces`` writes every space as U+2581 ``▁``.

Every output code point maps to the original offset of the chunk that produced it
(sentencepiece's ``consumed``), so multi-character replacements share one offset and removed
characters are covered by the token before them. Construct from in-memory data with
:meth:`SentencePieceNormalizer.from_spec` (charsmap bytes + flags), as HF ``Precompiled`` +
``Metaspace`` and GGUF ``t5`` vocabularies need. Malformed UTF-8 (sentencepiece's one-byte
U+FFFD rule) cannot occur in a Python ``str`` and is not modelled.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import compress

import numpy as np

from explorer.engine.formats.vocab_cache import cached_and_built
from explorer.engine.normalizers.base import Normalized
from explorer.engine.normalizers.charsmap import PrecompiledCharsMap

SPACE_SYMBOL = "\u2581"
_SPACE_RUN = re.compile(" +")
_FAST_MIN = 256  # shorter texts: numpy's per-call costs exceed the saving
_ARRAY_TEXT_MIN = 8192  # normalize_text: from this long the array path wins (English ~8k)
_UNICODE = 0x110000
_HARD, _FIRST, _SECOND = 1, 2, 4  # roles of a character in the rules (_lookup_tables)
_UNSEEN: tuple[str, int] = ("", -1)  # (a window not in SentencePieceNormalizer._matches)
MATCHES_KEPT = 65_536
"""Longest matches a normalizer keeps (:meth:`SentencePieceNormalizer._length_changes`);
cleared past this."""


def _tables_of(state: tuple[bytes, bytes]) -> tuple[np.ndarray, np.ndarray]:
    """The arrays of :meth:`SentencePieceNormalizer._lookup_tables` from their bytes
    (``ValueError`` for bytes that are not such tables)."""
    mapping, roles = state
    if len(mapping) != 4 * _UNICODE or len(roles) != _UNICODE:
        raise ValueError("not the normalizer's lookup tables")
    return np.frombuffer(mapping, np.uint32), np.frombuffer(roles, np.uint8)


def _codes(chars: Iterable[str]) -> np.ndarray:
    """The code points of one-character strings (int64)."""
    return np.fromiter(map(ord, chars), np.int64)


def _first_solid(mapped: np.ndarray, outside: np.ndarray) -> int:
    """The first of the positions ``outside`` whose character maps to other than a space
    (``len(mapped)``: none), looked for a few thousand at a time: it is nearly always among
    the first (mapping all of them was ~1% of a warm 10 MB Unigram encode, ~10% of its
    thread in the window)."""
    step = 4096
    for a in range(0, len(outside), step):
        chunk = outside[a:a + step]
        hits = np.flatnonzero(mapped[chunk] != 32)
        if hits.size:
            return int(chunk[hits[0]])
    return len(mapped)


class SentencePieceNormalizer:
    """A configured sentencepiece normalizer; immutable and thread-safe."""

    def __init__(
        self,
        charsmap: PrecompiledCharsMap | None = None,
        *,
        name: str = "identity",
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        escape_whitespaces: bool = True,
        treat_whitespace_as_suffix: bool = False,
        user_defined_symbols: Iterable[str] = (),
    ) -> None:
        self.charsmap = charsmap if charsmap is not None and charsmap.max_key_len else None
        self.name = name
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.user_symbols = frozenset(s for s in user_defined_symbols if s)
        self._user_max = max((len(s) for s in self.user_symbols), default=0)
        # Where a rule or symbol may start; everything between passes through. A character
        # that only begins longer rules (ASCII letters begin "a" + combining accent) counts
        # only when the next character can continue some rule, so plain text runs in C.
        singles: set[str] = set(s[0] for s in self.user_symbols)
        multi_first: set[str] = set()
        seconds: set[str] = set()
        rule_singles: list[str] = []
        if self.charsmap is not None:
            # (nmt_nfkc has 224k rules: these come with the charsmap, from the cache)
            parts = self.charsmap.key_parts()
            rule_singles = list(parts[0])
            singles.update(rule_singles)
            multi_first.update(parts[1])
            seconds.update(parts[2])
        self._special = _special_pattern(singles, multi_first - singles, seconds)
        # One-character rules as a str.translate table, for texts where no longer rule and
        # no user symbol can match: then rules apply character by character. A replacement
        # holding two spaces in a row stays out (sentencepiece keeps such a run; the
        # whitespace pass would collapse it), as do the first characters of user symbols.
        user_first = {s[0] for s in self.user_symbols}
        self._table: dict[int, str] = {}
        if self.charsmap is not None:
            table = self.charsmap.single_rules()
            for key in [k for k, v in table.items() if "  " in v] + list(user_first):
                table.pop(key, None)
            self._table = str.maketrans(table)
        self._untranslatable = frozenset(singles - {chr(c) for c in self._table})
        self._multi_first_all = frozenset(multi_first)
        self._multi_start = (
            re.compile(f"{_char_class(multi_first)}(?={_char_class(seconds)})")
            if multi_first and seconds
            else None
        )
        # The same test as sets, for a whole-text check at C speed.
        self._singles = frozenset(singles)
        self._multi_first = frozenset(multi_first - singles)
        self._seconds = frozenset(seconds)
        self._any_rule_char = self._singles | self._seconds  # one test for the common case
        self._spaced_multi: bool | None = None  # see _multi_rules_spaced
        # normalize() with arrays (_normalize_arrays), with the usual whitespace options
        self._tables: tuple[np.ndarray, np.ndarray] | None = None  # see _lookup_tables
        self._matches: dict[str, tuple[str, int] | None] = {}
        """The longest rule at the start of each text as long as the longest key, met in
        :meth:`_length_changes` (decomposed letters and their marks recur: the 10 MB UDHR
        text looks up ~19k places, ~3 us each in Python)."""
        self._fast_aligned = (
            remove_extra_whitespaces
            and add_dummy_prefix
            and escape_whitespaces
            and not treat_whitespace_as_suffix
            and not self.user_symbols
        )
        # True when no rule can apply to ASCII-only text (then the check is one isascii()).
        self._ascii_passes = not any(c.isascii() for c in self._singles) and (
            not any(c.isascii() for c in self._seconds)
            or not any(c.isascii() for c in self._multi_first)
        )

    @classmethod
    def from_spec(
        cls,
        *,
        name: str = "",
        precompiled_charsmap: bytes = b"",
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        escape_whitespaces: bool = True,
        treat_whitespace_as_suffix: bool = False,
        user_defined_symbols: Iterable[str] = (),
    ) -> SentencePieceNormalizer:
        """Build from a ``NormalizerSpec``'s fields (empty charsmap = no character rules)."""
        charsmap = (
            PrecompiledCharsMap.from_bytes(precompiled_charsmap) if precompiled_charsmap else None
        )
        return cls(
            charsmap,
            name=name or ("identity" if charsmap is None else "precompiled"),
            add_dummy_prefix=add_dummy_prefix,
            remove_extra_whitespaces=remove_extra_whitespaces,
            escape_whitespaces=escape_whitespaces,
            treat_whitespace_as_suffix=treat_whitespace_as_suffix,
            user_defined_symbols=user_defined_symbols,
        )

    def _match(self, text: str, pos: int) -> tuple[str, int, bool] | None:
        """``(replacement, consumed, is_user_symbol)`` for a rule starting at ``pos``."""
        for length in range(min(self._user_max, len(text) - pos), 0, -1):
            if text[pos : pos + length] in self.user_symbols:
                return text[pos : pos + length], length, True
        if self.charsmap is not None:
            found = self.charsmap.longest_match(text, pos)
            if found is not None:
                return found[0], found[1], False
        return None

    def _chunk(self, text: str, pos: int) -> tuple[str, int]:
        found = self._match(text, pos)
        return (found[0], found[1]) if found else (text[pos], 1)

    def normalize_text(self, text: str) -> str:
        """Only the text of :meth:`normalize` (no alignment): the encode-ids fast path."""
        if len(text) >= _ARRAY_TEXT_MIN and self._fast_aligned:
            fast = self._normalize_arrays(text, aligned=False)
            if fast is not None:
                return fast.text
        if not (text.isascii() and self._ascii_passes) and not self._any_rule_char.isdisjoint(
            text
        ):
            if self._untranslatable and not self._untranslatable.isdisjoint(text):
                return self.normalize(text).text
            if (
                self._multi_start is not None
                and not self._seconds.isdisjoint(text)
                and not self._multi_first_all.isdisjoint(text)
                and self._multi_start.search(text)
            ):
                if not self._multi_rules_spaced():
                    text = self._apply_rules(text)
                else:
                    return self.normalize(text).text
            elif not self._singles.isdisjoint(text):
                # Every rule that can apply maps one character: apply them all in C.
                text = text.translate(self._table)
        # Only the whitespace rules are left.
        if self.remove_extra_whitespaces:
            body = text.lstrip(" ")
            if "  " in body:
                body = _SPACE_RUN.sub(" ", body)
            if not body:
                return ""
        else:
            body = text
            if not body:
                return ""
        if self.add_dummy_prefix and not self.treat_whitespace_as_suffix:
            body = " " + body
        space = " "
        if self.escape_whitespaces:
            body = body.replace(" ", SPACE_SYMBOL)
            space = SPACE_SYMBOL
        if self.remove_extra_whitespaces:
            body = body.rstrip(space)
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            body += space
        return body

    def _multi_rules_spaced(self) -> bool:
        """Whether a rule of two or more characters has two spaces in a row in its
        replacement (then the whitespace pass would differ from sentencepiece's; computed
        on first use)."""
        spaced = self._spaced_multi
        if spaced is None:
            rules = self.charsmap.rules if self.charsmap is not None else {}
            spaced = self._spaced_multi = any(
                "  " in value for key, value in rules.items() if len(key) > 1
            )
        return spaced

    def _apply_rules(self, text: str) -> str:
        """The charsmap's rules applied left to right, longest match first, without the
        whitespace rules or alignment (callers ensure no user symbol can match)."""
        assert self.charsmap is not None and self._special is not None
        longest_match = self.charsmap.longest_match
        search = self._special.search
        parts: list[str] = []
        pos, n = 0, len(text)
        while pos < n:
            m = search(text, pos)
            if m is None:
                parts.append(text[pos:])
                break
            start = m.start()
            if start > pos:
                parts.append(text[pos:start])
            found = longest_match(text, start)
            if found is None:
                parts.append(text[start])
                pos = start + 1
            else:
                parts.append(found[0])
                pos = start + found[1]
        return "".join(parts)

    def normalize(self, text: str) -> Normalized:
        """Normalize ``text`` the way sentencepiece does and align it with ``text``."""
        if len(text) >= _FAST_MIN and self._fast_aligned:
            fast = self._normalize_arrays(text)
            if fast is not None:
                return fast
        n = len(text)
        pos = 0
        special = self._special
        if self.remove_extra_whitespaces:  # skip heading chunks that normalize to " "
            while pos < n:
                if special is None or special.match(text, pos) is None:  # passes through
                    if text[pos] != " ":
                        break
                    pos += 1
                    continue
                rep, used = self._chunk(text, pos)
                if rep != " ":
                    break
                pos += used
        if pos >= n:
            return Normalized("", [0])  # as sentencepiece: nothing consumed
        parts: list[str] = []
        n2o: list[int] = []
        if self.add_dummy_prefix and not self.treat_whitespace_as_suffix:
            parts.append(" ")
            n2o.append(pos)
        collapse = self.remove_extra_whitespaces
        prev_space = collapse
        while pos < n:
            m = special.search(text, pos) if special is not None else None
            run_end = m.start() if m is not None else n
            if run_end > pos:  # characters that pass through unchanged
                prev_space = self._emit_run(text, pos, run_end, parts, n2o, prev_space)
                pos = run_end
                if pos >= n:
                    break
            found = self._match(text, pos)
            if found is None:
                prev_space = self._emit_run(text, pos, pos + 1, parts, n2o, prev_space)
                pos += 1
                continue
            rep, used, _ = found
            if prev_space:
                rep = rep.lstrip(" ")
            if rep:
                parts.append(rep)
                n2o.extend([pos] * len(rep))
                prev_space = rep.endswith(" ")
            if not collapse:
                prev_space = False
            pos += used
        out = "".join(parts)
        space = " "
        if self.escape_whitespaces:
            out = out.replace(" ", SPACE_SYMBOL)
            space = SPACE_SYMBOL
        consumed = n
        if collapse:
            cut = len(out) - len(out.rstrip(space))
            if cut:
                consumed = n2o[len(out) - cut]
                out = out[: len(out) - cut]
                del n2o[len(out) :]
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            out += space
            n2o.append(consumed)
        n2o.append(consumed)
        return Normalized(out, n2o)

    def _lookup_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """Per code point: its one-to-one rule's replacement (itself when none), and its
        role in the other rules (``_HARD``: a one-character key that does not map to one
        character; ``_FIRST`` / ``_SECOND``: first / second character of a longer key).
        Built on first use (5.5 MB), and kept in the vocabulary cache under the charsmap's
        digest (nmt_nfkc's took ~50 ms to build, on the path to a document's first paint)."""
        tables = self._tables
        if tables is None:
            digest = self.charsmap.digest if self.charsmap is not None else b""
            tables = self._tables = (
                cached_and_built(digest, "charsmap-tables-1", self._build_lookup_tables,
                                 _tables_of) if digest
                else _tables_of(self._build_lookup_tables()))
        return tables

    def _build_lookup_tables(self) -> tuple[bytes, bytes]:
        """The arrays of :meth:`_lookup_tables`, as bytes."""
        mapping = np.arange(_UNICODE, dtype=np.uint32)
        roles = np.zeros(_UNICODE, np.uint8)
        rules = self.charsmap.rules if self.charsmap is not None else {}
        # (array passes: nmt_nfkc's 224k rules took 0.19 s in a Python loop)
        keys, values = list(rules), list(rules.values())
        one = np.fromiter(map(len, keys), np.int64, len(keys)) == 1
        one_one = one & (np.fromiter(map(len, values), np.int64, len(values)) == 1)
        hard = one & ~one_one
        mapping[_codes(compress(keys, one_one))] = _codes(compress(values, one_one))
        roles[_codes(compress(keys, hard))] |= _HARD
        longer = list(compress(keys, ~one))  # (their first two characters, in one
        starts = np.zeros(len(longer), np.int64)  # string of them all)
        np.cumsum(np.fromiter(map(len, longer), np.int64, len(longer))[:-1], out=starts[1:])
        chars = np.frombuffer("".join(longer).encode("utf-32-le", "surrogatepass"), np.uint32)
        roles[chars[starts]] |= _FIRST
        roles[chars[starts + 1]] |= _SECOND
        return mapping.tobytes(), roles.tobytes()

    def _normalize_arrays(self, text: str, aligned: bool = True) -> Normalized | None:
        """:meth:`normalize` with arrays (None: the caller takes the general path).

        One-to-one rules are a table lookup per character. Rules that change the length (a
        longer key, or a replacement of other than one character) are found with the same
        lookups and applied one by one, left to right, longest match first, as the general
        path does; their replacements share the offset of the characters they replace.
        None when such a replacement holds two spaces in a row (sentencepiece keeps those,
        the array whitespace pass would not).

        The whitespace rules then only drop spaces: the leading ones, each one right after a
        space, the trailing ones (the first trailing one is what the text consumed). A
        replacement's leading spaces count as spaces after what came before, as in the
        general path; the dummy prefix takes the offset of the first part that does not
        normalize to exactly one space. ``aligned=False``: the text only (``norm_to_orig``
        left empty, for :meth:`normalize_text`).
        """
        mapping, roles = self._lookup_tables()
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
        # (np.take, not table[codes]: 3x faster on a window of English, whose code points
        # stay in a few cache lines of the tables)
        role = np.take(roles, codes)
        hard = (role & _HARD) != 0
        hard[:-1] |= ((role[:-1] & _FIRST) != 0) & ((role[1:] & _SECOND) != 0)
        mapped = np.take(mapping, codes)
        where = np.flatnonzero(hard)
        del role
        origins: np.ndarray | None = None
        first_solid = -1  # where the first part that is not one space starts
        if where.size:
            changes = self._length_changes(text, where.tolist())
            if changes is None:
                return None
            at, used, reps = changes
            if at:
                starts = np.array(at, np.int64)
                sizes = np.array(used, np.int64)
                # the matches do not overlap: the places they cover, as one gather
                ends = np.cumsum(sizes)
                passing = np.ones(len(codes), bool)
                passing[np.repeat(starts - (ends - sizes), sizes) + np.arange(int(ends[-1]))] = (
                    False)
                outside = np.flatnonzero(passing)
                del passing
                rep_codes = np.frombuffer("".join(reps).encode("utf-32-le", "surrogatepass"),
                                          np.uint32)
                rep_sizes = np.fromiter(map(len, reps), np.int64, len(reps))
                slot = np.repeat(np.searchsorted(outside, starts), rep_sizes)
                lone_first = _first_solid(mapped, outside)  # passing through, not a space
                mapped = np.insert(np.take(mapped, outside), slot, rep_codes)
                origins = np.insert(outside, slot, np.repeat(starts, rep_sizes))
                solid_rep = [p for p, r in zip(at, reps, strict=True) if r != " "]
                first_solid = min(lone_first, solid_rep[0] if solid_rep else len(codes))
                if first_solid == len(codes):
                    first_solid = -1
        del codes, hard  # (arrays of the text's size: a big paste is a few MB each)
        space = mapped == 32
        first_char = int(np.argmax(~space)) if not space.all() else -1
        if origins is None:
            first_solid = first_char
        if first_solid < 0:  # every part normalizes to a space: nothing is consumed
            return Normalized("", [0])
        keep = ~space
        keep[1:] |= ~space[:-1]  # a space right after anything else stays
        keep[: first_char if first_char >= 0 else len(keep)] = False
        kept_at = np.flatnonzero(keep)
        del space, keep
        kept = np.empty(len(kept_at) + 1, np.uint32)
        kept[0] = 0x2581  # the dummy prefix
        np.take(mapped, kept_at, out=kept[1:])
        del mapped
        # trailing spaces go, and so do U+2581 characters of the text (as in the general
        # path, which strips after escaping); the first one removed is what was consumed
        filled = (kept != 32) & (kept != 0x2581)
        size = len(filled) - int(np.argmax(filled[::-1])) if filled.any() else 0
        if not size:  # only the dummy prefix would be left, and it is stripped too
            return Normalized("", [first_solid])
        kept = kept[:size]
        kept += (kept == 32).astype(np.uint32) * np.uint32(0x2581 - 32)  # (spaces escaped:
        # one pass of arithmetic is ~5x a masked assignment)
        out = kept.tobytes().decode("utf-32-le", "surrogatepass")
        if not aligned:  # (the text only: no offsets, the text's size of them)
            return Normalized(out, [])
        offsets = np.empty(size + 1, np.int64)
        offsets[0] = first_solid
        offsets[1:size] = (kept_at[:size - 1] if origins is None
                           else np.take(origins, kept_at[:size - 1]))
        consumed = len(text)
        if size < len(kept_at) + 1:
            consumed = int(kept_at[size - 1] if origins is None else origins[kept_at[size - 1]])
        offsets[size] = consumed
        return Normalized(out, offsets=offsets)

    def _length_changes(
        self, text: str, candidates: list[int]
    ) -> tuple[list[int], list[int], list[str]] | None:
        """The rules applied at ``candidates`` (where a length-changing rule may start), left
        to right, longest match first, skipping what a match consumed: their positions,
        lengths and replacements. None when a replacement holds two spaces in a row."""
        charsmap = self.charsmap
        assert charsmap is not None
        longest_match, width = charsmap.longest_match, max(charsmap.max_key_len, 1)
        matches = self._matches
        if len(matches) > MATCHES_KEPT:
            matches.clear()
        at: list[int] = []
        used: list[int] = []
        reps: list[str] = []
        free = 0
        for pos in candidates:
            if pos < free:
                continue
            window = text[pos:pos + width]  # (all a match at pos can read)
            found = matches.get(window, _UNSEEN)
            if found is _UNSEEN:
                found = matches[window] = longest_match(window, 0)
            if found is None:
                continue  # passes through: no one-character rule either
            rep, length = found
            if "  " in rep:
                return None
            at.append(pos)
            used.append(length)
            reps.append(rep)
            free = pos + length
        return at, used, reps

    def _emit_run(
        self, text: str, start: int, end: int, parts: list[str], n2o: list[int], prev_space: bool
    ) -> bool:
        """Emit pass-through characters ``text[start:end]``; return the new ``prev_space``."""
        run = text[start:end]
        if not self.remove_extra_whitespaces or " " not in run:
            parts.append(run)
            n2o.extend(range(start, end))
            return False
        if "  " not in run and not (prev_space and run[0] == " "):  # nothing to collapse
            parts.append(run)
            n2o.extend(range(start, end))
            return run[-1] == " "
        last = 0
        for m in _SPACE_RUN.finditer(run):
            a, b = m.span()
            if a > last:
                parts.append(run[last:a])
                n2o.extend(range(start + last, start + a))
                prev_space = False
            if not prev_space:  # keep the first space of a run, drop the rest
                parts.append(" ")
                n2o.append(start + a)
                prev_space = True
            last = b
        if last < len(run):
            parts.append(run[last:])
            n2o.extend(range(start + last, end))
            prev_space = False
        return prev_space


def _char_class(chars: set[str]) -> str:
    """A ``[...]`` class matching any of ``chars`` (consecutive code points merged)."""
    codes = sorted(ord(c) for c in chars)
    ranges: list[tuple[int, int]] = []
    for code in codes:
        if ranges and code == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    body = "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )
    return f"[{body}]"


def _special_pattern(
    singles: set[str], multi_first: set[str], seconds: set[str]
) -> re.Pattern[str] | None:
    """Positions where a rule may apply: a one-character key, or the start of a longer key
    followed by a character that some longer key has in second place."""
    parts = []
    if singles:
        parts.append(_char_class(singles))
    if multi_first and seconds:
        parts.append(f"{_char_class(multi_first)}(?={_char_class(seconds)})")
    return re.compile("|".join(parts)) if parts else None
