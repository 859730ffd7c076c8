r"""Write trained models as tokenizer.json, SentencePiece ``.model`` or ``.tiktoken`` files.

Files are written to a temporary file in the target folder and moved into place with
``os.replace``: a cancelled or failed export never leaves a half-written file.

What each format can hold:

- ``tokenizer.json``: every model (byte-level BPE with its split pattern, Metaspace BPE,
  Unigram with or without byte fallback). Ids equal the trainer's. A non-GPT-2 pattern is
  written as a ``Split`` regex: HF reads it with Oniguruma, which takes possessive
  quantifiers (cl100k's ``\p{N}{1,3}+``) as greedy repeats, so such a file splits some
  digit runs differently in HF than the trainer (and our engine) did.
- SentencePiece ``.model``: Unigram (user-defined symbols typed ``USER_DEFINED``), and
  Metaspace BPE trained with an ``<unk>`` special
  token (ids equal the trainer's; merge order becomes piece scores ``-rank``). The normalizer
  is ``identity``; Unigram models squeeze spaces (sentencepiece's ``remove_extra_whitespaces``,
  which their training assumed; in tokenizer.json two ``Replace`` normalizers), BPE models
  keep every space like HF ``Metaspace``.
- ``.tiktoken``: byte-level BPE. A ranks file has no special tokens, so rank = id minus the
  number of special tokens; the pattern is not stored (GPT-2's is the ``r50k`` preset), nor
  ``add_prefix_space`` (such a model goes to tokenizer.json only).

BPE trained with a ``continuing_subword_prefix`` or ``end_of_word_suffix`` goes to
tokenizer.json only (the BPE model carries both fields); its decoder removes the prefix at
the start of a token and the suffix at its end (``Replace`` steps before the byte-level or
Metaspace decoder). A token spelled with the prefix is ambiguous when the text itself starts
a word with those characters (HF's vocabulary has the same ambiguity).
"""

from __future__ import annotations

import base64
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from explorer.engine.errors import TokenizerError
from explorer.engine.pretokenizers.byte_level import unicode_to_bytes
from explorer.engine.pretokenizers.patterns import GPT2
from explorer.engine.trainers.models import TrainedBpe, TrainedModel, TrainedUnigram

FORMATS = {".json": "tokenizer.json", ".model": "sentencepiece", ".tiktoken": "tiktoken"}


class ExportError(TokenizerError):
    """The model cannot be written in the requested format."""


