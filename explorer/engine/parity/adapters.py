"""Adapters from reference libraries to :class:`Implementation`, and which apply to a file.

- tiktoken: ``.tiktoken`` files (pattern and specials from the loaded preset), and byte-level
  BPE ``tokenizer.json`` files whose ids follow their merges (what converters produce), read
  through ``tiktoken.Encoding``; its pre-tokenizer is not exposed, its model alone is
  (``encode_single_piece``).
- HF tokenizers: ``tokenizer.json`` (``Tokenizer.from_file``, padding and truncation off);
  normalizer and pre-tokenizer exposed with original offsets.
- sentencepiece: ``.model`` (``SentencePieceProcessor``); normalizer exposed. HF tokenizers
  also reads Unigram ``.model`` files through its own converter (``from_spm``), a common
  source of differences (whitespace handling).
- mistral-common: tekken ``.json`` files (``Tekkenizer.from_file``), when that format loads.
- llama-cpp-python: ``.gguf`` (its C API, vocabulary only:
  :mod:`explorer.engine.parity.llama_cpp_vocab`).
- transformers: ``.gguf`` through its GGUF tokenizer conversion (what
  ``AutoTokenizer.from_pretrained(folder, gguf_file=NAME)`` builds, without torch: see
  :mod:`~explorer.engine.parity.gguf_transformers`); normalizer and pre-tokenizer exposed as
  for HF tokenizers.

A library that is missing is listed with its pip command (:class:`Unavailable`).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from explorer.engine.encoding import Encoding, byte_to_char_offsets
from explorer.engine.errors import TokenizerError
from explorer.engine.parity.implementations import (
    EngineImplementation,
    Implementation,
    ImplementationSet,
    PreSplit,
    Unavailable,
)
from explorer.engine.parity.tokens import (
    build_encoding,
    group_byte_pieces,
    spans_by_folding_bytes,
    spans_from_token_bytes,
)
from explorer.engine.pretokenizers import bytes_to_piece, patterns, piece_to_bytes
from explorer.engine.tokenizer import Tokenizer

PIP = {
    "tiktoken": "pip install tiktoken",
    "tokenizers": "pip install tokenizers",
    "sentencepiece": "pip install sentencepiece",
    "mistral_common": "pip install mistral-common",
    "llama_cpp": "pip install llama-cpp-python",
    "transformers_gguf": "pip install transformers",
}
LIBRARY_NAMES = {
    "tiktoken": "tiktoken",
    "tokenizers": "HF tokenizers",
    "sentencepiece": "sentencepiece",
    "mistral_common": "mistral-common",
    "llama_cpp": "llama.cpp (llama-cpp-python)",
    "transformers_gguf": "transformers (GGUF)",
}


def _import(module: str) -> Any | None:
    try:
        if module == "transformers_gguf":
            from explorer.engine.parity.gguf_transformers import import_transformers

            importlib.import_module("tokenizers")
            return import_transformers()
        return importlib.import_module(module)
    except ImportError:
        return None


def _missing(module: str) -> Unavailable:
    return Unavailable(LIBRARY_NAMES[module], "not installed", PIP[module])


def _our_bytes(tokenizer: Tokenizer) -> Any:
    """``token_bytes(id, piece)`` from the loaded vocabulary (display only; ids compare)."""

    def token_bytes(token_id: int, piece: str) -> bytes:
        try:
            return tokenizer.id_to_token(token_id).token_bytes
        except (KeyError, IndexError, ValueError, TokenizerError):
            return piece.encode("utf-8", errors="replace")

    return token_bytes


# -- tiktoken --------------------------------------------------------------------------------
class TiktokenImplementation(Implementation):
    """tiktoken's ``Encoding`` built offline from ranks, a pattern and special tokens."""

    def __init__(self, tiktoken: Any, ranks: dict[bytes, int], pattern: str,
                 specials: dict[str, int], *, name: str = "tiktoken") -> None:
        self.name = name
        self.enc = tiktoken.Encoding("parity", pat_str=pattern, mergeable_ranks=ranks,
                                     special_tokens=specials)
        self._specials = set(specials.values())

    def encode(self, text: str) -> Encoding:
        """tiktoken ``encode(text, allowed_special="all")``; spans from the token bytes."""
        ids = self.enc.encode(text, allowed_special="all")
        data = [self.enc.decode_single_token_bytes(i) for i in ids]
        pieces = [d.decode("utf-8") if i in self._specials else bytes_to_piece(d)
                  for i, d in zip(ids, data, strict=True)]
        by_id = dict(zip(ids, data, strict=True))
        return build_encoding(text, ids, pieces, spans_from_token_bytes(text, data),
                              token_bytes=lambda i, _p: by_id[i],
                              special=self._specials.__contains__)

    def normalize(self, text: str) -> str | None:
        """tiktoken has no normalizer: the text itself."""
        return text

    def model_ids(self, pre_token: str) -> list[int] | None:
        """tiktoken's BPE alone on one pre-token (``encode_single_piece``)."""
        return list(self.enc._core_bpe.encode_single_piece(pre_token.encode("utf-8")))

    def describe_stage(self, stage: str) -> str:
        """tiktoken has no normalizer; its pre-tokens are not exposed."""
        if stage == "pre-tokenization":
            return "not exposed by tiktoken; inferred from its model on our pre-tokens"
        return "exposed by the library"


