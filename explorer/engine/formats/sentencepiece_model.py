"""SentencePiece ``.model`` files (``ModelProto``): load as a tokenizer, and write them.

- :func:`load` (the ``load_tokenizer`` entry point) / :func:`tokenizer_from_bytes` /
  :func:`tokenizer_from_proto`: Unigram, BPE, CHAR and WORD models; other model types raise
  :class:`UnsupportedComponentError`. Corrupt, truncated or inconsistent files raise
  :class:`VocabFormatError` naming the problem (checks mirror sentencepiece's
  ``InitializePieces``).
- :func:`save_sentencepiece_model` / :func:`model_proto_from_model`: export an in-memory
  :class:`UnigramModel`, :class:`SentencePieceBPEModel` or :class:`SimpleLookupModel` (e.g.
  one we trained) as a ``.model``
  that sentencepiece loads.

Messages come from :mod:`explorer.engine.formats.sentencepiece_schema` (protobuf, schema built
in code); there is no hand-written wire parser.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import partial
from itertools import compress
from operator import attrgetter
from pathlib import Path

from google.protobuf.message import DecodeError

from explorer.engine.errors import UnsupportedComponentError, VocabFormatError
from explorer.engine.formats.sentencepiece_schema import MODEL_TYPES, ModelProto
from explorer.engine.formats.vocab_cache import cached_and_built
from explorer.engine.normalizers.sentencepiece import SentencePieceNormalizer
from explorer.engine.sentencepiece.bpe import SentencePieceBPEModel
from explorer.engine.sentencepiece.pieces import PieceType, byte_piece, piece_byte
from explorer.engine.sentencepiece.simple import SimpleLookupModel
from explorer.engine.sentencepiece.tokenizer import SentencePieceTokenizer
from explorer.engine.unigram.model import UnigramModel

_MODEL_TYPE_NAMES = {v: k for k, v in MODEL_TYPES.items()}
AnyModel = UnigramModel | SentencePieceBPEModel | SimpleLookupModel


def load(path: Path, *, preset: str | None = None) -> SentencePieceTokenizer:
    """Load a ``.model`` file (``preset`` is unused: the file says everything)."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise VocabFormatError(f"{path}: cannot read ({e.strerror})") from None
    return tokenizer_from_bytes(data, name=Path(path).name)


def parse_model_proto(data: bytes, *, source: str = "model") -> ModelProto:
    """Parse and validate a serialized ``ModelProto``."""
    return _parse(data, source)[0]


Columns = tuple[list[str], list[float], list[int]]
"""A model's pieces, scores and types, in id order (:func:`piece_columns`)."""


def _parse(data: bytes, source: str) -> tuple[ModelProto, Columns]:
    """:func:`parse_model_proto`, with the pieces' columns it read to validate them."""
    if not data:
        raise VocabFormatError(f"{source}: file is empty")
    try:
        proto = ModelProto.FromString(data)
    except DecodeError as e:
        raise VocabFormatError(
            f"{source}: not a valid SentencePiece model (corrupt or truncated: {e})"
        ) from None
    if not proto.pieces:
        raise VocabFormatError(f"{source}: SentencePiece model has no pieces")
    if not proto.HasField("trainer_spec"):
        raise VocabFormatError(f"{source}: SentencePiece model has no trainer_spec (truncated?)")
    for field in (proto.normalizer_spec.name, proto.trainer_spec.unk_surface):
        if not isinstance(field, str):  # proto2 keeps invalid UTF-8 as bytes
            raise VocabFormatError(f"{source}: a text field is not valid UTF-8")
    if len(proto.pieces) < _CACHE_MIN_PIECES:
        return proto, _checked_columns(proto, source)
    columns = cached_and_built(hashlib.sha256(data).digest(), "sentencepiece-columns-1",
                               lambda: _checked_columns(proto, source),
                               partial(_columns_of, len(proto.pieces)))
    return proto, columns


_CACHE_MIN_PIECES = 20_000
"""A model with this many pieces keeps its validated columns in the vocabulary cache (keyed
by a digest of the file's bytes): a 250k-piece model's columns took ~0.18 s to read from
the message and ~0.14 s to validate, against ~0.04 s to load and ~0.01 s to digest."""


def _checked_columns(proto: ModelProto, source: str) -> Columns:
    """:func:`piece_columns`, validated (:func:`_validate_pieces`)."""
    columns = piece_columns(proto)
    _validate_pieces(proto, columns, source)
    return columns


