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

Without a ``tokenizer_class`` (or ``TokenizersBackend``) it follows the model's own settings
instead (:func:`proto_pipeline`); ``GemmaTokenizer`` has :func:`gemma_pipeline`,
``T5Tokenizer`` :func:`t5_pipeline`. Other classes (``XLNetTokenizer``, ``AlbertTokenizer``...)
have pipelines of their own that are not modelled: the folder then loads as plain
SentencePiece and ``info`` says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.engine.formats.model_folder import ModelFolder
    from explorer.engine.tokenizer import Tokenizer

LLAMA_CLASSES = ("LlamaTokenizer", "LlamaTokenizerFast", "CodeLlamaTokenizer",
                 "CodeLlamaTokenizerFast")
"""``tokenizer_class`` values rebuilt as :func:`llama_pipeline` builds them."""
GEMMA_CLASSES = ("GemmaTokenizer", "GemmaTokenizerFast")
"""``tokenizer_class`` values rebuilt as :func:`gemma_pipeline` builds them."""
T5_CLASSES = ("T5Tokenizer", "T5TokenizerFast")
"""``tokenizer_class`` values rebuilt as :func:`t5_pipeline` builds them."""
GENERIC_CLASSES = ("", "TokenizersBackend", "PreTrainedTokenizerFast")
"""``tokenizer_class`` values (none included) rebuilt by :func:`proto_pipeline`."""
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


def llama_pipeline(folder: ModelFolder, proto: Any) -> Tokenizer:
    """The tokenizer ``LlamaTokenizer`` builds from the SentencePiece ``proto``'s pieces, as a
    tokenizer.json pipeline."""
    from explorer.engine.formats.hf_json import from_dict
    from explorer.engine.formats.model_folder import _bos_eos_processor

    pieces = [p.piece for p in proto.pieces]
    types = [p.type for p in proto.pieces]
    vocab = {piece: i for i, piece in enumerate(pieces)}
    defaults = {"unk_token": "<unk>", "bos_token": "<s>", "eos_token": "</s>"}
    added = _specials(folder, vocab, pieces, types, defaults)
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


def _specials(folder: ModelFolder, vocab: dict[str, int], pieces: list[str], types: list[int],
              defaults: dict[str, str]) -> dict[int, dict[str, Any]]:
    """The added tokens: the config's, its ``*_token`` entries (``defaults`` for missing
    ones), and the model's control (special) and user-defined (not special) pieces, all
    matched on the raw text."""
    from explorer.engine.formats.model_folder import _added_tokens

    added = {t["id"]: t for t in _added_tokens(folder, vocab, defaults)}
    known = {t["content"] for t in added.values()}
    for i, (piece, kind) in enumerate(zip(pieces, types, strict=True)):
        if kind in (CONTROL, USER_DEFINED) and piece not in known and vocab.get(piece) == i:
            added[i] = {"id": i, "content": piece, "single_word": False, "lstrip": False,
                        "rstrip": False, "normalized": False, "special": kind == CONTROL}
    return added