def _tiktoken_for_tiktoken_file(path: Path, tokenizer: Tokenizer,
                                tiktoken: Any) -> Implementation | Unavailable:
    import tiktoken.load as tl

    pattern = getattr(getattr(tokenizer, "splitter", None), "pattern", None)
    specials = getattr(tokenizer, "special_tokens", None)
    if pattern is None or specials is None:
        return Unavailable("tiktoken", "the loaded tokenizer has no tiktoken pattern")
    ranks = tl.load_tiktoken_bpe(str(path))
    return TiktokenImplementation(tiktoken, ranks, pattern, dict(specials))


def tiktoken_from_tokenizer_json(obj: dict) -> tuple[dict[bytes, int], str, dict[str, int]] | str:
    """``(ranks, pattern, specials)`` for a byte-level BPE tokenizer.json tiktoken can read,
    or the reason it cannot."""
    model = obj.get("model") or {}
    if model.get("type") != "BPE":
        return "not a BPE model"
    if obj.get("normalizer"):
        return "has a normalizer (tiktoken has none)"
    if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix") \
            or model.get("byte_fallback"):
        return "BPE options tiktoken lacks (prefix/suffix/byte fallback)"
    pre = obj.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    pattern = None
    byte_level = False
    for step in steps:
        kind = step.get("type")
        if kind == "ByteLevel":
            if step.get("add_prefix_space"):
                return "ByteLevel adds a prefix space (tiktoken does not)"
            byte_level = True
            if step.get("use_regex", True):
                if pattern is not None:
                    return "two split patterns"
                pattern = patterns.GPT2
        elif kind == "Split":
            regex_ = (step.get("pattern") or {}).get("Regex")
            if regex_ is None or step.get("behavior") != "Isolated" or step.get("invert"):
                return "a Split that is not an isolated regex split"
            if pattern is not None:
                return "two split patterns"
            pattern = regex_
        else:
            return f"pre-tokenizer {kind} (tiktoken has a single regex)"
    if not byte_level or pattern is None:
        return "not a byte-level BPE with a split regex"
    vocab: dict[str, int] = model.get("vocab") or {}
    specials = {t["content"]: t["id"] for t in obj.get("added_tokens") or []}
    ranks: dict[bytes, int] = {}
    for piece, i in vocab.items():
        if piece in specials:
            continue
        try:
            ranks[piece_to_bytes(piece)] = i
        except (KeyError, ValueError):
            return f"piece {piece!r} is not byte-level"
    if any(bytes([b]) not in ranks for b in range(256)):
        return "lacks some of the 256 single bytes"
    last = -1
    for merge in model.get("merges") or []:
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        rank = vocab.get(left + right)
        if rank is None or rank <= last:
            return "ids are not in merge order (tiktoken ranks merges by id)"
        last = rank
    return ranks, pattern, specials


