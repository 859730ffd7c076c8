"""llama.cpp's byte-level BPE pre-tokenizers, chosen by GGUF ``tokenizer.ggml.pre``.

Each preset is a list of regexes applied in turn, every one splitting the pieces left by the
previous one into matches and the gaps between them (HF ``Split`` with ``Isolated``), then the
GPT-2 byte-level respelling. The regexes are those llama.cpp uses (``llama-vocab.cpp``,
``llm_tokenizer_bpe``), which are the tokenizer.json regexes of the original models with
``(?i:...)`` spelled out. ``ignore_merges`` marks presets where a pre-token already in the
vocabulary is emitted whole (Llama 3 and relatives).

Not handled: presets whose llama.cpp implementation is custom C++ rather than a regex
(``kimi-k2``, ``afmoe``, ``superbpe``) and the SPM-style ``gemma4``/``sarvam-moe`` (handled
separately in :mod:`explorer.engine.formats.gguf_file`).
"""

from __future__ import annotations

from dataclasses import dataclass

_CONTRACTIONS = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
LLAMA3 = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2 = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN35 = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# Cased letters (Lu/Ll/Lt); canonical singletons (U+1F7D, U+1FBE, U+2126, U+212A...) are
# escaped so that no editor or tool normalizes them into other code points.
DEEPSEEK_LLM_LETTERS = (
    r"\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚ"
    r"Ḁ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1F7Dᾀ-ᾴᾶ-ᾼ\u1FBEῂ-ῄῆ-ῌῐ-\u1FD3ῖ-\u1FDBῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212A-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄ"
    r"Ⰰ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+"
)
CJK_HANGUL = r"[一-龥ࠀ-一가-퟿]+"
GPT4O = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    + _CONTRACTIONS
    + r"?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    + _CONTRACTIONS
    + r"?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
TEKKEN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
BLOOM = r" ?[^(\s|.,!?…。，、।۔،)]+"


@dataclass(frozen=True)
class BpePreset:
    """A llama.cpp byte-level BPE pre-tokenizer."""

    regexes: tuple[str, ...]
    ignore_merges: bool = False


_GROUPS: list[tuple[tuple[str, ...], BpePreset]] = [
    (("default",), BpePreset((r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"))),
    (
        (
            "llama3",
            "llama-v3",
            "llama-bpe",
            "falcon3",
            "falcon-h1",
            "pixtral",
            "midm-2.0",
            "lfm2",
            "jina-v5-nano",
        ),
        BpePreset((LLAMA3,), ignore_merges=True),
    ),
    (("dbrx", "smaug-bpe", "glm4", "chatglm-bpe"), BpePreset((LLAMA3,))),
    (
        ("deepseek-llm",),
        BpePreset(
            (
                r"[\r\n]",
                DEEPSEEK_LLM_LETTERS,
                r"\s?[!-/:-~！-／：-～‘-‟　-。]+",
                r"\s+$",
                CJK_HANGUL,
                r"\p{N}+",
            )
        ),
    ),
    (("deepseek-coder",), BpePreset((r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", CJK_HANGUL, r"\p{N}"))),
    (
        ("deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"),
        BpePreset(
            (
                r"\p{N}{1,3}",
                r"[一-龥぀-ゟ゠-ヿ]+",
                r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
                r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            )
        ),
    ),
    (("falcon",), BpePreset((r"[\p{P}\$\+<=>\^~\|`]+", GPT2, r"[0-9][0-9][0-9]"))),
    (
        (
            "starcoder",
            "refact",
            "command-r",
            "smollm",
            "codeshell",
            "exaone",
            "minerva-7b",
            "mellum2",
        ),
        BpePreset((r"\p{N}", GPT2)),
    ),
    (
        (
            "gpt-2",
            "phi-2",
            "jina-es",
            "jina-de",
            "gigachat",
            "jina-v2-es",
            "jina-v2-de",
            "a.x-4.0",
            "mellum",
            "modern-bert",
            "mpt",
            "olmo",
            "jais",
            "trillion",
            "granite-docling",
            "jina-v1-en",
            "jina-v2-code",
            "roberta-bpe",
            "exaone4",
        ),
        BpePreset((GPT2,)),
    ),
    (
        (
            "qwen2",
            "deepseek-r1-qwen",
            "kormo",
            "f2llmv2",
            "stablelm2",
            "megrez",
            "hunyuan",
            "solar-open",
            "grok-2",
        ),
        BpePreset((QWEN2,)),
    ),
    (("qwen35",), BpePreset((QWEN35,))),
    (("poro-chat", "bloom", "gpt3-finnish"), BpePreset((BLOOM,))),
    (("viking",), BpePreset((BLOOM, r"\p{N}"))),
    (("tekken",), BpePreset((TEKKEN,), ignore_merges=True)),
    (("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"), BpePreset((GPT4O,))),
    (
        ("seed-coder",),
        BpePreset(
            (
                _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}"
                r"| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+",
            )
        ),
    ),
    (
        ("ufakzeka",),
        BpePreset(
            (
                r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+",
            )
        ),
    ),
    (
        ("bailingmoe", "bailingmoe2", "llada-moe"),
        BpePreset(
            (
                r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+",
            )
        ),
    ),
]

BPE_PRESETS: dict[str, BpePreset] = {name: p for names, p in _GROUPS for name in names}
"""Every supported ``tokenizer.ggml.pre`` value of ``gpt2`` vocabularies."""