def _columns_of(size: int, value: object) -> Columns:
    """A cached entry of :func:`_checked_columns` as columns of ``size`` pieces, or
    ``ValueError`` (an entry of another shape: parsed again)."""
    if not (isinstance(value, tuple) and len(value) == 3
            and all(isinstance(c, list) and len(c) == size for c in value)):
        raise ValueError("not a model's columns")
    pieces, scores, types = value
    return pieces, scores, types


def piece_columns(proto: ModelProto) -> Columns:
    """The pieces, scores and types of ``proto``'s pieces, in id order: read once (each read
    of a 250k-piece model's pieces makes a message object per piece, ~0.06 s), and shared by
    the validation and the tokenizer's build."""
    items = proto.pieces  # (not listed: a message object per piece held at once stayed as
    # ~25 MB of the process's memory after a 250k-piece load; each pass frees its own)
    return (list(map(attrgetter("piece"), items)), list(map(attrgetter("score"), items)),
            list(map(attrgetter("type"), items)))


def _validate_pieces(proto: ModelProto, columns: Columns, source: str) -> None:
    """One-line errors for pieces sentencepiece would refuse: not UTF-8, empty, defined
    twice, not exactly one unknown piece, byte pieces that are wrong or missing.

    Whole-list passes first (the pieces read once: a loop over a 32k model's pieces took
    ~70 ms of its load); the per-piece loop only runs to name what is wrong."""
    pieces, _, types = columns
    normal_kinds = frozenset((PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED))
    byte_fallback = proto.trainer_spec.byte_fallback
    normal = list(map(normal_kinds.__contains__, types))
    # (pieces all distinct, the common case, is a set of strings: pairs only when not)
    clean = (set(map(type, pieces)) == {str} and "" not in pieces
             and (len(set(pieces)) == len(pieces)
                  or len(set(zip(normal, pieces, strict=True))) == len(pieces)))
    if not clean:
        _name_bad_piece(pieces, normal, source)
    unk = types.count(PieceType.UNKNOWN)
    if unk != 1:
        what = "is not defined" if not unk else f"is defined {unk} times"
        raise VocabFormatError(f"{source}: the unknown piece {what}")
    byte_pieces = list(compress(pieces, map(PieceType.BYTE.__eq__, types)))
    if byte_pieces and not byte_fallback:
        raise VocabFormatError(
            f"{source}: byte piece {byte_pieces[0]} found although byte_fallback is false"
        )
    bytes_found: set[int] = set()
    for piece in byte_pieces:
        byte = piece_byte(piece)
        if byte is None:
            raise VocabFormatError(f"{source}: byte piece {piece!r} is invalid")
        bytes_found.add(byte)
    if byte_fallback and len(bytes_found) != 256:
        raise VocabFormatError(
            f"{source}: byte_fallback is on but only {len(bytes_found)} of 256 byte pieces exist"
        )


def _name_bad_piece(pieces: list[str], normal: list[bool], source: str) -> None:
    """Raise the error for the first piece that is not UTF-8, empty or defined twice."""
    seen: set[tuple[bool, str]] = set()
    for i, (piece, is_normal) in enumerate(zip(pieces, normal, strict=True)):
        if not isinstance(piece, str):  # proto2 keeps invalid UTF-8 as bytes
            raise VocabFormatError(f"{source}: piece {i} is not valid UTF-8")
        if not piece:
            raise VocabFormatError(f"{source}: piece {i} is empty")
        if (is_normal, piece) in seen:
            raise VocabFormatError(f"{source}: piece {piece!r} is defined twice")
        seen.add((is_normal, piece))


def tokenizer_from_bytes(data: bytes, *, name: str = "sentencepiece") -> SentencePieceTokenizer:
    """A tokenizer from the bytes of a ``.model`` file."""
    proto, columns = _parse(data, name)
    return tokenizer_from_proto(proto, name=name, columns=columns)


