"""Load the vocabulary of a GGUF file (llama.cpp) as a tokenizer.

``tokenizer.ggml.model`` selects the algorithm:

- ``gpt2``: byte-level BPE with a merges list; the pre-tokenizer comes from
  ``tokenizer.ggml.pre`` (see :mod:`explorer.engine.formats.gguf_presets`); CONTROL and
  USER_DEFINED tokens are added tokens split out first, as HF and llama.cpp do.
- ``llama``: SentencePiece BPE (scores, ``<0xNN>`` byte tokens), llama.cpp's SPM rules:
  spaces escaped to ``▁`` and a dummy prefix.
- ``t5``: SentencePiece Unigram with the precompiled charsmap normalizer.
- ``bert``: WordPiece in phantom-space form (``▁word`` starts a word, bare pieces
  continue one), converted back to ``##`` form, after llama.cpp's own WPM preprocessing
  (:mod:`explorer.engine.formats.gguf_wpm`, not HF's BertNormalizer).

Token types are llama.cpp's: "control-looking" texts become CONTROL
(:mod:`explorer.engine.formats.gguf_control`); CONTROL, USER_DEFINED and UNKNOWN tokens in the
text are split out first, as ``tokenize(..., parse_special=true)`` does.
- ``gemma4``: SentencePiece-style BPE with merges on raw UTF-8, split on newlines.

``encode(text, add_special_tokens=True)`` adds what llama.cpp's ``tokenize(text,
add_special=true)`` adds (BOS/EOS, ``[CLS]``/``[SEP]``): see
:mod:`explorer.engine.formats.gguf_specials`.

Unknown models and unknown ``pre`` values are refused with the list of supported ones.
Metadata are read with :mod:`explorer.engine.formats.gguf_reader` (fast, no numpy views).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from explorer.engine.errors import UnsupportedComponentError, VocabFormatError
from explorer.engine.formats.gguf_control import SPECIAL_TYPES, llama_cpp_types, special_indices
from explorer.engine.formats.gguf_presets import BPE_PRESETS
from explorer.engine.formats.gguf_reader import cached_metadata
from explorer.engine.formats.gguf_specials import gguf_add_special
from explorer.engine.formats.gguf_wpm import LlamaWpmPre
from explorer.engine.hf.added_tokens import AddedToken
from explorer.engine.hf.decoders import (
    ByteFallbackDecoder,
    ByteLevelDecoder,
    ReplaceDecoder,
    SequenceDecoder,
    WordPieceDecoder,
)
from explorer.engine.hf.models import BPEModel, WordPieceModel
from explorer.engine.hf.normalizers import Replace
from explorer.engine.hf.onig import compile_onig
from explorer.engine.hf.pipeline import Components, PipelineTokenizer
from explorer.engine.hf.pre_tokenizers import (
    ByteLevelPre,
    SequencePre,
    SplitPre,
)
from explorer.engine.tokenizer import Tokenizer

SUPPORTED_MODELS = ("gpt2", "llama", "t5", "bert", "gemma4")
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


class _Meta:
    """Typed access to the ``tokenizer.*`` keys with clear errors."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path, self.data = path, data

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get("tokenizer.ggml." + key, default)

    def need(self, key: str) -> Any:
        full = "tokenizer.ggml." + key
        if full not in self.data:
            raise VocabFormatError(f"{self.path}: GGUF file has no {full!r}")
        return self.data[full]

    def tokens(self) -> tuple[list[str], list[int], list[float] | None]:
        tokens = self.need("tokens")
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens[:10]):
            raise VocabFormatError(f"{self.path}: tokenizer.ggml.tokens is not a string array")
        types = self.get("token_type") or [NORMAL] * len(tokens)
        scores = self.get("scores")
        if len(types) < len(tokens) or (scores is not None and len(scores) < len(tokens)):
            raise VocabFormatError(f"{self.path}: token_type/scores shorter than tokens")
        # llama.cpp turns "control-looking" tokens into CONTROL (see gguf_control).
        return tokens, llama_cpp_types(self.data, tokens, list(types[: len(tokens)])), scores


