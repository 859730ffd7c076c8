"""Components -> tokenizer.json objects (the inverse of :mod:`explorer.engine.hf.parse`).

Every component class of :mod:`explorer.engine.hf` has a JSON form HF ``tokenizers`` reads
back to the same behaviour. Regex sources are written as they were read (Oniguruma syntax).
"""

from __future__ import annotations

import base64
import struct
from typing import Any

from explorer.engine.errors import UnsupportedComponentError
from explorer.engine.hf import decoders as d
from explorer.engine.hf import normalizers as n
from explorer.engine.hf import pre_tokenizers as p
from explorer.engine.hf.added_tokens import AddedToken
from explorer.engine.hf.models import BPEModel, WordLevelModel, WordPieceModel
from explorer.engine.hf.pipeline import Components
from explorer.engine.hf.unigram_model import HFUnigramModel


def _pattern(source: str, is_regex: bool) -> dict[str, str]:
    return {"Regex": source} if is_regex else {"String": source}


def normalizer_json(x: Any) -> dict[str, Any] | None:
    """JSON of a normalizer (None for no normalizer)."""
    if x is None:
        return None
    if isinstance(x, n.SequenceNormalizer):
        return {"type": "Sequence", "normalizers": [normalizer_json(s) for s in x.steps]}
    if isinstance(x, n.UnicodeForm):
        return {"type": x.form}
    if isinstance(x, n.Lowercase):
        return {"type": "Lowercase"}
    if isinstance(x, n.Strip):
        return {"type": "Strip", "strip_left": x.left, "strip_right": x.right}
    if isinstance(x, n.StripAccents):
        return {"type": "StripAccents"}
    if isinstance(x, n.Replace):
        return {"type": "Replace", "pattern": _pattern(x.source, x.is_regex),
                "content": x.content}
    if isinstance(x, n.Prepend):
        return {"type": "Prepend", "prepend": x.prefix}
    if isinstance(x, n.ByteLevelNormalizer):
        return {"type": "ByteLevel"}
    if isinstance(x, n.Nmt):
        return {"type": "Nmt"}
    if isinstance(x, n.Precompiled):
        cm = x.charsmap
        trie = cm.units.tobytes()
        blob = struct.pack("<I", len(trie)) + trie + cm.normalized
        return {"type": "Precompiled",
                "precompiled_charsmap": base64.b64encode(blob).decode("ascii")}
    if isinstance(x, n.BertNormalizer):
        return {"type": "BertNormalizer", "clean_text": x.clean_text,
                "handle_chinese_chars": x.handle_chinese_chars,
                "strip_accents": x.strip_accents, "lowercase": x.lowercase}
    raise UnsupportedComponentError(f"cannot export normalizer {type(x).__name__}")


def pre_tokenizer_json(x: Any) -> dict[str, Any] | None:
    """JSON of a pre-tokenizer."""
    if x is None:
        return None
    if isinstance(x, p.SequencePre):
        return {"type": "Sequence", "pretokenizers": [pre_tokenizer_json(s) for s in x.steps]}
    if isinstance(x, p.ByteLevelPre):
        return {"type": "ByteLevel", "add_prefix_space": x.add_prefix_space,
                "trim_offsets": True, "use_regex": x.use_regex}
    if isinstance(x, p.SplitPre):
        return {"type": "Split", "pattern": _pattern(x.source, x.is_regex),
                "behavior": x.behavior, "invert": x.invert}
    if isinstance(x, p.MetaspacePre):
        return {"type": "Metaspace", "replacement": x.replacement,
                "prepend_scheme": x.prepend_scheme, "split": x.split_on_replacement}
    if isinstance(x, p.WhitespacePre):
        return {"type": "Whitespace"}
    if isinstance(x, p.CharSplitPre) and x.spec:
        return dict(x.spec)
    raise UnsupportedComponentError(f"cannot export pre-tokenizer {x.describe()}")