def tokenizer_from_proto(
    proto: ModelProto, *, name: str = "sentencepiece", columns: Columns | None = None
) -> SentencePieceTokenizer:
    """A tokenizer from a parsed (validated) ``ModelProto`` (``columns``: its
    :func:`piece_columns`, when the caller has them)."""
    trainer, spec = proto.trainer_spec, proto.normalizer_spec
    pieces, scores, types = columns if columns is not None else piece_columns(proto)
    kind = _MODEL_TYPE_NAMES.get(trainer.model_type, str(trainer.model_type))
    if kind == "UNIGRAM":
        model: AnyModel = UnigramModel(pieces, scores, types)
    elif kind == "BPE":
        model = SentencePieceBPEModel(pieces, scores, types)
    elif kind in ("CHAR", "WORD"):
        model = SimpleLookupModel("char" if kind == "CHAR" else "word", pieces, scores, types)
    else:
        raise UnsupportedComponentError(f"{name}: unsupported SentencePiece model type {kind!r}")
    if proto.HasField("denormalizer_spec") and proto.denormalizer_spec.precompiled_charsmap:
        raise UnsupportedComponentError(f"{name}: unsupported SentencePiece denormalizer")
    normalizer = SentencePieceNormalizer.from_spec(
        name=spec.name,
        precompiled_charsmap=spec.precompiled_charsmap,
        add_dummy_prefix=spec.add_dummy_prefix,
        remove_extra_whitespaces=spec.remove_extra_whitespaces,
        escape_whitespaces=spec.escape_whitespaces,
        treat_whitespace_as_suffix=trainer.treat_whitespace_as_suffix,
        user_defined_symbols=list(compress(pieces, map(PieceType.USER_DEFINED.__eq__, types))),
    )
    return SentencePieceTokenizer(
        model,
        normalizer,
        name=name,
        byte_fallback=trainer.byte_fallback,
        unk_surface=trainer.unk_surface,
        strip_decoded_prefix=spec.add_dummy_prefix or spec.remove_extra_whitespaces,
        decode_remove_extra_whitespaces=spec.remove_extra_whitespaces,
        extra_info={
            "model": kind,
            "normalization": spec.name or "identity",
            "add_dummy_prefix": str(spec.add_dummy_prefix),
            "remove_extra_whitespaces": str(spec.remove_extra_whitespaces),
        },
    )


def model_proto_from_model(
    model: AnyModel,
    *,
    normalizer_name: str = "identity",
    precompiled_charsmap: bytes = b"",
    add_dummy_prefix: bool = True,
    remove_extra_whitespaces: bool = True,
    escape_whitespaces: bool = True,
    byte_fallback: bool | None = None,
    trainer_fields: dict[str, object] | None = None,
) -> ModelProto:
    """A ``ModelProto`` for an in-memory model (pieces, scores, types in id order).

    ``byte_fallback`` defaults to "the model has BYTE pieces". ``trainer_fields`` sets any
    other ``TrainerSpec`` field (e.g. ``{"vocab_size": 8000}``).
    """
    proto = ModelProto()
    for piece, score, kind in zip(model.pieces, model.scores, model.types, strict=True):
        proto.pieces.add(piece=piece, score=score, type=kind)
    trainer = proto.trainer_spec
    trainer.model_type = MODEL_TYPES[model.model_type.upper()]
    trainer.vocab_size = len(model.pieces)
    has_bytes = any(t == PieceType.BYTE for t in model.types)
    trainer.byte_fallback = has_bytes if byte_fallback is None else byte_fallback
    trainer.unk_id = model.unk_id
    trainer.unk_piece = model.pieces[model.unk_id]
    for role in ("bos", "eos", "pad"):
        piece = {"bos": "<s>", "eos": "</s>", "pad": "<pad>"}[role]
        ids = _ids_of(model.pieces, model.types, piece)
        setattr(trainer, f"{role}_id", ids[0] if ids else -1)
    for key, value in (trainer_fields or {}).items():
        setattr(trainer, key, value)
    spec = proto.normalizer_spec
    spec.name = normalizer_name
    if precompiled_charsmap:
        spec.precompiled_charsmap = precompiled_charsmap
    spec.add_dummy_prefix = add_dummy_prefix
    spec.remove_extra_whitespaces = remove_extra_whitespaces
    spec.escape_whitespaces = escape_whitespaces
    return proto


def _ids_of(pieces: Iterable[str], types: Iterable[int], wanted: str) -> list[int]:
    return [
        i
        for i, (p, t) in enumerate(zip(pieces, types, strict=True))
        if p == wanted and t == PieceType.CONTROL
    ]


def save_sentencepiece_model(
    model: AnyModel | ModelProto,
    path: str | Path,
    **options: object,
) -> Path:
    """Write ``model`` as a ``.model`` file; ``options`` go to :func:`model_proto_from_model`."""
    proto = model if isinstance(model, ModelProto) else model_proto_from_model(model, **options)  # type: ignore[arg-type]
    out = Path(path)
    out.write_bytes(proto.SerializeToString())
    return out


__all__ = [
    "byte_piece",
    "load",
    "model_proto_from_model",
    "parse_model_proto",
    "save_sentencepiece_model",
    "tokenizer_from_bytes",
    "tokenizer_from_proto",
]