def _added(tokens: list[str], types: list[int]) -> list[AddedToken]:
    return [
        AddedToken(id=i, content=tokens[i], special=types[i] != USER_DEFINED, normalized=False)
        for i in special_indices(tokens, types)
    ]


def _vocab(tokens: list[str]) -> dict[str, int]:
    vocab: dict[str, int] = {}
    for i, t in enumerate(tokens):
        vocab.setdefault(t, i)
    return vocab


def _merges(meta: _Meta) -> list[str]:
    """Merges as ``"left right"`` strings (BPEModel keys them without splitting)."""
    merges = meta.need("merges")
    if not isinstance(merges, list) or (merges and not isinstance(merges[0], str)):
        raise VocabFormatError(f"{meta.path}: tokenizer.ggml.merges is not a string array")
    return merges


def _load_gpt2(meta: _Meta, name: str) -> Tokenizer:
    tokens, types, _ = meta.tokens()
    pre = meta.get("pre")
    key = pre if pre else "default"
    preset = BPE_PRESETS.get(key)
    if preset is None:
        raise UnsupportedComponentError(
            f"unsupported GGUF pre-tokenizer {pre!r}; supported: " + ", ".join(sorted(BPE_PRESETS))
        )
    model = BPEModel(
        _vocab(tokens), _merges(meta), ignore_merges=preset.ignore_merges, strict=False
    )
    splits = [SplitPre(compile_onig(r), r, "Isolated", False) for r in preset.regexes]
    comps = Components(
        model=model,
        pre_tokenizer=SequencePre((*splits, ByteLevelPre(False, False))),
        decoder=ByteLevelDecoder(),
        added_tokens=_added(tokens, types),
        post_processor=gguf_add_special(meta.data, tokens),
    )
    extra = {"gguf model": "gpt2", "gguf pre": pre or "(missing: llama.cpp 'default')"}
    return PipelineTokenizer(comps, name=name, fmt="gguf", extra=extra, piece_types=types)


def _load_gemma4(meta: _Meta, name: str) -> Tokenizer:
    tokens, types, _ = meta.tokens()
    model = BPEModel(_vocab(tokens), _merges(meta), byte_fallback=True, strict=False)
    space = compile_onig(" ")
    comps = Components(
        model=model,
        normalizer=Replace(space, " ", "▁"),
        pre_tokenizer=SplitPre(compile_onig(r"[^\n]+|[\n]+"), r"[^\n]+|[\n]+", "Isolated", False),
        decoder=SequenceDecoder(
            (ReplaceDecoder(compile_onig("▁"), "▁", " "), ByteFallbackDecoder())
        ),
        added_tokens=_added(tokens, types),
        post_processor=gguf_add_special(meta.data, tokens),
    )
    return PipelineTokenizer(comps, name=name, fmt="gguf", extra={"gguf model": "gemma4"},
                             piece_types=types)


def _load_bert(meta: _Meta, name: str) -> Tokenizer:
    tokens, types, _ = meta.tokens()
    pieces = []
    for t, kind in zip(tokens, types, strict=True):
        if kind != NORMAL:
            pieces.append(t)
        elif t.startswith("▁"):
            pieces.append(t[1:])  # phantom space: a word start
        else:
            pieces.append("##" + t)  # no phantom space: a continuation
    unk_id = meta.get("unknown_token_id", 100)
    if not 0 <= unk_id < len(pieces):
        raise VocabFormatError(f"{meta.path}: unknown_token_id {unk_id} out of range")
    lowercase = meta.get("normalizer.lowercase", True)
    strip_accents = meta.get("normalizer.strip_accents", lowercase)
    # llama.cpp has no word-length limit (HF WordPiece gives [UNK] past 100 characters).
    comps = Components(
        model=WordPieceModel(_vocab(pieces), unk_token=pieces[unk_id],
                             max_input_chars_per_word=1 << 30),
        pre_tokenizer=LlamaWpmPre(bool(lowercase), bool(strip_accents)),
        decoder=WordPieceDecoder("##", True),
        added_tokens=[
            AddedToken(id=i, content=pieces[i], special=k != USER_DEFINED)
            for i, k in enumerate(types)
            if k in SPECIAL_TYPES
        ],
        post_processor=gguf_add_special(meta.data, pieces),
    )
    extra = {"gguf model": "bert",
             "pieces": "HF '##' form (the GGUF stores '▁word' starts and bare continuations)"}
    return PipelineTokenizer(comps, name=name, fmt="gguf", extra=extra, piece_types=types)


