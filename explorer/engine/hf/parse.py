"""tokenizer.json (HF tokenizers) -> :class:`Components`, with clear errors.

Malformed JSON, a missing key or a wrong type raises :class:`VocabFormatError` naming the
place; a component we do not implement raises :class:`UnsupportedComponentError` naming it.
Nothing is silently approximated. The post-processor is the exception: one we cannot run is
kept and only raises when ``encode(..., add_special_tokens=True)`` asks for it.
"""

from __future__ import annotations

from typing import Any

from explorer.engine.errors import UnsupportedComponentError, VocabFormatError
from explorer.engine.hf.added_tokens import AddedToken
from explorer.engine.hf.decoders import decoder_from_json
from explorer.engine.hf.jsonutil import opt, parse_json_text, req
from explorer.engine.hf.models import BPEModel, Model, WordLevelModel, WordPieceModel
from explorer.engine.hf.normalizers import normalizer_from_json
from explorer.engine.hf.pipeline import Components
from explorer.engine.hf.post_processors import post_processor_from_json
from explorer.engine.hf.pre_tokenizers import pre_tokenizer_from_json
from explorer.engine.hf.unigram_model import HFUnigramModel


def loads(data: str | bytes, where: str = "tokenizer.json") -> dict[str, Any]:
    """Parse JSON text into the top-level object, or raise VocabFormatError."""
    obj = parse_json_text(data, where)
    if not isinstance(obj, dict):
        raise VocabFormatError(f"{where}: the top level must be a JSON object")
    return obj


def _vocab_dict(obj: dict[str, Any], where: str) -> dict[str, int]:
    vocab = req(obj, "vocab", dict, where)
    for k, v in vocab.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise VocabFormatError(f"tokenizer.json: {where}.vocab[{k!r}] is not a token id")
    return vocab


def _merges(obj: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in req(obj, "merges", list, "BPE"):
        if isinstance(m, str):
            parts = m.split(" ")
            if len(parts) != 2:
                raise VocabFormatError(f"tokenizer.json: BPE merge {m!r} is not 'left right'")
            out.append((parts[0], parts[1]))
        elif isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m):
            out.append((m[0], m[1]))
        else:
            raise VocabFormatError(f"tokenizer.json: BPE merge {m!r} is not a pair of strings")
    return out


def model_from_json(obj: Any) -> Model:
    """Build the model of a tokenizer.json ``model`` value."""
    if not isinstance(obj, dict):
        raise VocabFormatError("tokenizer.json: 'model' must be an object")
    kind = obj.get("type")
    if kind is None:  # old files: untagged, recognised by their keys
        if "merges" in obj:
            kind = "BPE"
        elif isinstance(obj.get("vocab"), list):
            kind = "Unigram"
        elif "max_input_chars_per_word" in obj:
            kind = "WordPiece"
        else:
            kind = "WordLevel"
    if kind == "BPE":
        if opt(obj, "dropout", float, None, "BPE") not in (None, 0.0):
            raise UnsupportedComponentError("unsupported BPE option 'dropout' (random merges)")
        return BPEModel(
            _vocab_dict(obj, "BPE"), _merges(obj),
            unk_token=opt(obj, "unk_token", str, None, "BPE"),
            continuing_subword_prefix=opt(obj, "continuing_subword_prefix", str, None, "BPE")
            or None,
            end_of_word_suffix=opt(obj, "end_of_word_suffix", str, None, "BPE") or None,
            fuse_unk=opt(obj, "fuse_unk", bool, False, "BPE"),
            byte_fallback=opt(obj, "byte_fallback", bool, False, "BPE"),
            ignore_merges=opt(obj, "ignore_merges", bool, False, "BPE"),
        )
    if kind == "Unigram":
        raw = req(obj, "vocab", list, "Unigram")
        pieces: list[tuple[str, float]] = []
        for entry in raw:
            if (not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], str)
                    or not isinstance(entry[1], int | float)):
                raise VocabFormatError(f"tokenizer.json: Unigram vocab entry {entry!r} is not "
                                       "[piece, score]")
            pieces.append((entry[0], float(entry[1])))
        unk_id = opt(obj, "unk_id", int, None, "Unigram")
        return HFUnigramModel(pieces, unk_id=unk_id,
                              byte_fallback=opt(obj, "byte_fallback", bool, False, "Unigram"))
    if kind == "WordPiece":
        w = "WordPiece"
        return WordPieceModel(
            _vocab_dict(obj, w),
            unk_token=opt(obj, "unk_token", str, "[UNK]", w),
            continuing_subword_prefix=opt(obj, "continuing_subword_prefix", str, "##", w),
            max_input_chars_per_word=opt(obj, "max_input_chars_per_word", int, 100, w),
        )
    if kind == "WordLevel":
        return WordLevelModel(_vocab_dict(obj, "WordLevel"),
                              unk_token=opt(obj, "unk_token", str, "<unk>", "WordLevel"))
    raise UnsupportedComponentError(f"unsupported model {kind!r}")


def components_from_json(obj: dict[str, Any]) -> Components:
    """Every component of a parsed tokenizer.json."""
    if "model" not in obj:
        raise VocabFormatError("tokenizer.json: missing the key 'model'")
    model = model_from_json(obj["model"])
    added_raw = obj.get("added_tokens") or []
    if not isinstance(added_raw, list):
        raise VocabFormatError("tokenizer.json: 'added_tokens' must be a list")
    added = [AddedToken.from_json(t) for t in added_raw]
    for key in ("normalizer", "pre_tokenizer", "decoder", "post_processor"):
        if obj.get(key) is not None and not isinstance(obj[key], dict):
            raise VocabFormatError(f"tokenizer.json: {key!r} must be an object or null")
    return Components(
        model=model,
        normalizer=normalizer_from_json(obj.get("normalizer")),
        pre_tokenizer=pre_tokenizer_from_json(obj.get("pre_tokenizer")),
        decoder=decoder_from_json(obj.get("decoder")),
        added_tokens=added,
        post_processor=post_processor_from_json(obj.get("post_processor")),
    )
