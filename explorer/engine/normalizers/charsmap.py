"""SentencePiece's *precompiled charsmap*: normalization rules as a Darts double array.

The blob (``NormalizerSpec.precompiled_charsmap``, HF ``Precompiled.precompiled_charsmap``,
GGUF ``tokenizer.ggml.precompiled_charsmap``) is::

    <uint32 little-endian: trie size in bytes> <darts-clone double array> <normalized blob>

The double array maps UTF-8 keys (the text to replace) to offsets into the normalized blob,
where the replacement is a NUL-terminated UTF-8 string. Each 32-bit unit packs ``has_leaf``
(bit 8), ``label`` (low byte, bit 31 for value units), ``offset`` (bits 10.. shifted by bit 9)
and, for value units, the value (low 31 bits). A lookup XORs offsets and key bytes down the
array (``common_prefix_search`` below is darts-clone's algorithm verbatim).

For speed the array is also unpacked once into a ``dict`` of every key -> replacement
(cached with ``marshal`` in the user cache dir, keyed by the blob's digest), so
normalization is a set test per character plus a few slice lookups where a rule starts.
Only keys that are valid UTF-8 (all that sentencepiece's builders emit) are usable from
``str`` text; :attr:`PrecompiledCharsMap.rules` lists them.
"""

from __future__ import annotations

import contextlib
import hashlib
import operator
import re
import struct
import sys
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter

from explorer.engine.errors import VocabFormatError
from explorer.engine.formats.vocab_cache import cached_and_built

_LEAF_BIT = 1 << 8
_VALUE_MASK = (1 << 31) - 1
_LABEL_MASK = (1 << 31) | 0xFF
_ONE_BYTE = [bytes((b,)) for b in range(256)]
_MISSING = object()
_SURROGATE = re.compile("[\udc80-\udcff]")


def _from_parts(units: array, normalized: bytes) -> PrecompiledCharsMap:
    """:meth:`PrecompiledCharsMap.from_bytes` of the blob ``units`` and ``normalized`` came
    from (the inverse of its pickling)."""
    little = array("I", units)
    if sys.byteorder == "big":
        little.byteswap()
    size = len(little) * 4
    return PrecompiledCharsMap.from_bytes(struct.pack("<I", size) + little.tobytes() + normalized)


def _key_parts(rules: dict[str, str]) -> tuple[tuple[str, ...], tuple[str, ...],
                                                tuple[str, ...]]:
    """See :meth:`PrecompiledCharsMap.key_parts` (C-level passes over the keys)."""
    keys = list(rules)
    one = list(map((1).__eq__, map(len, keys)))
    multi = list(compress(keys, map(operator.not_, one)))
    return (tuple(compress(keys, one)), tuple(set(map(itemgetter(0), multi))),
            tuple(set(map(itemgetter(1), multi))))


def _a_dict(value: dict[str, str]) -> dict[str, str]:
    """``value`` when it is a dict (rules read from the cache), else ``TypeError``."""
    if not isinstance(value, dict):
        raise TypeError("not a rules dict")
    return value


def _cached_rules(digest: bytes, units: array, normalized: bytes) -> dict[str, str]:
    """The rules of the blob with ``digest``: from the vocabulary cache, else unpacked
    (nmt_nfkc's 224k rules take ~0.3 s to unpack; the same blob recurs across models)."""
    return cached_and_built(digest, "charsmap-rules-1",
                            lambda: _unpack_rules(units, normalized), _a_dict)


def _six(value: tuple) -> tuple:
    """``value`` when it is a tuple of six (:func:`_derived`), else ``TypeError``."""
    if not (isinstance(value, tuple) and len(value) == 6):
        raise TypeError("not the charsmap's derived parts")
    return value


def _derived(rules: dict[str, str]) -> tuple[list[str], int, list[str], list[str], list[str],
                                             list[str]]:
    """``(first characters of the keys, longest key, *key parts, the one-character keys'
    replacements)`` of ``rules``."""
    singles, multi_first, seconds = _key_parts(rules)
    return (list(set(map(itemgetter(0), rules))), max(map(len, rules), default=0),
            list(singles), list(multi_first), list(seconds), [rules[k] for k in singles])


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


