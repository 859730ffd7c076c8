"""Which GGUF tokens llama.cpp treats as special in text, beyond their ``token_type``.

llama.cpp's ``llama_vocab::impl::load`` (``src/llama-vocab.cpp``, "auto-detect special tokens
by text") overrides the type of "control-looking" tokens: a token whose text is in one of the
lists below becomes CONTROL even when the file says NORMAL ("control-looking token ... was not
control-type; its type will be overridden"). With ``parse_special=true`` every CONTROL,
USER_DEFINED and UNKNOWN token is then split out of the text. The rules, as in llama.cpp
(the version vendored by llama-cpp-python 0.3.36):

- every token whose text is in the end-of-generation list (:data:`EOG_TEXTS`, which contains
  every end-of-turn and end-of-message text as well) becomes CONTROL;
- for each fill-in-the-middle role (prefix, suffix, middle, pad, repo, file separator) whose id
  is not given by the metadata (``tokenizer.ggml.fim_*_token_id``, or the deprecated
  ``prefix``/``suffix``/``middle_token_id``), one token with a text of that role's list becomes
  CONTROL. llama.cpp takes the first one of its hash map; when a vocabulary has several
  candidates for one role we take the lowest id (no real vocabulary we know of has two);
- ``<|channel|>``, ``<|message|>``, ``<|start|>``, ``<|constrain|>`` become USER_DEFINED
  (gpt-oss: always rendered).
"""

from __future__ import annotations

from itertools import compress
from typing import Any

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
SPECIAL_TYPES = (UNKNOWN, CONTROL, USER_DEFINED)
"""Token types llama.cpp's ``tokenize(..., parse_special=true)`` splits out of the text."""

EOG_TEXTS = frozenset((
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<｜end▁of▁sentence｜>", "[e~[",
))
"""llama.cpp's end-of-generation texts (every one is made CONTROL)."""

FIM_TEXTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # role: (metadata keys giving its id, candidate texts)
    "pre": (("fim_pre_token_id", "prefix_token_id"),
            ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>",
             "▁<PRE>", "<|code_prefix|>", "<|prefix|>")),
    "suf": (("fim_suf_token_id", "suffix_token_id"),
            ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>",
             "▁<SUF>", "<|code_suffix|>", "<|suffix|>")),
    "mid": (("fim_mid_token_id", "middle_token_id"),
            ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>",
             "▁<MID>", "<|code_middle|>", "<|middle|>")),
    "pad": (("fim_pad_token_id",), ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]")),
    "rep": (("fim_rep_token_id",),
            ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>")),
    "sep": (("fim_sep_token_id",), ("<|file_sep|>",)),
}
"""llama.cpp's fill-in-the-middle texts by role."""

USER_DEFINED_TEXTS = frozenset(("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"))


def _has_id(meta: dict[str, Any], keys: tuple[str, ...], n: int) -> bool:
    for key in keys:
        value = meta.get("tokenizer.ggml." + key)
        if type(value) is int and 0 <= value < n:
            return True
    return False


def special_indices(tokens: list[str], types: list[int]) -> list[int]:
    """The ids of the non-empty UNKNOWN, CONTROL and USER_DEFINED tokens, which llama.cpp
    with ``parse_special`` splits out of the text (C-level passes: 262k tokens)."""
    special = frozenset(SPECIAL_TYPES)
    return [i for i in compress(range(len(tokens)), map(special.__contains__, types))
            if tokens[i]]


def llama_cpp_types(meta: dict[str, Any], tokens: list[str], types: list[int]) -> list[int]:
    """``types`` with llama.cpp's text-based overrides applied (see the module docstring);
    ``meta`` holds the ``tokenizer.*`` metadata."""
    out = list(types)
    n = len(tokens)
    first = dict(zip(tokens, range(n), strict=True))  # (token_to_id: the last id of a text)
    for t in EOG_TEXTS:
        i = first.get(t)
        if i is not None and out[i] != CONTROL:
            out[i] = CONTROL
    for keys, texts in FIM_TEXTS.values():
        if _has_id(meta, keys, n):
            continue
        found = sorted(first[t] for t in texts if t in first)
        if found and out[found[0]] != CONTROL:
            out[found[0]] = CONTROL
    for t in USER_DEFINED_TEXTS:
        if t in first:
            out[first[t]] = USER_DEFINED
    return out