# -- HF tokenizers ---------------------------------------------------------------------------
class HFImplementation(Implementation):
    """HF ``tokenizers``: ``Tokenizer.from_file`` with padding and truncation off."""

    def __init__(self, tokenizers: Any, path: Path | None, tokenizer: Tokenizer,
                 *, name: str = "HF tokenizers", hf: Any = None) -> None:
        """``hf``: an already built ``tokenizers.Tokenizer`` instead of ``path``."""
        self.name = name
        self._lib = tokenizers
        self.hf = hf if hf is not None else tokenizers.Tokenizer.from_file(str(path))
        self.hf.no_padding()
        self.hf.no_truncation()
        obj = json.loads(self.hf.to_str())
        self._specials = {i for i, t in self.hf.get_added_tokens_decoder().items() if t.special}
        model = obj.get("model") or {}
        unk = model.get("unk_token")
        vocab = model.get("vocab")
        unk_id = model.get("unk_id")
        if unk is not None and isinstance(vocab, dict):
            unk_id = vocab.get(unk)
        self._unk = unk_id
        self._bytes = _our_bytes(tokenizer)

    def encode(self, text: str) -> Encoding:
        """``encode(text, add_special_tokens=False)``: ids, tokens and char offsets."""
        e = self.hf.encode(text, add_special_tokens=False)
        # HF's Unigram reports the unknown token by its surface text: show the vocabulary's.
        pieces = [self.hf.id_to_token(i) if i == self._unk else p
                  for i, p in zip(e.ids, e.tokens, strict=True)]
        return build_encoding(text, e.ids, pieces, [tuple(o) for o in e.offsets],
                              token_bytes=self._bytes, special=self._specials.__contains__,
                              unknown=lambda i: i == self._unk)

    def normalize(self, text: str) -> str | None:
        """The normalizer's ``normalize_str`` (the text itself without a normalizer)."""
        norm = self.hf.normalizer
        return text if norm is None else norm.normalize_str(text)

    def pre_tokenize(self, text: str) -> list[PreSplit] | None:
        """Normalizer then pre-tokenizer on a ``PreTokenizedString``; original char offsets."""
        pts = self._lib.PreTokenizedString(text)
        norm = self.hf.normalizer
        if norm is not None:
            pts.normalize(lambda ns: norm.normalize(ns))
        if self.hf.pre_tokenizer is not None:
            self.hf.pre_tokenizer.pre_tokenize(pts)
        return [PreSplit(s, a, b) for s, (a, b), _ in
                pts.get_splits(offset_referential="original", offset_type="char")]


def hf_converted_from_spm(tokenizers: Any, path: Path,
                          tokenizer: Tokenizer) -> Implementation | Unavailable:
    """HF tokenizers' own converter (``SentencePieceUnigramTokenizer.from_spm``) applied to a
    SentencePiece Unigram ``.model``: how many users get a tokenizer.json from a ``.model``."""
    try:
        from sentencepiece import sentencepiece_model_pb2 as pb
    except ImportError:
        return Unavailable("HF tokenizers (converted from .model)",
                           "needs sentencepiece's protobuf module", PIP["sentencepiece"])
    proto = pb.ModelProto()
    proto.ParseFromString(Path(path).read_bytes())
    if proto.trainer_spec.model_type != pb.TrainerSpec.UNIGRAM:
        return Unavailable("HF tokenizers (converted from .model)",
                           "its converter reads Unigram models only")
    # from_spm imports a top-level ``sentencepiece_model_pb2``; sentencepiece ships it inside
    # its package: make that one importable under the expected name.
    import sys

    sys.modules.setdefault("sentencepiece_model_pb2", pb)
    from tokenizers.implementations import SentencePieceUnigramTokenizer

    converted = SentencePieceUnigramTokenizer.from_spm(str(path))
    return HFImplementation(tokenizers, None, tokenizer,
                            name="HF tokenizers (converted from .model)",
                            hf=converted._tokenizer)