@dataclass(frozen=True)
class PrecompiledCharsMap:
    """A decoded precompiled charsmap. Build with :meth:`from_bytes`."""

    units: array
    """The double array, one uint32 per unit."""
    normalized: bytes
    """The NUL-separated replacement strings the array values point into."""
    first_chars: frozenset[str] = frozenset()
    """Characters that begin some key: any other character passes through unchanged."""
    max_key_len: int = 0
    """Length in code points of the longest key."""
    digest: bytes = b""
    """SHA-256 of the blob (:meth:`from_bytes`; empty when built from rules): what derived
    tables are cached under."""
    parts: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ((), (), ())
    """:meth:`key_parts` (read from the vocabulary cache by :meth:`from_bytes`)."""
    single_values: tuple[str, ...] = ()
    """The replacements of the one-character keys (``key_parts()[0]``), in their order."""

    @property
    def rules(self) -> dict[str, str]:
        """Every rule as ``key -> replacement`` (both decoded UTF-8): read on first use
        (nmt_nfkc's 225k rules took ~0.08 s of each load, from the vocabulary cache; the
        normalizers' tables need only the one-character rules and the key parts)."""
        rules = self.__dict__.get("_rules")
        if rules is None:
            rules = _cached_rules(self.digest, self.units, self.normalized)
            object.__setattr__(self, "_rules", rules)
        return rules  # type: ignore[no-any-return]

    def key_parts(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """The one-character keys, and the first and second characters of the longer keys
        (each distinct), which a normalizer's fast paths test for."""
        return self.parts

    def single_rules(self) -> dict[str, str]:
        """The one-character rules, ``key -> replacement``."""
        return dict(zip(self.parts[0], self.single_values, strict=True))

    @classmethod
    def from_bytes(cls, blob: bytes) -> PrecompiledCharsMap:
        """Decode ``blob``; raises :class:`VocabFormatError` when it is broken."""
        if len(blob) <= 4:
            raise VocabFormatError("precompiled charsmap: blob for normalization rule is broken")
        (trie_size,) = struct.unpack_from("<I", blob)
        if trie_size >= len(blob) or trie_size % 4:
            raise VocabFormatError(
                f"precompiled charsmap: trie size {trie_size} does not fit "
                f"the {len(blob)}-byte blob"
            )
        units = array("I")
        units.frombytes(blob[4 : 4 + trie_size])
        if struct.pack("=I", 1) != struct.pack("<I", 1):  # big-endian host
            units.byteswap()
        normalized = blob[4 + trie_size :]
        digest = hashlib.sha256(blob).digest()
        unpacked: list[dict[str, str]] = []

        def rules() -> dict[str, str]:  # (a broken blob fails here, on its first load)
            if not unpacked:
                unpacked.append(_cached_rules(digest, units, normalized))
            return unpacked[0]

        # (what is derived from nmt_nfkc's 224k keys took ~0.1 s of each model's load)
        first, longest, singles, multi_first, seconds, single_values = cached_and_built(
            digest, "charsmap-derived-2", lambda: _derived(rules()), _six)
        charsmap = cls(
            units=units,
            normalized=normalized,
            first_chars=frozenset(first),
            max_key_len=longest,
            digest=digest,
            parts=(tuple(singles), tuple(multi_first), tuple(seconds)),
            single_values=tuple(single_values),
        )
        if unpacked:
            object.__setattr__(charsmap, "_rules", unpacked[0])
        return charsmap

    def __reduce__(self) -> tuple[Callable[[array, bytes], PrecompiledCharsMap],
                                  tuple[array, bytes]]:
        """Pickled as the double array and strings only (a tokenizer sent to a child
        process): nmt_nfkc's 224k unpacked rules took 0.16 s to pickle; the other side
        unpacks them again (or reads them from the vocabulary cache), as :meth:`from_bytes`."""
        return _from_parts, (self.units, self.normalized)

    def common_prefix_search(self, key: bytes) -> list[tuple[int, int]]:
        """Every ``(value, length)`` whose key is a prefix of ``key`` (darts-clone order)."""
        units = self.units
        results: list[tuple[int, int]] = []
        node_pos = _offset(units[0])
        for i, byte in enumerate(key):
            node_pos ^= byte
            if node_pos >= len(units):
                break
            unit = units[node_pos]
            if unit & _LABEL_MASK != byte:
                break
            node_pos ^= _offset(unit)
            if unit & _LEAF_BIT and node_pos < len(units):
                results.append((units[node_pos] & _VALUE_MASK, i + 1))
        return results

    def replacement_at(self, value: int) -> bytes:
        """The NUL-terminated replacement that starts at ``value`` in the normalized blob."""
        end = self.normalized.find(b"\0", value)
        return self.normalized[value : end if end >= 0 else len(self.normalized)]

    def longest_match(self, text: str, pos: int) -> tuple[str, int] | None:
        """The longest rule starting at ``text[pos]`` as ``(replacement, key_length)``, or None."""
        char = text[pos]
        if char not in self.first_chars:
            return None
        shortcut = self.__dict__.get("_shortcut")
        if shortcut is None:
            shortcut = (frozenset(self.parts[1]), frozenset(self.parts[2]), self.single_rules())
            object.__setattr__(self, "_shortcut", shortcut)
        multi_first, seconds, singles = shortcut
        if char not in multi_first or pos + 1 >= len(text) or text[pos + 1] not in seconds:
            # no longer key can start here: its first two characters would be these (a
            # 10 MB English text met ~30 such places, and read no other rule for them)
            replacement = singles.get(char)
            return None if replacement is None else (replacement, 1)
        rules = self.__dict__.get("_rules")
        if rules is None:  # (the double array itself: see _longest_in_array)
            return self._longest_in_array(text[pos : pos + self.max_key_len])
        for length in range(min(self.max_key_len, len(text) - pos), 0, -1):
            replacement = rules.get(text[pos : pos + length])
            if replacement is not None:
                return replacement, length
        return None

    def _longest_in_array(self, window: str) -> tuple[str, int] | None:
        """:meth:`longest_match` at ``window``'s start, found in the double array (what
        :attr:`rules` holds, without reading them: nmt_nfkc's 224k rules took ~0.12 s from
        the vocabulary cache on the first decomposed letter of a text, and tens of
        megabytes). A key must end at a character boundary and both it and its replacement
        must be valid UTF-8, as for :attr:`rules`."""
        key = window.encode("utf-8", "surrogatepass")
        for value, length in reversed(self.common_prefix_search(key)):
            try:
                matched = key[:length].decode("utf-8")
                replacement = self.replacement_at(value).decode("utf-8")
            except UnicodeDecodeError:
                continue
            return replacement, len(matched)
        return None


def _unpack_rules(units: array, normalized: bytes) -> dict[str, str]:
    """Walk the double array once and collect every key -> replacement.

    darts-clone gives each node a unique base (``pos ^ offset``), so a child's parent base is
    ``child_pos ^ label``. Grouping units by that base finds every node's children in one pass
    instead of probing 255 labels per node.
    """
    n = len(units)
    if n == 0:
        return {}
    children: dict[int, list[tuple[int, int]]] = {}
    for pos in range(1, n):
        unit = units[pos]
        label = unit & _LABEL_MASK
        if 0 < label < 256:
            children.setdefault(pos ^ label, []).append((label, pos))
    keys: list[bytes] = []
    values: list[str] = []
    replacements: dict[int, str | None] = {}  # value -> decoded replacement (values repeat)
    one_byte = _ONE_BYTE
    missing = _MISSING
    get_children = children.get
    root = units[0]
    # (base of a node, its key so far); only nodes with children are pushed
    stack: list[tuple[int, bytes]] = [((root >> 10) << ((root & 512) >> 6), b"")]
    pop, push = stack.pop, stack.append
    while stack:
        base, prefix = pop()
        for label, child in get_children(base, ()):
            unit = units[child]
            key = prefix + one_byte[label]
            child_base = child ^ ((unit >> 10) << ((unit & 512) >> 6))
            if child_base in children:
                push((child_base, key))
            if unit & _LEAF_BIT and child_base < n:
                value = units[child_base] & _VALUE_MASK
                replacement = replacements.get(value, missing)
                if replacement is missing:
                    end = normalized.find(b"\0", value)
                    try:
                        replacement = normalized[value:end].decode("utf-8")
                    except UnicodeDecodeError:
                        replacement = None
                    replacements[value] = replacement
                if replacement is not None:
                    keys.append(key)
                    values.append(replacement)
    return _decoded_rules(keys, values)


def _decoded_rules(keys: list[bytes], values: list[str]) -> dict[str, str]:
    """``{key.decode(): value}`` without the keys that are not valid UTF-8 (byte-level keys
    cannot match Python text; see the module docstring). One C-level decode for all keys:
    a surrogate escape marks an invalid one (valid UTF-8 never decodes to a surrogate)."""
    joined = b"\0".join(keys)
    if joined.count(b"\0") != len(keys) - 1 or not keys:
        rules: dict[str, str] = {}
        for key, value in zip(keys, values, strict=True):
            with contextlib.suppress(UnicodeDecodeError):
                rules[key.decode("utf-8")] = value
        return rules
    texts = joined.decode("utf-8", "surrogateescape").split("\0")
    rules = dict(zip(texts, values, strict=True))
    if _SURROGATE.search(joined.decode("utf-8", "surrogateescape")):
        for text in texts:
            if _SURROGATE.search(text):
                rules.pop(text, None)
    return rules
