"""The SentencePiece ``ModelProto`` schema, built in code with protobuf.

The generated ``sentencepiece_model_pb2`` ships inside the ``sentencepiece`` package, which is
only a test dependency. Here the same messages (``ModelProto``, ``ModelProto.SentencePiece``,
``TrainerSpec``, ``NormalizerSpec``) are declared as a ``FileDescriptorProto`` matching
sentencepiece's ``sentencepiece_model.proto`` (proto2, package ``sentencepiece``), added to a
*private* descriptor pool (so it never clashes with ``sentencepiece_model_pb2`` in the same
process) and turned into message classes. Fields we do not declare survive a read/write round
trip as protobuf unknown fields.

>>> proto = ModelProto()
>>> proto.normalizer_spec.add_dummy_prefix
True
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_OPT, _REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_TYPES = {
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
    "int32": _F.TYPE_INT32,
    "uint64": _F.TYPE_UINT64,
    "float": _F.TYPE_FLOAT,
    "bool": _F.TYPE_BOOL,
    "enum": _F.TYPE_ENUM,
    "message": _F.TYPE_MESSAGE,
}

# (name, number, label, type, type_name or None, default or None)
_Field = tuple[str, int, int, str, str | None, str | None]

_TRAINER_FIELDS: list[_Field] = [
    ("input", 1, _REP, "string", None, None),
    ("input_format", 7, _OPT, "string", None, None),
    ("model_prefix", 2, _OPT, "string", None, None),
    ("model_type", 3, _OPT, "enum", ".sentencepiece.TrainerSpec.ModelType", "UNIGRAM"),
    ("vocab_size", 4, _OPT, "int32", None, "8000"),
    ("accept_language", 5, _REP, "string", None, None),
    ("self_test_sample_size", 6, _OPT, "int32", None, "0"),
    ("character_coverage", 10, _OPT, "float", None, "0.9995"),
    ("input_sentence_size", 11, _OPT, "uint64", None, "0"),
    ("shuffle_input_sentence", 19, _OPT, "bool", None, "true"),
    ("mining_sentence_size", 12, _OPT, "int32", None, None),
    ("training_sentence_size", 13, _OPT, "int32", None, None),
    ("seed_sentencepiece_size", 14, _OPT, "int32", None, "1000000"),
    ("shrinking_factor", 15, _OPT, "float", None, "0.75"),
    ("max_sentence_length", 18, _OPT, "int32", None, "4192"),
    ("num_threads", 16, _OPT, "int32", None, "16"),
    ("num_sub_iterations", 17, _OPT, "int32", None, "2"),
    ("max_sentencepiece_length", 20, _OPT, "int32", None, "16"),
    ("split_by_unicode_script", 21, _OPT, "bool", None, "true"),
    ("split_by_number", 23, _OPT, "bool", None, "true"),
    ("split_by_whitespace", 22, _OPT, "bool", None, "true"),
    ("treat_whitespace_as_suffix", 24, _OPT, "bool", None, "false"),
    ("allow_whitespace_only_pieces", 26, _OPT, "bool", None, "false"),
    ("split_digits", 25, _OPT, "bool", None, "false"),
    ("pretokenization_delimiter", 53, _OPT, "string", None, ""),
    ("control_symbols", 30, _REP, "string", None, None),
    ("user_defined_symbols", 31, _REP, "string", None, None),
    ("required_chars", 36, _OPT, "string", None, None),
    ("byte_fallback", 35, _OPT, "bool", None, "false"),
    ("vocabulary_output_piece_score", 32, _OPT, "bool", None, "true"),
    ("hard_vocab_limit", 33, _OPT, "bool", None, "true"),
    ("use_all_vocab", 34, _OPT, "bool", None, "false"),
    ("unk_id", 40, _OPT, "int32", None, "0"),
    ("bos_id", 41, _OPT, "int32", None, "1"),
    ("eos_id", 42, _OPT, "int32", None, "2"),
    ("pad_id", 43, _OPT, "int32", None, "-1"),
    ("unk_piece", 45, _OPT, "string", None, "<unk>"),
    ("bos_piece", 46, _OPT, "string", None, "<s>"),
    ("eos_piece", 47, _OPT, "string", None, "</s>"),
    ("pad_piece", 48, _OPT, "string", None, "<pad>"),
    ("unk_surface", 44, _OPT, "string", None, " \u2047 "),
    ("train_extremely_large_corpus", 49, _OPT, "bool", None, "false"),
    ("seed_sentencepieces_file", 54, _OPT, "string", None, ""),
    ("auto_character_coverage", 55, _OPT, "bool", None, "false"),
    ("enable_differential_privacy", 50, _OPT, "bool", None, "false"),
    ("differential_privacy_noise_level", 51, _OPT, "float", None, "0"),
    ("differential_privacy_clipping_threshold", 52, _OPT, "uint64", None, "0"),
]

_NORMALIZER_FIELDS: list[_Field] = [
    ("name", 1, _OPT, "string", None, None),
    ("precompiled_charsmap", 2, _OPT, "bytes", None, None),
    ("add_dummy_prefix", 3, _OPT, "bool", None, "true"),
    ("remove_extra_whitespaces", 4, _OPT, "bool", None, "true"),
    ("escape_whitespaces", 5, _OPT, "bool", None, "true"),
    ("normalization_rule_tsv", 6, _OPT, "string", None, None),
]

_PIECE_FIELDS: list[_Field] = [
    ("piece", 1, _OPT, "string", None, None),
    ("score", 2, _OPT, "float", None, None),
    ("type", 3, _OPT, "enum", ".sentencepiece.ModelProto.SentencePiece.Type", "NORMAL"),
]

_MODEL_FIELDS: list[_Field] = [
    ("pieces", 1, _REP, "message", ".sentencepiece.ModelProto.SentencePiece", None),
    ("trainer_spec", 2, _OPT, "message", ".sentencepiece.TrainerSpec", None),
    ("normalizer_spec", 3, _OPT, "message", ".sentencepiece.NormalizerSpec", None),
    ("denormalizer_spec", 5, _OPT, "message", ".sentencepiece.NormalizerSpec", None),
]

MODEL_TYPES = {"UNIGRAM": 1, "BPE": 2, "WORD": 3, "CHAR": 4}
PIECE_TYPES = {"NORMAL": 1, "UNKNOWN": 2, "CONTROL": 3, "USER_DEFINED": 4, "BYTE": 6, "UNUSED": 5}
_EXTENSIONS = (200, 536870912)  # every message reserves "extensions 200 to max"


def _add_fields(msg: descriptor_pb2.DescriptorProto, fields: list[_Field]) -> None:
    for name, number, label, kind, type_name, default in fields:
        f = msg.field.add(name=name, number=number, label=label, type=_TYPES[kind])
        if type_name:
            f.type_name = type_name
        if default is not None:
            f.default_value = default


def _add_enum(msg: descriptor_pb2.DescriptorProto, name: str, values: dict[str, int]) -> None:
    enum = msg.enum_type.add(name=name)
    for value_name, number in values.items():
        enum.value.add(name=value_name, number=number)


def build_file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    """The ``FileDescriptorProto`` equivalent of sentencepiece's ``sentencepiece_model.proto``."""
    fd = descriptor_pb2.FileDescriptorProto(
        name="explorer/sentencepiece_model.proto", package="sentencepiece", syntax="proto2"
    )
    trainer = fd.message_type.add(name="TrainerSpec")
    _add_enum(trainer, "ModelType", MODEL_TYPES)
    _add_fields(trainer, _TRAINER_FIELDS)
    normalizer = fd.message_type.add(name="NormalizerSpec")
    _add_fields(normalizer, _NORMALIZER_FIELDS)
    model = fd.message_type.add(name="ModelProto")
    piece = model.nested_type.add(name="SentencePiece")
    _add_enum(piece, "Type", PIECE_TYPES)
    _add_fields(piece, _PIECE_FIELDS)
    _add_fields(model, _MODEL_FIELDS)
    for msg in (trainer, normalizer, model, piece):
        msg.extension_range.add(start=_EXTENSIONS[0], end=_EXTENSIONS[1])
    return fd


def _message_classes() -> tuple[Any, Any, Any]:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(build_file_descriptor())
    get = message_factory.GetMessageClass
    return (
        get(pool.FindMessageTypeByName("sentencepiece.ModelProto")),
        get(pool.FindMessageTypeByName("sentencepiece.TrainerSpec")),
        get(pool.FindMessageTypeByName("sentencepiece.NormalizerSpec")),
    )


ModelProto, TrainerSpec, NormalizerSpec = _message_classes()
"""Message classes: ``ModelProto()``, ``ModelProto.FromString(data)``, ``.SerializeToString()``."""