def decoder_json(x: Any) -> dict[str, Any] | None:
    """JSON of a decoder."""
    if x is None:
        return None
    if isinstance(x, d.SequenceDecoder):
        return {"type": "Sequence", "decoders": [decoder_json(s) for s in x.steps]}
    if isinstance(x, d.ByteLevelDecoder):
        return {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                "use_regex": True}
    if isinstance(x, d.ByteFallbackDecoder):
        return {"type": "ByteFallback"}
    if isinstance(x, d.FuseDecoder):
        return {"type": "Fuse"}
    if isinstance(x, d.StripDecoder):
        return {"type": "Strip", "content": x.content, "start": x.start, "stop": x.stop}
    if isinstance(x, d.ReplaceDecoder):
        return {"type": "Replace", "pattern": _pattern(x.source, x.is_regex),
                "content": x.content}
    if isinstance(x, d.MetaspaceDecoder):
        return {"type": "Metaspace", "replacement": x.replacement,
                "prepend_scheme": x.prepend_scheme, "split": True}
    if isinstance(x, d.WordPieceDecoder):
        return {"type": "WordPiece", "prefix": x.prefix, "cleanup": x.cleanup}
    if isinstance(x, d.BPEDecoder):
        return {"type": "BPEDecoder", "suffix": x.suffix}
    raise UnsupportedComponentError(f"cannot export decoder {x.describe()}")


def bpe_merges(model: BPEModel) -> list[list[str]]:
    """The merges in rank order as ``[left, right]`` pairs valid for HF (parts and result in
    the vocabulary); merges a GGUF file carries but that can never apply are left out."""
    out: list[list[str]] = []
    vocab = model.vocab
    for a, b, _ in model.merge_pairs():
        if a in vocab and b in vocab and model._join(a, b) in vocab:
            out.append([a, b])
    return out


def model_json(m: Any) -> dict[str, Any]:
    """JSON of a model."""
    if isinstance(m, BPEModel):
        return {"type": "BPE", "dropout": None, "unk_token": m.unk_token,
                "continuing_subword_prefix": m.prefix or None,
                "end_of_word_suffix": m.suffix or None, "fuse_unk": m.fuse_unk,
                "byte_fallback": m.byte_fallback, "ignore_merges": m.ignore_merges,
                "vocab": dict(m.vocab), "merges": bpe_merges(m)}
    if isinstance(m, HFUnigramModel):
        return {"type": "Unigram", "unk_id": m.unk_id, "vocab": [list(x) for x in m.pieces],
                "byte_fallback": m.byte_fallback}
    if isinstance(m, WordPieceModel):
        return {"type": "WordPiece", "unk_token": m.unk_token,
                "continuing_subword_prefix": m.prefix,
                "max_input_chars_per_word": m.max_chars, "vocab": dict(m.vocab)}
    if isinstance(m, WordLevelModel):
        return {"type": "WordLevel", "vocab": dict(m.vocab), "unk_token": m.unk_token}
    raise UnsupportedComponentError(f"cannot export model {type(m).__name__}")


def added_token_json(t: AddedToken) -> dict[str, Any]:
    """JSON of one added token."""
    return {"id": t.id, "content": t.content, "single_word": t.single_word,
            "lstrip": t.lstrip, "rstrip": t.rstrip, "normalized": t.normalized,
            "special": t.special}


def components_json(c: Components) -> dict[str, Any]:
    """A complete tokenizer.json object (post-processor included, no padding or truncation).

    A pre-tokenizer doing its own normalization with no HF equivalent (llama.cpp's WPM
    preprocessing) exports its nearest HF pair (``nearest_tokenizer_json()``)."""
    nearest = getattr(c.pre_tokenizer, "nearest_tokenizer_json", None)
    if nearest is not None and c.normalizer is None:
        normalizer, pre_tokenizer = nearest()
    else:
        normalizer, pre_tokenizer = (normalizer_json(c.normalizer),
                                     pre_tokenizer_json(c.pre_tokenizer))
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added_token_json(t) for t in sorted(c.added_tokens, key=lambda t: t.id)],
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": c.post_processor.to_json() if c.post_processor else None,
        "decoder": decoder_json(c.decoder),
        "model": model_json(c.model),
    }
