"""transformers v5's own pipelines for a model folder with only ``tokenizer.model``.

Without a ``tokenizer.json``, transformers v5 does not run SentencePiece: the
``tokenizer_class`` of ``tokenizer_config.json`` rebuilds a ``tokenizers`` pipeline from the
model's pieces. For ``LlamaTokenizer`` / ``LlamaTokenizerFast``
(``models/llama/tokenization_llama.py``) that pipeline is:

- no normalizer (the model's charsmap and ``remove_extra_whitespaces`` are ignored);
- ``Metaspace(prepend_scheme=...)`` with ``"first"`` (``legacy: false``, the default), ``"always"``
  (``legacy: true``) or ``"never"`` (``add_prefix_space: false``), ``split=False``: the ``▁``
  prefix goes only on the text at offset 0 with ``"first"`` (not after a special token),
  and never on a text that already starts with a space;
- ``BPE`` over the pieces with merges from ``generate_merges`` (every split of a piece into
  two pieces, ordered by the piece's id), ``byte_fallback``, ``fuse_unk``, no unk token;
- added tokens: the config's ``added_tokens_decoder`` and ``*_token`` entries plus the model's
  control pieces (special) and user-defined pieces (not special), all matched on the raw
  text (``normalized: false``), so each chunk between them is pre-tokenized on its own;
- post-processor ``[bos] $A [eos]`` by ``add_bos_token`` / ``add_eos_token`` (default False);
- decoder ``Replace(▁, " ")``, ``ByteFallback``, ``Fuse`` (+ ``Strip`` one leading space when
  a prefix is added).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.engine.formats.model_folder import ModelFolder
    from explorer.engine.tokenizer import Tokenizer

LLAMA_CLASSES = ("LlamaTokenizer", "LlamaTokenizerFast", "CodeLlamaTokenizer",
                 "CodeLlamaTokenizerFast")
"""``tokenizer_class`` values rebuilt as :func:`llama_pipeline` builds them."""
CONTROL, USER_DEFINED = 3, 4
"""SentencePiece piece types that transformers turns into added tokens."""


def generate_merges(vocab: dict[str, int]) -> list[list[str]]:
    """transformers' ``generate_merges(vocab)``: for each piece (in id order) every split into
    two pieces of the vocabulary, ordered by the piece's id, then the left and right lengths."""
    merges: list[tuple[str, str, int]] = []
    for piece, pid in vocab.items():
        local = [(piece[:i], piece[i:], pid) for i in range(1, len(piece))
                 if piece[:i] in vocab and piece[i:] in vocab]
        local.sort(key=lambda m: (vocab[m[0]], vocab[m[1]]))
        merges.extend(local)
    merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])))
    return [[left, right] for left, right, _ in merges]


def prepend_scheme(folder: ModelFolder) -> str:
    """``_get_prepend_scheme``: ``add_prefix_space`` (default True) and ``legacy`` (default
    False for LlamaTokenizer)."""
    if not folder.flag("add_prefix_space", True):
        return "never"
    return "always" if folder.flag("legacy", False) else "first"


def llama_pipeline(folder: ModelFolder, pieces: list[str], types: list[int]) -> Tokenizer:
    """The tokenizer ``LlamaTokenizer`` builds from ``pieces`` (and their SentencePiece
    types), as a tokenizer.json pipeline."""
    from explorer.engine.formats.hf_json import from_dict
    from explorer.engine.formats.model_folder import _added_tokens, _bos_eos_processor

    vocab: dict[str, int] = {}
    for i, piece in enumerate(pieces):
        vocab.setdefault(piece, i)
    defaults = {"unk_token": "<unk>", "bos_token": "<s>", "eos_token": "</s>"}
    added = {t["id"]: t for t in _added_tokens(folder, vocab, defaults)}
    known = {t["content"] for t in added.values()}
    for i, (piece, kind) in enumerate(zip(pieces, types, strict=True)):
        if kind in (CONTROL, USER_DEFINED) and piece not in known and vocab.get(piece) == i:
            added[i] = {"id": i, "content": piece, "single_word": False, "lstrip": False,
                        "rstrip": False, "normalized": False, "special": kind == CONTROL}
    scheme = prepend_scheme(folder)
    decoders: list[dict[str, Any]] = [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"}]
    if scheme != "never":
        decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    ids = {t["content"]: t["id"] for t in added.values()}
    obj = {
        "added_tokens": [added[i] for i in sorted(added)],
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                          "prepend_scheme": scheme, "split": False},
        "post_processor": _bos_eos_processor(folder, ids, defaults),
        "decoder": {"type": "Sequence", "decoders": decoders},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": generate_merges(vocab)},
    }
    return from_dict(obj, name=folder.root.name)
