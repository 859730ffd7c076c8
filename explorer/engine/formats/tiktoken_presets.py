"""Presets for ``.tiktoken`` rank files: the split pattern and special tokens of each known
encoding (r50k, p50k, p50k_edit, cl100k, o200k, qwen), and detection of the preset from the ranks.

A ``.tiktoken`` file holds only ranks, so the pattern and specials must come from here.
Detection compares the number of ranks and a few fingerprint ranks with the published files;
an unknown file gets no preset (the caller falls back to the cl100k pattern, no specials).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from explorer.engine.errors import VocabFormatError
from explorer.engine.pretokenizers import patterns

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True)
class TiktokenPreset:
    """Everything a ``.tiktoken`` file lacks to be a tokenizer."""

    name: str
    """Short name (``cl100k``) used by ``--preset``."""
    encoding_name: str
    """tiktoken's name (``cl100k_base``)."""
    pattern: str
    special_tokens: dict[str, int]
    n_ranks: int
    """Number of ranks in the published file."""
    fingerprint: dict[int, bytes] = field(default_factory=dict)
    """A few rank -> token bytes pairs of the published file."""
    detectable: bool = True
    """False for a preset sharing another's ranks (p50k_edit): chosen only by name."""

    def matches(self, ranks: Mapping[bytes, int], id_to_bytes: list[bytes | None]) -> bool:
        """True when ``ranks`` look like this preset's published file."""
        if not self.detectable or len(ranks) != self.n_ranks:
            return False
        return all(r < len(id_to_bytes) and id_to_bytes[r] == b
                   for r, b in self.fingerprint.items())


_QWEN_SPECIALS = {
    s: 151643 + i
    for i, s in enumerate(("<|endoftext|>", "<|im_start|>", "<|im_end|>",
                           *(f"<|extra_{k}|>" for k in range(205))))
}

PRESETS: dict[str, TiktokenPreset] = {
    p.name: p
    for p in (
        TiktokenPreset("r50k", "r50k_base", patterns.R50K, {ENDOFTEXT: 50256}, 50256,
                       {256: b" t", 1000: b"ale", 50255: b" gazed"}),
        TiktokenPreset("p50k", "p50k_base", patterns.P50K, {ENDOFTEXT: 50256}, 50280,
                       {256: b" t", 1000: b"ale", 50280: b" " * 25}),
        TiktokenPreset("p50k_edit", "p50k_edit", patterns.P50K,
                       {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282,
                        FIM_SUFFIX: 50283},
                       50280, {256: b" t", 1000: b"ale", 50280: b" " * 25}, detectable=False),
        TiktokenPreset("cl100k", "cl100k_base", patterns.CL100K,
                       {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259,
                        FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
                       100256, {256: b"  ", 1000: b"indow", 100255: b" Conveyor"}),
        TiktokenPreset("o200k", "o200k_base", patterns.O200K,
                       {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
                       199998, {256: b"  ", 1000: b".l", 199997: b" cocos"}),
        TiktokenPreset("qwen", "qwen", patterns.QWEN2, _QWEN_SPECIALS, 151643,
                       {256: b"  ", 1000: b"atus", 151642: b"\xe2\xbd\x97"}),
    )
}
"""Known presets by short name."""

_ALIASES = {p.encoding_name: p.name for p in PRESETS.values()} | {"gpt2": "r50k", "qwen2": "qwen"}


def get_preset(name: str) -> TiktokenPreset:
    """The preset called ``name`` (short or tiktoken name); VocabFormatError when unknown."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    preset = PRESETS.get(key)
    if preset is None:
        raise VocabFormatError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
    return preset


def detect_preset(ranks: Mapping[bytes, int],
                  id_to_bytes: list[bytes | None]) -> TiktokenPreset | None:
    """The preset whose published ranks these are, or None."""
    for preset in PRESETS.values():
        if preset.matches(ranks, id_to_bytes):
            return preset
    return None
