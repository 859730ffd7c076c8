"""What llama.cpp adds around the text of a GGUF vocabulary (``add_special``).

llama.cpp's ``llama_vocab::impl::load`` and ``tokenize`` (``src/llama-vocab.cpp``) decide it
in three steps, reproduced here:

1. Defaults by ``tokenizer.ggml.model``: ``llama`` (SentencePiece BPE): BOS 1, EOS 2,
   ``add_bos`` on, ``add_eos`` off; ``bert`` (WordPiece): BOS 101 (``[CLS]``), SEP 102;
   ``gpt2`` (byte-level BPE): BOS = EOS = 11, ``add_bos`` off except for the pre-tokenizers
   ``llama3``/``llama-bpe``/... , ``tekken`` and ``chameleon``; ``t5`` (Unigram): EOS 1, no BOS,
   ``add_eos`` on; ``gemma4``: no default ids. A default id outside the vocabulary is dropped.
2. The metadata override them: ``tokenizer.ggml.bos_token_id`` / ``eos_token_id`` /
   ``seperator_token_id`` (when inside the vocabulary) and ``tokenizer.ggml.add_bos_token`` /
   ``add_eos_token``; Gemma 4 always adds BOS. A flag asking for a token without an id makes
   llama.cpp refuse the file.
3. ``tokenize(text, add_special=true)``: BPE, SentencePiece and Unigram vocabularies put BOS
   before and EOS after the text by their flags; BERT always puts ``[CLS]`` before and ``[SEP]``
   after (its flags are not consulted).

The ``.inp``/``.out`` test vectors of llama.cpp are encoded without ``add_special``; this is the
rule for the other case.
"""

from __future__ import annotations

from typing import Any

from explorer.engine.hf.post_processors import AddSpecialPost

KEY = "tokenizer.ggml."
LLAMA3_PRE = ("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
              "lfm2", "jina-v5-nano")
"""``tokenizer.ggml.pre`` values for which llama.cpp turns ``add_bos`` on by default."""
BOS_PRE = (*LLAMA3_PRE, "tekken", "chameleon")

_DEFAULTS: dict[str, tuple[dict[str, int | None], bool, bool]] = {
    # model: (default ids, add_bos, add_eos)
    "llama": ({"bos": 1, "eos": 2, "sep": None}, True, False),
    "bert": ({"bos": 101, "eos": None, "sep": 102}, True, False),
    "gpt2": ({"bos": 11, "eos": 11, "sep": None}, False, False),
    "t5": ({"bos": None, "eos": 1, "sep": None}, False, True),
    "gemma4": ({"bos": None, "eos": None, "sep": None}, False, False),
}
_ID_KEYS = {"bos": "bos_token_id", "eos": "eos_token_id", "sep": "seperator_token_id"}


def _flag(meta: dict[str, Any], key: str) -> bool | None:
    value = meta.get(KEY + key)
    return value if isinstance(value, bool) else None


def gguf_add_special(meta: dict[str, Any], tokens: list[str]) -> AddSpecialPost | None:
    """llama.cpp's ``add_special`` tokens for the vocabulary described by ``meta`` (the
    ``tokenizer.*`` metadata) with the pieces ``tokens``; None for an unknown model."""
    model = meta.get(KEY + "model")
    if model not in _DEFAULTS:
        return None
    defaults, add_bos, add_eos = _DEFAULTS[model]
    pre = meta.get(KEY + "pre") or ""
    n = len(tokens)
    why: list[str] = []
    if model == "gpt2" and pre in BOS_PRE:
        add_bos = True
        why.append(f"pre '{pre}' adds BOS by default")
    ids: dict[str, int | None] = {}
    for name, default in defaults.items():
        value = meta.get(KEY + _ID_KEYS[name])
        if type(value) is int and 0 <= value < n:
            ids[name] = value
        else:
            ids[name] = default if default is not None and default < n else None
    for name, key in (("bos", "add_bos_token"), ("eos", "add_eos_token")):
        value = _flag(meta, key)
        if value is not None:
            if name == "bos":
                add_bos = value
            else:
                add_eos = value
            why.append(f"{KEY}{key} = {str(value).lower()}")
    if model == "gemma4" and not add_bos:
        add_bos = True
        why.append("Gemma 4 always adds BOS")
    if not why:
        why.append(f"no add_bos/add_eos keys: the default for '{model}' vocabularies")
    rule = "llama.cpp: " + "; ".join(why)

    def piece(i: int | None) -> tuple[int, str] | None:
        return None if i is None else (i, tokens[i])

    if model == "bert":  # WPM: [CLS] text [SEP] whatever the flags say
        wanted = (("bos", True, "bos_token_id"), ("sep", True, "seperator_token_id"))
        rule = "llama.cpp: BERT vocabularies always get [CLS] before and [SEP] after"
    else:
        wanted = (("bos", add_bos, "bos_token_id"), ("eos", add_eos, "eos_token_id"))
    for name, on, key in wanted:
        if on and ids[name] is None:
            flag = "add_" + name + "_token"
            return AddSpecialPost((), (), rule, f"{KEY}{flag} is true, but {KEY}{key} is not "
                                  "set (llama.cpp refuses this vocabulary)")
    before, after = wanted
    prefix = tuple(p for p in [piece(ids[before[0]]) if before[1] else None] if p)
    suffix = tuple(p for p in [piece(ids[after[0]]) if after[1] else None] if p)
    return AddSpecialPost(prefix, suffix, rule)