def proto_pipeline(folder: ModelFolder, proto: Any) -> Tokenizer:
    """What transformers v5 builds for a ``tokenizer.model`` folder without a model-specific
    ``tokenizer_class`` (``SpmConverter.build_tokenizer_from_spm_proto``): the model's own
    normalizer spec (charsmap, extra-whitespace removal, ``▁`` escaping), a dummy prefix by
    ``Metaspace`` (``legacy``, default True: on every chunk between added tokens, doubled
    before a leading space as SentencePiece does; else only at offset 0), user-defined pieces
    isolated, BPE merges ranked by piece score (or the Unigram model), the added tokens of
    :func:`_specials` and ``[bos] $A [eos]`` by ``add_bos_token`` / ``add_eos_token``."""
    import base64
    import re

    from explorer.engine.formats.hf_json import from_dict
    from explorer.engine.formats.model_folder import _bos_eos_processor

    pieces = [p.piece for p in proto.pieces]
    types = [p.type for p in proto.pieces]
    trainer, spec = proto.trainer_spec, proto.normalizer_spec
    vocab = {piece: i for i, piece in enumerate(pieces)}
    defaults = {key: value for key, value, wanted in (
        ("bos_token", trainer.bos_piece or "<s>", trainer.bos_id >= 0),
        ("eos_token", trainer.eos_piece or "</s>", trainer.eos_id >= 0),
        ("unk_token", trainer.unk_piece or "<unk>", trainer.unk_id >= 0)) if wanted}
    added = _specials(folder, vocab, pieces, types, defaults)
    legacy = folder.flag("legacy", True)
    steps: list[dict[str, Any]] = []
    if spec.precompiled_charsmap:
        steps.append({"type": "Precompiled", "precompiled_charsmap":
                      base64.b64encode(spec.precompiled_charsmap).decode("ascii")})
    if spec.remove_extra_whitespaces:
        steps += [{"type": "Replace", "pattern": {"Regex": r"\A +| +\z"}, "content": ""},
                  {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]
    if spec.escape_whitespaces:
        steps.append({"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"})
    if spec.add_dummy_prefix and legacy:
        steps.append({"type": "Replace", "pattern": {"Regex": "\\A\u2581"},
                      "content": "\u2581\u2581"})
    user_defined = [p for p, t in zip(pieces, types, strict=True) if t == USER_DEFINED]
    pre: list[dict[str, Any]] = []
    if spec.add_dummy_prefix:
        pre.append({"type": "Metaspace", "replacement": "\u2581",
                    "prepend_scheme": "always" if legacy else "first", "split": False})
    if user_defined:
        pattern = "|".join(re.escape(p) for p in sorted(user_defined, key=len, reverse=True))
        pre.append({"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated",
                    "invert": False})
    decoders: list[dict[str, Any]] = [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}]
    if trainer.byte_fallback:
        decoders.append({"type": "ByteFallback"})
    if spec.add_dummy_prefix:
        decoders += [{"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]
    elif trainer.byte_fallback:
        decoders.append({"type": "Fuse"})
    if trainer.model_type == 1:  # UNIGRAM
        model: dict[str, Any] = {
            "type": "Unigram", "unk_id": trainer.unk_id, "byte_fallback": trainer.byte_fallback,
            "vocab": [[p.piece, p.score] for p in proto.pieces]}
    else:
        normal = {p.piece: (p.score, i) for i, p in enumerate(proto.pieces) if p.type == 1}
        ranked = sorted((-rank[0], rank[1], piece[:k], piece[k:])
                        for piece, rank in normal.items() for k in range(1, len(piece))
                        if piece[:k] in normal and piece[k:] in normal)
        model = {"type": "BPE", "dropout": None, "unk_token": trainer.unk_piece,
                 "continuing_subword_prefix": None, "end_of_word_suffix": None,
                 "fuse_unk": True, "byte_fallback": trainer.byte_fallback,
                 "ignore_merges": bool(user_defined), "vocab": vocab,
                 "merges": [[a, b] for _, _, a, b in ranked]}
    ids = {t["content"]: t["id"] for t in added.values()}
    obj = {
        "added_tokens": [added[i] for i in sorted(added)],
        "normalizer": {"type": "Sequence", "normalizers": steps},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": pre} if pre else None,
        "post_processor": _bos_eos_processor(folder, ids, defaults),
        "decoder": {"type": "Sequence", "decoders": decoders},
        "model": model,
    }
    return from_dict(obj, name=folder.root.name)


def gemma_pipeline(folder: ModelFolder, proto: Any) -> Tokenizer:
    """The tokenizer ``GemmaTokenizer`` (``models/gemma/tokenization_gemma.py``) builds from
    the ``proto``'s pieces: normalizer ``Replace(" ", "▁")`` and no dummy prefix, BPE with
    merges from :func:`generate_merges`, byte fallback, ``unk_token``; specials default to
    ``<bos>``/``<eos>``/``<unk>``/``<pad>``/``<mask>``."""
    from explorer.engine.formats.hf_json import from_dict
    from explorer.engine.formats.model_folder import _bos_eos_processor

    pieces = [p.piece for p in proto.pieces]
    types = [p.type for p in proto.pieces]
    vocab = {piece: i for i, piece in enumerate(pieces)}
    defaults = {"unk_token": "<unk>", "bos_token": "<bos>", "eos_token": "<eos>",
                "pad_token": "<pad>", "mask_token": "<mask>"}
    added = _specials(folder, vocab, pieces, types, defaults)
    ids = {t["content"]: t["id"] for t in added.values()}
    obj = {
        "added_tokens": [added[i] for i in sorted(added)],
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        "pre_tokenizer": {"type": "Split", "pattern": {"String": " "},
                          "behavior": "MergedWithPrevious", "invert": False},
        "post_processor": _bos_eos_processor(folder, ids, defaults),
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"}]},
        "model": {"type": "BPE", "dropout": None,
                  "unk_token": folder.token("unk_token") or "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": generate_merges(vocab)},
    }
    return from_dict(obj, name=folder.root.name)


def t5_pipeline(folder: ModelFolder, proto: Any) -> Tokenizer:
    """The tokenizer ``T5Tokenizer`` (``models/t5/tokenization_t5.py`` with
    ``T5Converter.convert_from_spm``) builds: the pieces and their scores plus
    ``<extra_id_99>``..``<extra_id_0>`` appended (``extra_ids``, default 100) as a Unigram
    model whose unknown id is always 2, the model's charsmap, ``WhitespaceSplit`` then
    ``Metaspace`` (prefix always), and always ``$A </s>`` as post-processor (the class sets it
    after the config's ``add_bos_token`` / ``add_eos_token``, which are thus ignored)."""
    import base64

    from explorer.engine.formats.hf_json import from_dict

    extra = folder.config.get("extra_ids", 100)
    extra = extra if type(extra) is int and 0 <= extra <= 10000 else 100
    scored = [[p.piece, p.score] for p in proto.pieces]
    scored += [[f"<extra_id_{i}>", 0.0] for i in range(extra - 1, -1, -1)]
    pieces = [p for p, _ in scored]
    types = [p.type for p in proto.pieces] + [CONTROL] * extra
    vocab = {piece: i for i, piece in enumerate(pieces)}
    defaults = {"unk_token": "<unk>", "eos_token": "</s>", "pad_token": "<pad>"}
    added = _specials(folder, vocab, pieces, types, defaults)
    ids = {t["content"]: t["id"] for t in added.values()}
    eos = {"</s>": {"id": "</s>", "ids": [vocab.get("</s>", ids.get("</s>", 2))],
                    "tokens": ["</s>"]}}
    post = {"type": "TemplateProcessing", "special_tokens": eos,
            "single": [{"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}}]}
    charsmap = proto.normalizer_spec.precompiled_charsmap
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                 "split": True}
    obj = {
        "added_tokens": [added[i] for i in sorted(added)],
        "normalizer": {"type": "Precompiled", "precompiled_charsmap":
                       base64.b64encode(charsmap).decode("ascii")} if charsmap else None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"}, metaspace]},
        "post_processor": post,
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": 2, "byte_fallback": False, "vocab": scored},
    }
    return from_dict(obj, name=folder.root.name)
