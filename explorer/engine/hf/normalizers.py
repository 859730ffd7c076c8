"""HF tokenizers normalizers, with alignment to the original text.

Supported (``type`` in tokenizer.json): Sequence, NFC, NFD, NFKC, NFKD, Lowercase, Strip,
StripAccents, Replace, Prepend, Precompiled, BertNormalizer, ByteLevel, Nmt. Anything else is
refused by :func:`normalizer_from_json` with :class:`UnsupportedComponentError`.

Each normalizer maps an :class:`Aligned` string to a new one; alignment rules are in
:mod:`explorer.engine.hf.normalized`. ``Precompiled`` follows HF: each extended grapheme
cluster shorter than 6 bytes is looked up whole in the charsmap, otherwise each character.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any, Protocol

import regex

from explorer.engine.errors import UnsupportedComponentError, VocabFormatError
from explorer.engine.hf.jsonutil import opt, pattern_from_json, req
from explorer.engine.hf.mark_tables import bert_nonspacing_marks, marks
from explorer.engine.hf.normalized import Aligned, concat
from explorer.engine.hf.unicode_props import is_bert_control, is_chinese_char, is_whitespace
from explorer.engine.normalizers.charsmap import PrecompiledCharsMap
from explorer.engine.pretokenizers.byte_level import bytes_to_unicode


class Normalizer(Protocol):
    """One normalization step."""

    def normalize(self, text: Aligned) -> Aligned:
        """Return the normalized text with alignment."""
        ...

    def describe(self) -> str:
        """A short human-readable summary (for ``info`` and the pipeline view)."""
        ...


@dataclass(frozen=True)
class SequenceNormalizer:
    """Apply several normalizers in order."""

    steps: tuple[Normalizer, ...]

    def normalize(self, text: Aligned) -> Aligned:
        for step in self.steps:
            text = step.normalize(text)
        return text

    def describe(self) -> str:
        return "Sequence[" + ", ".join(s.describe() for s in self.steps) + "]"


@dataclass(frozen=True)
class UnicodeForm:
    """NFC, NFD, NFKC or NFKD."""

    form: str

    def normalize(self, text: Aligned) -> Aligned:
        return text.unicode_normalize(self.form)

    def describe(self) -> str:
        return self.form


@dataclass(frozen=True)
class Lowercase:
    """Unicode lowercase (``İ`` becomes two characters, as in Rust)."""

    def normalize(self, text: Aligned) -> Aligned:
        lower = text.text.lower()
        if lower == text.text:
            return text
        # str.lower() applies the final-sigma rule (Σ -> ς at a word end); HF lowercases
        # each character on its own (Σ -> σ), so texts with Σ go character by character.
        if len(lower) == len(text.text) and "Σ" not in text.text:
            return Aligned(lower, text.starts, text.ends)  # lower() never shrinks: 1 -> 1
        return text.translate({ord(c): c.lower() for c in set(text.text) if c.lower() != c})

    def describe(self) -> str:
        return "Lowercase"


@dataclass(frozen=True)
class Strip:
    """Strip leading/trailing whitespace."""

    left: bool
    right: bool

    def normalize(self, text: Aligned) -> Aligned:
        return text.strip(self.left, self.right)

    def describe(self) -> str:
        return f"Strip(left={self.left}, right={self.right})"


@dataclass(frozen=True)
class StripAccents:
    """Remove combining marks (any ``M*`` category of HF's table), HF ``StripAccents``."""

    def normalize(self, text: Aligned) -> Aligned:
        return text.drop_matching(marks())

    def describe(self) -> str:
        return "StripAccents"


@dataclass(frozen=True)
class Replace:
    """Replace a literal string or a regex by ``content``."""

    pattern: regex.Pattern[str]
    source: str
    content: str
    is_regex: bool = True

    def normalize(self, text: Aligned) -> Aligned:
        return text.replace(self.pattern, self.content)

    def describe(self) -> str:
        return f"Replace({self.source!r} -> {self.content!r})"


@dataclass(frozen=True)
class Prepend:
    """Prepend a string to non-empty text."""

    prefix: str

    def normalize(self, text: Aligned) -> Aligned:
        return text.prepend(self.prefix)

    def describe(self) -> str:
        return f"Prepend({self.prefix!r})"


@dataclass(frozen=True)
class ByteLevelNormalizer:
    """Respell every byte of the UTF-8 text in the GPT-2 byte-level alphabet."""

    def normalize(self, text: Aligned) -> Aligned:
        table = bytes_to_unicode()
        return text.translate({ord(c): "".join(table[b] for b in c.encode("utf-8"))
                               for c in set(text.text)})

    def describe(self) -> str:
        return "ByteLevel"


_NMT_REMOVED = frozenset(
    [*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F])
_NMT_SPACE = frozenset(
    [0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF,
     0xFFFD])
_NMT_REMOVED_CHAR = regex.compile(
    "[" + "".join(regex.escape(chr(c)) for c in sorted(_NMT_REMOVED)) + "]")
_NMT_SPACES = dict.fromkeys(_NMT_SPACE, " ")  # (one character for one: the same spans)
_NMT_ANY = regex.compile(
    "[\x01-\x1f\x7f\x8f\x9f\u1680\u200b-\u200f\u2028\u2029\u2581\ufeff\ufffd]")


@dataclass(frozen=True)
class Nmt:
    """sentencepiece's NMT rules (HF ``Nmt``): drop C0 controls, map odd spaces to ' '."""

    def normalize(self, text: Aligned) -> Aligned:
        if not _NMT_ANY.search(text.text):
            return text
        # (whole-text passes: a character at a time was ~1.2 s per MB of text with line
        # breaks, each of which the rules make a space)
        return text.drop_matching(_NMT_REMOVED_CHAR).translate(_NMT_SPACES)

    def describe(self) -> str:
        return "Nmt"


_GRAPHEME = regex.compile(r"\X")


@dataclass(frozen=True)
class Precompiled:
    """SentencePiece precompiled charsmap, applied per grapheme as HF does."""

    charsmap: PrecompiledCharsMap

    def normalize(self, text: Aligned) -> Aligned:
        rules = self.charsmap.rules
        if not rules:
            return text
        s = text.text
        hot = _hot_pattern(self.charsmap)
        # Only the graphemes around characters outside printable ASCII, or one-character
        # rules, can change: a grapheme of printable ASCII is one character, and no rule
        # of more characters applies to less than a grapheme. Two printable ASCII
        # characters always have a grapheme break between them, so each hot run widened
        # by one character each side is cut into graphemes alone, and the rest is copied
        # as it is (English text went through 1.1M one-character slices per MB).
        # (Runs one character apart share that character's grapheme maybe: one region.)
        regions: list[list[int]] = []
        for m in hot.finditer(s):
            a, b = max(m.start() - 1, 0), min(m.end() + 1, len(s))
            if regions and a < regions[-1][1]:
                regions[-1][1] = b
            else:
                regions.append([a, b])
        if not regions:
            return text
        parts: list[Aligned] = []
        done = 0
        for a, b in regions:
            if a > done:
                parts.append(text.slice(done, a))
            self._graphemes(text, a, b, rules, parts)
            done = b
        if done < len(s):
            parts.append(text.slice(done, len(s)))
        return concat(parts)

    @staticmethod
    def _graphemes(text: Aligned, a: int, b: int, rules: dict[str, str],
                   parts: list[Aligned]) -> None:
        """The rules applied to ``text[a:b]`` grapheme by grapheme (HF's way), appended to
        ``parts`` (``a`` and ``b`` are grapheme boundaries)."""
        s = text.text
        for m in _GRAPHEME.finditer(s, a, b):
            ga, gb = m.span()
            g = m.group()
            if len(g.encode("utf-8")) < 6:
                rep = prefix_rule(rules, g)
                if rep is not None:
                    parts.append(_replaced(text, ga, gb, rep))
                    continue
            for i in range(ga, gb):
                rep = rules.get(s[i])
                parts.append(_replaced(text, i, i + 1, rep) if rep is not None
                             else text.slice(i, i + 1))

    def describe(self) -> str:
        return "Precompiled"


def prefix_rule(rules: dict[str, str], grapheme: str) -> str | None:
    """What HF's ``Precompiled`` replaces a short grapheme with: the replacement of the
    shortest rule that *begins* the grapheme (its double array's common-prefix search,
    first result), so ``ﬁ`` + a combining acute becomes ``fi``, the mark dropped."""
    for k in range(1, len(grapheme) + 1):
        rep = rules.get(grapheme[:k])
        if rep is not None:
            return rep
    return None


_HOT: dict[bytes, regex.Pattern[str]] = {}


def _hot_pattern(charsmap: PrecompiledCharsMap) -> regex.Pattern[str]:
    """Runs of characters outside printable ASCII or with a one-character rule (one
    compiled pattern per charsmap)."""
    pattern = _HOT.get(charsmap.digest) if charsmap.digest else None
    if pattern is None:
        ascii_rules = "".join(regex.escape(c) for c in charsmap.key_parts()[0]
                              if " " <= c <= "~")
        pattern = regex.compile(f"(?:[^ -~]|[{ascii_rules}])+" if ascii_rules else "[^ -~]+")
        if charsmap.digest:
            _HOT[charsmap.digest] = pattern
    return pattern


def _replaced(text: Aligned, a: int, b: int, rep: str) -> Aligned:
    """``text[a:b]`` replaced by ``rep``, aligned as HF does: replacement char i stands for
    original char i; surplus originals are dropped, surplus replacements repeat the last."""
    if len(rep) == b - a:
        return Aligned(rep, text.starts[a:b], text.ends[a:b])
    last = b - a - 1
    idx = [a + min(i, last) for i in range(len(rep))]
    return Aligned(rep, [text.starts[j] for j in idx], [text.ends[j] for j in idx])


# Fast paths: text without these characters is left unchanged by clean_text / CJK padding.
_NEEDS_CLEAN = regex.compile(r"[^\S ]|[\p{C}\ufffd]")
_MAYBE_CJK = regex.compile(r"[\u3400-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")


@dataclass(frozen=True)
class BertNormalizer:
    """BERT: clean control characters, space out CJK, strip accents, lowercase."""

    clean_text: bool
    handle_chinese_chars: bool
    strip_accents: bool | None
    lowercase: bool

    def normalize(self, text: Aligned) -> Aligned:
        clean = self.clean_text and _NEEDS_CLEAN.search(text.text) is not None
        pad = self.handle_chinese_chars and _MAYBE_CJK.search(text.text) is not None
        if clean or pad:
            # Each step maps characters one by one, and none makes a character another
            # step maps: one table for the distinct characters of the text does them all.
            table: dict[int, str] = {}
            for c in set(text.text):
                if clean and (c in "\0\ufffd" or is_bert_control(c)):
                    table[ord(c)] = ""
                elif clean and c != " " and is_whitespace(c):
                    table[ord(c)] = " "
                elif pad and is_chinese_char(c):
                    table[ord(c)] = f" {c} "
            if table:
                text = text.translate(table)
        strip = self.lowercase if self.strip_accents is None else self.strip_accents
        if strip and not text.text.isascii():  # ASCII: NFD and Mn removal change nothing
            text = text.unicode_normalize("NFD")
            text = text.drop_matching(bert_nonspacing_marks())
        if self.lowercase:
            text = Lowercase().normalize(text)
        return text

    def describe(self) -> str:
        return f"BertNormalizer(lowercase={self.lowercase})"


def normalizer_from_json(obj: Any) -> Normalizer | None:
    """Build the normalizer described by a tokenizer.json ``normalizer`` value."""
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise VocabFormatError("tokenizer.json: 'normalizer' must be an object or null")
    kind = req(obj, "type", str, "normalizer")
    if kind == "Sequence":
        steps = [normalizer_from_json(o) for o in req(obj, "normalizers", list, "Sequence")]
        return SequenceNormalizer(tuple(s for s in steps if s is not None))
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return UnicodeForm(kind)
    if kind == "Lowercase":
        return Lowercase()
    if kind == "Strip":
        return Strip(opt(obj, "strip_left", bool, True, "Strip"),
                     opt(obj, "strip_right", bool, True, "Strip"))
    if kind == "StripAccents":
        return StripAccents()
    if kind == "Replace":
        spec = req(obj, "pattern", dict, "Replace")
        pattern, source = pattern_from_json(spec, "Replace")
        return Replace(pattern, source, req(obj, "content", str, "Replace"), "Regex" in spec)
    if kind == "Prepend":
        return Prepend(req(obj, "prepend", str, "Prepend"))
    if kind == "ByteLevel":
        return ByteLevelNormalizer()
    if kind == "Nmt":
        return Nmt()
    if kind == "Precompiled":
        raw = opt(obj, "precompiled_charsmap", str, "", "Precompiled")
        if raw == "":
            return SequenceNormalizer(())
        try:
            blob = base64.b64decode(raw, validate=True)
        except (binascii.Error, TypeError, ValueError):
            raise VocabFormatError("tokenizer.json: Precompiled charsmap is not base64") from None
        return Precompiled(PrecompiledCharsMap.from_bytes(blob))
    if kind == "BertNormalizer":
        w = "BertNormalizer"
        return BertNormalizer(
            clean_text=opt(obj, "clean_text", bool, True, w),
            handle_chinese_chars=opt(obj, "handle_chinese_chars", bool, True, w),
            strip_accents=opt(obj, "strip_accents", bool, None, w),
            lowercase=opt(obj, "lowercase", bool, True, w),
        )
    raise UnsupportedComponentError(f"unsupported normalizer {kind!r}")