# -- sentencepiece ---------------------------------------------------------------------------
class SentencePieceImplementation(Implementation):
    """sentencepiece's ``SentencePieceProcessor`` on the ``.model`` file."""

    name = "sentencepiece"

    def __init__(self, spm: Any, path: Path, tokenizer: Tokenizer) -> None:
        self.sp = spm.SentencePieceProcessor(model_file=str(path))
        self._bytes = _our_bytes(tokenizer)
        self._user_defined = self._user_defined_ids(path)

    @staticmethod
    def _user_defined_ids(path: Path) -> frozenset[int]:
        """Ids of USER_DEFINED pieces, from sentencepiece's own ModelProto (needs protobuf)."""
        try:
            from sentencepiece import sentencepiece_model_pb2 as pb
        except ImportError:
            return frozenset()
        proto = pb.ModelProto()
        proto.ParseFromString(Path(path).read_bytes())
        user = pb.ModelProto.SentencePiece.USER_DEFINED
        return frozenset(i for i, p in enumerate(proto.pieces) if p.type == user)

    def encode(self, text: str) -> Encoding:
        """``encode`` as a proto: ids, pieces and byte spans mapped to code points."""
        to_char = byte_to_char_offsets(text)
        proto = self.sp.encode(text, return_type="proto")
        ids = [p.id for p in proto.pieces]
        pieces = [p.piece for p in proto.pieces]
        spans = group_byte_pieces(pieces, [(to_char[p.begin], to_char[p.end])
                                           for p in proto.pieces])
        sp = self.sp
        return build_encoding(
            text, ids, pieces, spans, token_bytes=self._bytes,
            special=lambda i: bool(sp.IsControl(i)) or i in self._user_defined,
            unknown=lambda i: bool(sp.IsUnknown(i)))

    def normalize(self, text: str) -> str | None:
        """sentencepiece's ``normalize`` (its normalizer and whitespace handling)."""
        return self.sp.normalize(text)


# -- mistral-common (tekken) -----------------------------------------------------------------
class TekkenImplementation(Implementation):
    """mistral-common's ``Tekkenizer`` on a tekken ``.json`` file."""

    name = "mistral-common"

    def __init__(self, mistral_common: Any, path: Path, tokenizer: Tokenizer) -> None:
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        self.tk = Tekkenizer.from_file(str(path))
        self._bytes = _our_bytes(tokenizer)

    def encode(self, text: str) -> Encoding:
        """``encode(text, bos=False, eos=False)``; spans from the token bytes."""
        ids = list(self.tk.encode(text, bos=False, eos=False))
        data = [self._bytes(i, "") for i in ids]
        pieces = [bytes_to_piece(d) for d in data]
        return build_encoding(text, ids, pieces, spans_from_token_bytes(text, data),
                              token_bytes=self._bytes)

    def normalize(self, text: str) -> str | None:
        """tekken has no normalizer."""
        return text


# -- llama.cpp -------------------------------------------------------------------------------
class LlamaCppImplementation(Implementation):
    """llama.cpp through llama-cpp-python, vocabulary only."""

    name = "llama.cpp"

    def __init__(self, llama_cpp: Any, path: Path) -> None:
        from explorer.engine.parity.llama_cpp_vocab import LlamaCppVocab

        self.vocab = LlamaCppVocab(llama_cpp, path)
        self.wordpiece = self.vocab.kind == llama_cpp.LLAMA_VOCAB_TYPE_WPM

    def encode(self, text: str) -> Encoding:
        """``llama_tokenize(text, add_special=false, parse_special=true)``; spans from the
        token bytes (``llama_token_to_piece(special=true)``)."""
        ids = self.vocab.tokenize(text.encode("utf-8"), add_special=False, parse_special=True)
        data = [self.vocab.piece(i, special=True) for i in ids]
        pieces = [bytes_to_piece(d) for d in data]
        by_id = dict(zip(ids, data, strict=True))
        if b"".join(data) == text.encode("utf-8"):
            spans = spans_from_token_bytes(text, data)
        else:  # normalized pieces (SentencePiece's ▁, WordPiece's lowercase, charsmaps)
            spans = spans_by_folding_bytes(text, data, spaces_in_spans=not self.wordpiece)
        return build_encoding(text, ids, pieces, spans,
                              token_bytes=lambda i, _p: by_id[i])


