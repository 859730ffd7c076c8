"""HF tokenizers decoders, kept per token so each token knows the bytes it contributes.

Supported (``type``): ByteLevel, Metaspace, WordPiece, ByteFallback, Fuse, Strip, Replace,
BPEDecoder, Sequence. Anything else raises :class:`UnsupportedComponentError`.

HF decoders turn a list of token strings into a list of strings that are finally joined;
``Fuse`` and ``ByteLevel`` join early. We keep one ``bytes`` value per token throughout
(joining is deferred to the end), so ``Token.token_bytes`` is exact; after a join point
``Strip`` acts on the first/last non-empty token, which is what stripping the joined text
does. Without a decoder HF joins tokens with spaces; so do we.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import regex

from explorer.engine.errors import UnsupportedComponentError, VocabFormatError
from explorer.engine.hf.jsonutil import opt, pattern_from_json, req
from explorer.engine.pretokenizers.byte_level import unicode_to_bytes

_BYTE_PIECE = regex.compile(rb"<0x([0-9A-Fa-f]{2})>")
# Byte-level character -> the Latin-1 character of its byte. Latin-1 characters outside the
# alphabet map to a non-Latin-1 sentinel so that such a token fails to encode and is kept
# as raw UTF-8, as HF does.
_BYTE_LEVEL_TO_LATIN1 = {
    **{c: "\U0010ffff" for c in range(256)},
    **{ord(ch): chr(b) for ch, b in unicode_to_bytes().items()},
}


class Decoder(Protocol):
    """One decoding step over per-token byte strings."""

    joins: bool
    """True when HF's version joins all tokens into one (affects later ``Strip``)."""

    def decode(self, tokens: list[bytes], joined: bool) -> list[bytes]:
        """Transform the per-token values."""
        ...

    def describe(self) -> str:
        """Short summary."""
        ...


def decode_tokens(decoder: Decoder | None, pieces: list[str]) -> list[bytes]:
    """Per-token decoded bytes of ``pieces`` (joined, they are the decoded text)."""
    tokens = [p.encode("utf-8") for p in pieces]
    if decoder is None:
        return [t if i == 0 else b" " + t for i, t in enumerate(tokens)]
    return decoder.decode(tokens, False)


@dataclass(frozen=True)
class SequenceDecoder:
    """Several decoders in order."""

    steps: tuple[Decoder, ...]
    joins: bool = False

    def decode(self, tokens: list[bytes], joined: bool) -> list[bytes]:
        for s in self.steps:
            tokens = s.decode(tokens, joined)
            joined = joined or s.joins
        return tokens

    def describe(self) -> str:
        return "Sequence[" + ", ".join(s.describe() for s in self.steps) + "]"


@dataclass(frozen=True)
class ByteLevelDecoder:
    """GPT-2 byte-level spelling back to bytes (a token with foreign chars stays as is)."""

    joins: bool = True

    def decode(self, tokens: list[bytes], joined: bool) -> list[bytes]:
        out = []
        for t in tokens:
            s = t.decode("utf-8", errors="surrogateescape")
            try:
                out.append(s.translate(_BYTE_LEVEL_TO_LATIN1).encode("latin-1"))
            except UnicodeEncodeError:  # a character outside the alphabet: keep as is
                out.append(t)
        return out

    def describe(self) -> str:
        return "ByteLevel"


@dataclass(frozen=True)
class ByteFallbackDecoder:
    """``<0xNN>`` pieces become their byte."""

    joins: bool = False

    def decode(self, tokens: list[bytes], joined: bool) -> list[bytes]:
        out = []
        for t in tokens:
            m = _BYTE_PIECE.fullmatch(t) if len(t) == 6 else None
            out.append(bytes((int(m.group(1), 16),)) if m else t)
        return out

    def describe(self) -> str:
        return "ByteFallback"


@dataclass(frozen=True)
class FuseDecoder:
    """Join all tokens (we only record that a join happened)."""

    joins: bool = True

    def decode(self, tokens: list[bytes], joined: bool) -> list[bytes]:
        return tokens

    def describe(self) -> str:
        return "Fuse"


@dataclass(frozen=True)
class StripDecoder:
    """Remove up to ``start`` leading and ``stop`` trailing ``content`` characters."""

    content: str
    start: int
    stop: int
    joins: bool = False

    def _strip(self, t: bytes, start: int, stop: int) -> bytes:
        c = self.content.encode("utf-8")
        for _ in range(start):
            if not t.startswith(c):
                break
            t = t[len(c):]
        for _ in range(stop):
            if not t.endswith(c) or not t:
                break
            t = t[: len(t) - len(c)]
        return t

    def decode(self, tokens: list[bytes], joined: bool) -> list[bytes]:
        if not joined:
            return [self._strip(t, self.start, self.stop) for t in tokens]
        out = list(tokens)
        first = next((i for i, t in enumerate(out) if t), None)
        if first is not None:
            out[first] = self._strip(out[first], self.start, 0)
        last = next((i for i in range(len(out) - 1, -1, -1) if out[i]), None)
        if last is not None:
            out[last] = self._strip(out[last], 0, self.stop)
        return out

    def describe(self) -> str:
        return f"Strip({self.content!r}, {self.start}, {self.stop})"


@dataclass(frozen=True)
class ReplaceDecoder:
    """Replace a string or regex by ``content`` inside each token."""

    pattern: regex.Pattern[str]
    source: str
    content: str
    joins: bool = False
    is_regex: bool = True

    def decode(self, tokens: list[bytes], joined: bool) -> list[bytes]:
        out = []
        for t in tokens:
            s = t.decode("utf-8", errors="surrogateescape")
            out.append(self.pattern.sub(self.content.replace("\\", "\\\\"), s)
                       .encode("utf-8", errors="surrogateescape"))
        return out

    def describe(self) -> str:
        return f"Replace({self.source!r} -> {self.content!r})"