def _load_sentencepiece(meta: _Meta, name: str, kind: str) -> Tokenizer:
    from explorer.engine.formats.gguf_ugm import LlamaUgmModel
    from explorer.engine.normalizers.sentencepiece import SentencePieceNormalizer
    from explorer.engine.sentencepiece.bpe import SentencePieceBPEModel
    from explorer.engine.sentencepiece.tokenizer import SentencePieceTokenizer

    tokens, types, scores = meta.tokens()
    if scores is None:
        scores = [0.0] * len(tokens)
    unk_id = meta.get("unknown_token_id", 0 if kind == "llama" else 2)
    if not 0 <= unk_id < len(tokens):
        raise VocabFormatError(f"{meta.path}: unknown_token_id {unk_id} out of range")
    charsmap = meta.get("precompiled_charsmap") or b""
    if kind == "llama":
        model: Any = SentencePieceBPEModel(tokens, scores[: len(tokens)], types, unk_id=unk_id)
        norm = SentencePieceNormalizer.from_spec(
            add_dummy_prefix=bool(meta.get("add_space_prefix", True)),
            remove_extra_whitespaces=bool(meta.get("remove_extra_whitespaces", False)),
        )
    else:
        model = LlamaUgmModel(tokens, scores[: len(tokens)], types, unk_id=unk_id)
        # llama.cpp's UGM defaults when the keys are absent: no dummy prefix, no squeezing.
        norm = SentencePieceNormalizer.from_spec(
            precompiled_charsmap=bytes(charsmap),
            add_dummy_prefix=bool(meta.get("add_space_prefix", False)),
            remove_extra_whitespaces=bool(meta.get("remove_extra_whitespaces", False)),
            escape_whitespaces=bool(meta.get("escape_whitespaces", True)),
        )
    # llama.cpp with parse_special splits UNKNOWN, CONTROL and USER_DEFINED pieces out.
    specials = {tokens[i]: i for i in special_indices(tokens, types)}  # (the last id)
    return SentencePieceTokenizer(
        model,
        norm,
        name=name,
        format="gguf",
        byte_fallback=BYTE in types,
        special_tokens=specials,
        extra_info={"gguf model": kind},
        post_processor=gguf_add_special(meta.data, tokens),
    )


def load(path: Path, *, preset: str | None = None) -> Tokenizer:
    """Read the vocabulary of a GGUF file; ``preset`` is ignored."""
    meta = _Meta(path, cached_metadata(Path(path), "tokenizer."))
    try:
        return _load(meta, path)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError, OverflowError,
            struct.error) as e:
        # GGUF values are typed by the file: a wrong type (scores as strings, a token list
        # of numbers) surfaces here; report it as a corrupt file, not a traceback.
        raise VocabFormatError(f"{path}: corrupt GGUF tokenizer data ({type(e).__name__}: "
                               f"{str(e).splitlines()[0] if str(e) else ''})") from None


def _load(meta: _Meta, path: Path) -> Tokenizer:
    kind = meta.need("model")
    name = Path(path).name
    if kind == "gpt2":
        return _load_gpt2(meta, name)
    if kind == "gemma4":
        return _load_gemma4(meta, name)
    if kind == "bert":
        return _load_bert(meta, name)
    if kind in ("llama", "t5"):
        return _load_sentencepiece(meta, name, kind)
    raise UnsupportedComponentError(
        f"unsupported GGUF tokenizer model {kind!r}; supported: {', '.join(SUPPORTED_MODELS)}"
    )