def format_for_path(path: str | Path) -> str:
    """Output format chosen by the file extension (``.json``, ``.model``, ``.tiktoken``)."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise ExportError(f"{path}: unknown output extension (use .json, .model or .tiktoken)")
    return fmt


def export(model: TrainedModel, path: str | Path, format: str | None = None) -> Path:
    """Write ``model`` to ``path`` atomically; the format comes from the extension."""
    fmt = format or format_for_path(path)
    if fmt == "tokenizer.json":
        data = to_hf_json(model).encode("utf-8")
    elif fmt == "sentencepiece":
        data = to_sentencepiece(model)
    elif fmt == "tiktoken":
        data = to_tiktoken(model)
    else:
        raise ExportError(f"unknown export format {fmt!r}")
    return write_atomic(Path(path), data)


def write_atomic(path: Path, data: bytes) -> Path:
    """Write ``data`` to a temporary sibling file, then rename it over ``path``."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise ExportError(f"cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise ExportError(f"cannot write {path}: {e.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _added(content: str, id_: int) -> dict[str, Any]:
    return {"id": id_, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}


# sentencepiece's remove_extra_whitespaces (what the Unigram trainer assumes): drop leading
# and trailing spaces, squeeze runs of spaces.
_COLLAPSE_SPACES = {"type": "Sequence", "normalizers": [
    {"type": "Replace", "pattern": {"Regex": "^ +| +$"}, "content": ""},
    {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
]}

_METASPACE = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
              "split": True}


def _mark_removers(model: TrainedBpe) -> list[dict[str, Any]]:
    """Decoder steps deleting the continuing-subword prefix and the end-of-word suffix."""
    steps = []
    if model.continuing_subword_prefix is not None:
        steps.append({"type": "Replace", "content": "",
                      "pattern": {"Regex": "^" + re.escape(model.continuing_subword_prefix)}})
    if model.end_of_word_suffix is not None:
        steps.append({"type": "Replace", "content": "",
                      "pattern": {"Regex": re.escape(model.end_of_word_suffix) + "$"}})
    return steps


def _with_mark_removers(model: TrainedBpe, decoder: dict[str, Any]) -> dict[str, Any]:
    steps = _mark_removers(model)
    return {"type": "Sequence", "decoders": [*steps, decoder]} if steps else decoder


def to_hf_json(model: TrainedModel) -> str:
    """HF ``tokenizers`` JSON for any trained model."""
    doc: dict[str, Any] = {"version": "1.0", "truncation": None, "padding": None}
    if isinstance(model, TrainedBpe):
        specials = set(model.special_tokens)
        doc["added_tokens"] = [_added(t, i) for i, t in enumerate(model.vocab) if t in specials]
        doc["normalizer"] = None
        if model.mode == "byte_level":
            level = {"type": "ByteLevel", "add_prefix_space": model.add_prefix_space,
                     "trim_offsets": True, "use_regex": model.pattern == GPT2}
            if model.pattern == GPT2:
                doc["pre_tokenizer"] = level
            else:
                split = {"type": "Split", "pattern": {"Regex": model.pattern},
                         "behavior": "Isolated", "invert": False}
                doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
                    split, level | {"use_regex": False}]}
            doc["post_processor"] = None
            doc["decoder"] = _with_mark_removers(model, {
                "type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                "use_regex": True})
        else:
            doc["pre_tokenizer"] = dict(_METASPACE)
            doc["post_processor"] = None
            doc["decoder"] = _with_mark_removers(model, dict(_METASPACE))
        doc["model"] = {
            "type": "BPE", "dropout": None,
            "unk_token": "<unk>" if "<unk>" in specials else None,
            "continuing_subword_prefix": model.continuing_subword_prefix,
            "end_of_word_suffix": model.end_of_word_suffix, "fuse_unk": False,
            "byte_fallback": False, "ignore_merges": False,
            "vocab": {t: i for i, t in enumerate(model.vocab)},
            "merges": [list(m) for m in model.merges],
        }
    else:
        meta = [p for p, _ in model.pieces[:3]]
        doc["added_tokens"] = [_added(p, i) for i, p in enumerate(meta)]
        # User symbols are never split: added (non-special) tokens in HF.
        doc["added_tokens"] += [_added(p, 3 + i) | {"special": False}
                                for i, p in enumerate(model.user_symbols)]
        doc["normalizer"] = _COLLAPSE_SPACES
        doc["pre_tokenizer"] = dict(_METASPACE)
        doc["post_processor"] = None
        doc["decoder"] = (
            {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, dict(_METASPACE)]}
            if model.byte_fallback else dict(_METASPACE))
        doc["model"] = {"type": "Unigram", "unk_id": model.unk_id,
                        "vocab": [[p, s] for p, s in model.pieces],
                        "byte_fallback": model.byte_fallback}
    return json.dumps(doc, ensure_ascii=False, indent=1)


def to_sentencepiece(model: TrainedModel) -> bytes:
    """A serialized SentencePiece ``ModelProto`` (Unigram, or Metaspace BPE)."""
    from explorer.engine.formats.sentencepiece_schema import MODEL_TYPES, PIECE_TYPES, ModelProto

    proto = ModelProto()
    spec = proto.trainer_spec
    if isinstance(model, TrainedUnigram):
        spec.model_type = MODEL_TYPES["UNIGRAM"]
        for i, (piece, score) in enumerate(model.pieces):
            kind = ("UNKNOWN" if i == model.unk_id else "CONTROL" if i < 3
                    else "USER_DEFINED" if i < 3 + len(model.user_symbols)
                    else "BYTE" if i < model.num_meta else "NORMAL")
            proto.pieces.add(piece=piece, score=score, type=PIECE_TYPES[kind])
        spec.byte_fallback = model.byte_fallback
        spec.unk_id, spec.bos_id, spec.eos_id = model.unk_id, model.bos_id, model.eos_id
    else:
        if model.mode != "metaspace":
            raise ExportError("SentencePiece .model holds character-level (Metaspace) BPE; "
                              "export byte-level BPE as .json or .tiktoken")
        if model.marked:
            raise ExportError("SentencePiece .model cannot hold a continuing-subword prefix "
                              "or end-of-word suffix; export as .json")
        if "<unk>" not in model.special_tokens:
            raise ExportError("SentencePiece .model needs an <unk> special token; "
                              "train with --special-token '<unk>'")
        spec.model_type = MODEL_TYPES["BPE"]
        score = _bpe_scores(model)
        specials = set(model.special_tokens)
        for tok in model.vocab:
            kind = ("UNKNOWN" if tok == "<unk>" else "CONTROL" if tok in specials else "NORMAL")
            proto.pieces.add(piece=tok, score=score.get(tok, 0.0), type=PIECE_TYPES[kind])
        vocab = {t: i for i, t in enumerate(model.vocab)}
        spec.unk_id = vocab["<unk>"]
        spec.bos_id = vocab.get("<s>", -1)
        spec.eos_id = vocab.get("</s>", -1)
    spec.vocab_size = len(proto.pieces)
    spec.pad_id = -1
    norm = proto.normalizer_spec
    norm.name = "identity"
    norm.add_dummy_prefix = True
    # Unigram training squeezed spaces like sentencepiece; BPE kept them like HF Metaspace.
    norm.remove_extra_whitespaces = isinstance(model, TrainedUnigram)
    norm.escape_whitespaces = True
    return proto.SerializeToString()


def _bpe_scores(model: TrainedBpe) -> dict[str, float]:
    """Merge results score ``-rank`` (first merge wins); characters score below all merges."""
    score: dict[str, float] = {}
    for rank, (a, b) in enumerate(model.merges):
        score.setdefault(a + b, -float(rank))
    low = -float(len(model.merges))
    specials = set(model.special_tokens)
    for tok in model.vocab:
        if tok not in score and tok not in specials:
            score[tok] = low
            low -= 1.0
    return score


def tiktoken_ranks(model: TrainedModel) -> dict[bytes, int]:
    """Token bytes -> rank for a byte-level BPE model (rank = id - number of specials)."""
    if not isinstance(model, TrainedBpe) or model.mode != "byte_level":
        raise ExportError(".tiktoken holds byte-level BPE only; export this model as .json"
                          " or .model")
    if model.marked:
        raise ExportError(".tiktoken cannot hold a continuing-subword prefix or end-of-word "
                          "suffix; export as .json")
    if model.add_prefix_space:
        raise ExportError(".tiktoken cannot hold add_prefix_space (a space before the text); "
                          "export as .json")
    to_byte = unicode_to_bytes()
    specials = set(model.special_tokens)
    ranks: dict[bytes, int] = {}
    for tok in model.vocab:
        if tok in specials:
            continue
        ranks[bytes(to_byte[c] for c in tok)] = len(ranks)
    return ranks


def to_tiktoken(model: TrainedModel) -> bytes:
    """A ``.tiktoken`` ranks file (base64 token, space, rank; one per line)."""
    ranks = tiktoken_ranks(model)
    lines = [base64.b64encode(tok) + b" " + str(rank).encode()
             for tok, rank in sorted(ranks.items(), key=lambda kv: kv[1])]
    return b"\n".join(lines) + b"\n"