# -- transformers (GGUF) --------------------------------------------------------------------
def transformers_gguf(path: Path, tokenizer: Tokenizer) -> Implementation:
    """transformers' GGUF tokenizer conversion of ``path``, run by HF tokenizers."""
    import tokenizers

    from explorer.engine.parity.gguf_transformers import NAME, transformers_gguf_tokenizer

    return HFImplementation(tokenizers, None, tokenizer, name=NAME,
                            hf=transformers_gguf_tokenizer(path))


# -- which apply -----------------------------------------------------------------------------
def reference_implementations(path: str | Path, tokenizer: Tokenizer,
                              fmt: str) -> tuple[list[Implementation], list[Unavailable]]:
    """The reference implementations that can read ``path`` (format ``fmt``) and those that
    could but cannot run here."""
    path = Path(path)
    ready: list[Implementation] = []
    missing: list[Unavailable] = []

    def add(module: str, build: Any) -> None:
        lib = _import(module)
        if lib is None:
            missing.append(_missing(module))
            return
        try:
            made = build(lib)
        except Exception as e:  # a library that refuses the file is listed, not an error
            made = Unavailable(LIBRARY_NAMES[module], f"cannot read this file ({e})")
        (missing if isinstance(made, Unavailable) else ready).append(made)

    if fmt == "tiktoken":
        add("tiktoken", lambda lib: _tiktoken_for_tiktoken_file(path, tokenizer, lib))
    elif fmt == "tokenizer.json":
        add("tokenizers", lambda lib: HFImplementation(lib, path, tokenizer))

        def tiktoken_json(lib: Any) -> Implementation | Unavailable:
            conv = tiktoken_from_tokenizer_json(json.loads(path.read_text(encoding="utf-8")))
            if isinstance(conv, str):
                return Unavailable("tiktoken", f"cannot read this tokenizer.json: {conv}")
            ranks, pattern, specials = conv
            return TiktokenImplementation(lib, ranks, pattern, specials,
                                          name="tiktoken (from tokenizer.json)")

        add("tiktoken", tiktoken_json)
    elif fmt == "sentencepiece":
        add("sentencepiece", lambda lib: SentencePieceImplementation(lib, path, tokenizer))
        add("tokenizers", lambda lib: hf_converted_from_spm(lib, path, tokenizer))
    elif fmt == "tekken":
        add("mistral_common", lambda lib: TekkenImplementation(lib, path, tokenizer))
    elif fmt == "gguf":
        add("llama_cpp", lambda lib: LlamaCppImplementation(lib, path))
        add("transformers_gguf", lambda _lib: transformers_gguf(path, tokenizer))
    return ready, missing


def implementations_for(path: str | Path, tokenizer: Tokenizer | None = None, *,
                        fmt: str | None = None, preset: str | None = None) -> ImplementationSet:
    """Our engine plus every reference implementation for the vocabulary file ``path``."""
    from explorer.engine.formats import detect_format, load_tokenizer

    fmt = fmt or detect_format(path)
    if tokenizer is None:
        tokenizer = load_tokenizer(path, format=fmt, preset=preset)
    ready, missing = reference_implementations(path, tokenizer, fmt)
    return ImplementationSet([EngineImplementation(tokenizer), *ready], missing)