@dataclass(frozen=True)
class MetaspaceDecoder:
    """``▁`` back to spaces; the first token loses them when a prefix was prepended."""

    replacement: str
    prepend_scheme: str
    joins: bool = False

    def decode(self, tokens: list[bytes], joined: bool) -> list[bytes]:
        rep = self.replacement.encode("utf-8")
        out = []
        for i, t in enumerate(tokens):
            if i == 0 and self.prepend_scheme != "never":
                out.append(t.replace(rep, b""))
            else:
                out.append(t.replace(rep, b" "))
        return out

    def describe(self) -> str:
        return f"Metaspace({self.replacement!r})"


_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"),
            (" n't", "n't"), (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"),
            (" 've", "'ve"), (" 're", "'re"))


@dataclass(frozen=True)
class WordPieceDecoder:
    """``##`` continuations glue to the previous token; other tokens get a space."""

    prefix: str
    cleanup: bool
    joins: bool = False

    def decode(self, tokens: list[bytes], joined: bool) -> list[bytes]:
        p = self.prefix.encode("utf-8")
        n = len(p)
        out = []
        for i, t in enumerate(tokens):
            if i:
                t = t[n:] if t.startswith(p) else b" " + t
            if self.cleanup and b" " in t:  # every cleanup pattern starts with a space
                s = t.decode("utf-8", errors="surrogateescape")
                for a, b in _CLEANUP:
                    s = s.replace(a, b)
                t = s.encode("utf-8", errors="surrogateescape")
            out.append(t)
        return out

    def describe(self) -> str:
        return f"WordPiece({self.prefix!r})"


@dataclass(frozen=True)
class BPEDecoder:
    """End-of-word ``suffix`` becomes a space (none after the last token)."""

    suffix: str
    joins: bool = False

    def decode(self, tokens: list[bytes], joined: bool) -> list[bytes]:
        s = self.suffix.encode("utf-8")
        n = len(tokens)
        return [t.replace(s, b"" if i == n - 1 else b" ") for i, t in enumerate(tokens)]

    def describe(self) -> str:
        return f"BPEDecoder({self.suffix!r})"


def has_byte_fallback(decoder: Decoder | None) -> bool:
    """True when ``decoder`` is or contains ``ByteFallback``."""
    if isinstance(decoder, ByteFallbackDecoder):
        return True
    if isinstance(decoder, SequenceDecoder):
        return any(has_byte_fallback(s) for s in decoder.steps)
    return False


def repair_byte_runs(pieces: list[str]) -> list[str]:
    """HF ``ByteFallback``: a run of ``<0xNN>`` pieces whose bytes are not valid UTF-8
    becomes one U+FFFD per piece (valid runs are left for the decoder)."""
    out = list(pieces)
    i, n = 0, len(out)
    while i < n:
        if not _BYTE_PIECE.fullmatch(out[i].encode("utf-8")):
            i += 1
            continue
        j = i
        while j < n and _BYTE_PIECE.fullmatch(out[j].encode("utf-8")):
            j += 1
        data = bytes(int(p[3:5], 16) for p in out[i:j])
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            out[i:j] = ["\ufffd"] * (j - i)
        i = j
    return out


def decoder_from_json(obj: Any) -> Decoder | None:
    """Build the decoder of a tokenizer.json ``decoder`` value."""
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise VocabFormatError("tokenizer.json: 'decoder' must be an object or null")
    kind = req(obj, "type", str, "decoder")
    if kind == "Sequence":
        steps = [decoder_from_json(o) for o in req(obj, "decoders", list, "Sequence")]
        return SequenceDecoder(tuple(s for s in steps if s is not None))
    if kind == "ByteLevel":
        return ByteLevelDecoder()
    if kind == "ByteFallback":
        return ByteFallbackDecoder()
    if kind == "Fuse":
        return FuseDecoder()
    if kind == "Strip":
        start, stop = opt(obj, "start", int, 0, "Strip"), opt(obj, "stop", int, 0, "Strip")
        content = req(obj, "content", str, "Strip")
        if start < 0 or stop < 0 or len(content) != 1:
            raise VocabFormatError("tokenizer.json: Strip decoder needs one content character "
                                   "and non-negative start/stop")
        return StripDecoder(content, start, stop)
    if kind == "Replace":
        spec = req(obj, "pattern", dict, "Replace")
        pattern, source = pattern_from_json(spec, "Replace")
        return ReplaceDecoder(pattern, source, req(obj, "content", str, "Replace"),
                              is_regex="Regex" in spec)
    if kind == "Metaspace":
        scheme = opt(obj, "prepend_scheme", str, None, "Metaspace")
        if scheme is None:
            add = opt(obj, "add_prefix_space", bool, True, "Metaspace")
            scheme = "always" if add else "never"
        return MetaspaceDecoder(opt(obj, "replacement", str, "▁", "Metaspace"), scheme)
    if kind == "WordPiece":
        return WordPieceDecoder(opt(obj, "prefix", str, "##", "WordPiece"),
                                opt(obj, "cleanup", bool, True, "WordPiece"))
    if kind == "BPEDecoder":
        return BPEDecoder(opt(obj, "suffix", str, "</w>", "BPEDecoder"))
    raise UnsupportedComponentError(f"unsupported decoder {kind!r}")
