"""Export loaded tokenizers as tokenizer.json (and ``.tiktoken`` / SentencePiece ``.model``).

- Any :class:`PipelineTokenizer` (tokenizer.json, GGUF gpt2/bert/gemma4) -> tokenizer.json
  with the same components.
- A byte-level BPE with ranks (``.tiktoken``) -> tokenizer.json: merges derived from the ranks
  as HF's tiktoken converter does (every split of a token into two tokens, ordered by the
  token's rank), the split pattern rewritten so Oniguruma means what ``regex`` meant
  (possessive ``{n,m}+`` -> atomic group), specials as added tokens.
- A SentencePiece tokenizer (Unigram or BPE) -> tokenizer.json: Precompiled + whitespace
  rules + Prepend/Replace ``▁`` (as HF ships Llama); BPE merges derived from scores as HF's
  SentencePieceExtractor does. HF sums Unigram scores in float64 where sentencepiece uses
  float32, so a rare tie can still split differently.
- Byte-level BPE pipeline -> ``.tiktoken`` when ids follow merge order (rank = id).
- HF Unigram pipeline -> SentencePiece ``.model``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from explorer.engine.errors import UnsupportedComponentError
from explorer.engine.hf.onig import translate
from explorer.engine.hf.pipeline import PipelineTokenizer
from explorer.engine.hf.serialize import bpe_merges, components_json
from explorer.engine.tokenizer import Tokenizer

_SPACE = "▁"


def _special(content: str, id_: int) -> dict[str, Any]:
    return {"id": id_, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}


def _doc(**parts: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"version": "1.0", "truncation": None, "padding": None,
                           "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
                           "post_processor": None, "decoder": None}
    doc.update(parts)
    return doc


def merges_from_ranks(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """HF's tiktoken conversion: every two-token split of each token, in the token's rank order
    (then by the ranks of the parts)."""
    merges: list[tuple[int, int, int, bytes, bytes]] = []
    for token, rank in ranks.items():
        if len(token) < 2:
            continue
        local = []
        for i in range(1, len(token)):
            left, right = token[:i], token[i:]
            if left in ranks and right in ranks:
                local.append((rank, ranks[left], ranks[right], left, right))
        merges.extend(local)
    merges.sort(key=lambda m: (m[0], m[1], m[2]))
    return [(m[3], m[4]) for m in merges]


def _bytelevel_bpe_json(tok: Any) -> dict[str, Any]:
    from explorer.engine.pretokenizers.byte_level import bytes_to_piece

    ranks: dict[bytes, int] = dict(tok.vocab.bytes_to_id)
    vocab = {bytes_to_piece(b): r for b, r in ranks.items()}
    # HF renumbers added tokens that are not in the model vocabulary (from the vocab size
    # up), which would lose ids above a gap (cl100k: 100256 is unused); listing them in the
    # vocab as well keeps their ids.
    vocab.update(tok.special_tokens)
    merges = [[bytes_to_piece(a), bytes_to_piece(b)] for a, b in merges_from_ranks(ranks)]
    pattern = translate(tok.splitter.pattern, to_onig=True)
    return _doc(
        added_tokens=[_special(s, i) for s, i in sorted(tok.special_tokens.items(),
                                                         key=lambda kv: kv[1])],
        pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": False}]},
        decoder={"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                 "use_regex": True},
        model={"type": "BPE", "dropout": None, "unk_token": None,
               "continuing_subword_prefix": None, "end_of_word_suffix": None,
               "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
               "vocab": vocab, "merges": merges},
    )


def _sentencepiece_json(tok: Any) -> dict[str, Any]:
    from explorer.engine.hf.normalizers import Precompiled
    from explorer.engine.hf.serialize import normalizer_json

    model, norm = tok.model, tok.normalizer
    if getattr(norm, "treat_whitespace_as_suffix", False):
        raise UnsupportedComponentError("cannot export treat_whitespace_as_suffix to "
                                        "tokenizer.json")
    steps: list[dict[str, Any]] = []
    if getattr(norm, "charsmap", None) is not None:
        steps.append(normalizer_json(Precompiled(norm.charsmap)))  # type: ignore[arg-type]
    if getattr(norm, "remove_extra_whitespaces", False):
        steps += [{"type": "Replace", "pattern": {"Regex": "^ +| +$"}, "content": ""},
                  {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]
    # sentencepiece adds the dummy prefix even before a leading space, so Prepend + Replace
    # (what HF ships for Llama), not Metaspace (which skips text already starting with ▁).
    prefix = getattr(norm, "add_dummy_prefix", True)
    if prefix:
        steps.append({"type": "Prepend", "prepend": _SPACE})
    steps.append({"type": "Replace", "pattern": {"String": " "}, "content": _SPACE})
    specials = [_special(p, i) for p, i in sorted(tok.special_tokens.items(),
                                                  key=lambda kv: kv[1])]
    decoders: list[dict[str, Any]] = [
        {"type": "Replace", "pattern": {"String": _SPACE}, "content": " "}]
    if tok.byte_fallback:
        decoders.append({"type": "ByteFallback"})
    decoders.append({"type": "Fuse"})
    if prefix:
        decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    doc = _doc(
        added_tokens=specials,
        normalizer={"type": "Sequence", "normalizers": steps},
        decoder={"type": "Sequence", "decoders": decoders},
    )
    if model.model_type == "unigram":
        doc["model"] = {"type": "Unigram", "unk_id": model.unk_id,
                        "vocab": [[p, s] for p, s in zip(model.pieces, model.scores,
                                                         strict=True)],
                        "byte_fallback": tok.byte_fallback}
        return doc
    # SentencePiece BPE: merges from scores (HF's SentencePieceExtractor).
    vocab = {p: i for i, p in enumerate(model.pieces)}
    score = dict(zip(model.pieces, model.scores, strict=True))
    mergeable = [p for p, t in zip(model.pieces, model.types, strict=True) if t in (1, 4)]
    merges = []
    for piece in mergeable:
        for i in range(1, len(piece)):
            a, b = piece[:i], piece[i:]
            if a in vocab and b in vocab:
                merges.append((-score[piece], vocab[a], vocab[b], a, b))
    merges.sort()
    doc["model"] = {"type": "BPE", "dropout": None,
                    "unk_token": model.pieces[model.unk_id], "continuing_subword_prefix": None,
                    "end_of_word_suffix": None, "fuse_unk": True,
                    "byte_fallback": tok.byte_fallback, "ignore_merges": False,
                    "vocab": vocab, "merges": [[m[3], m[4]] for m in merges]}
    return doc


def to_tokenizer_json(tok: Tokenizer) -> dict[str, Any]:
    """A tokenizer.json object HF ``tokenizers`` loads with the same ids."""
    if isinstance(tok, PipelineTokenizer):
        return components_json(tok.c)
    from explorer.engine.bpe.tokenizer import ByteLevelBPETokenizer
    from explorer.engine.sentencepiece.tokenizer import SentencePieceTokenizer

    if isinstance(tok, ByteLevelBPETokenizer):
        return _bytelevel_bpe_json(tok)
    if isinstance(tok, SentencePieceTokenizer):
        return _sentencepiece_json(tok)
    raise UnsupportedComponentError(f"cannot export {type(tok).__name__} as tokenizer.json")


def save_tokenizer_json(tok: Tokenizer, path: str | Path) -> Path:
    """Write :func:`to_tokenizer_json` to ``path``."""
    out = Path(path)
    out.write_text(json.dumps(to_tokenizer_json(tok), ensure_ascii=False), encoding="utf-8")
    return out


def save_tiktoken_file(tok: PipelineTokenizer, path: str | Path) -> Path:
    """Write a byte-level BPE pipeline as ``.tiktoken`` ranks, where that is representable:
    the model must be a plain byte-level BPE whose ids grow with merge order."""
    from explorer.engine.formats.tiktoken_file import save_tiktoken
    from explorer.engine.hf.models import BPEModel
    from explorer.engine.pretokenizers.byte_level import piece_to_bytes

    model = tok.model
    if not isinstance(model, BPEModel) or model.prefix or model.suffix or model.byte_fallback:
        raise UnsupportedComponentError("only plain byte-level BPE can be saved as .tiktoken")
    added = {t.id for t in tok.c.added_tokens}
    try:
        ranks = {piece_to_bytes(p): i for p, i in model.vocab.items() if i not in added}
    except KeyError:
        raise UnsupportedComponentError("the vocabulary is not byte-level: no .tiktoken") from None
    # tiktoken merges by the rank of the merged token: equivalent when the multi-byte tokens
    # first appear as merge results in id order.
    merges = bpe_merges(model)
    results = [ranks.get(piece_to_bytes(model._join(a, b)), -1) for a, b in merges]
    first = list(dict.fromkeys(results))  # a token can have several merges (tiktoken-derived)
    multi = sorted(r for bt, r in ranks.items() if len(bt) > 1)
    if first != multi:
        raise UnsupportedComponentError("ids do not follow merge order: no .tiktoken")
    save_tiktoken(ranks, path)
    return Path(path)


def save_sentencepiece_file(tok: PipelineTokenizer, path: str | Path) -> Path:
    """Write an HF Unigram pipeline as a SentencePiece ``.model`` (identity normalizer)."""
    from explorer.engine.formats.sentencepiece_model import save_sentencepiece_model
    from explorer.engine.hf.unigram_model import HFUnigramModel
    from explorer.engine.unigram.model import UnigramModel

    model = tok.model
    if not isinstance(model, HFUnigramModel) or model.unk_id is None:
        raise UnsupportedComponentError("only Unigram models with an unk id can be saved as "
                                        "SentencePiece .model")
    special = {t.id for t in tok.c.added_tokens if t.special}
    types = []
    for i, p in enumerate(x for x, _ in model.pieces):
        if i == model.unk_id:
            types.append(2)
        elif i in special:
            types.append(3)
        elif model.byte_fallback and len(p) == 6 and p.startswith("<0x") and p.endswith(">"):
            types.append(6)
        else:
            types.append(1)
    um = UnigramModel([p for p, _ in model.pieces], model.scores, types, unk_id=model.unk_id)
    return save_sentencepiece_model(um, path, remove_extra_whitespaces=False)
