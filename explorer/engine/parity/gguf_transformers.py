"""transformers' GGUF tokenizer conversion as a parity implementation for ``.gguf`` files.

``AutoTokenizer.from_pretrained(folder, gguf_file=NAME)`` reads the file's tokenizer metadata
(``transformers.integrations.gguf.get_gguf_tokenizer``) and converts it to an HF
``tokenizers.Tokenizer`` (``convert_gguf_tokenizer``): the vocabulary and merges (rebuilt from
scores where the file has none), the control and user-defined tokens as added tokens and, for
the ``tokenizer.ggml.pre`` values transformers knows, the split regex. That conversion is a
common source of differences with llama.cpp (missing split regexes, no ``ignore_merges``,
SentencePiece whitespace handling), which is why it is worth comparing.

transformers 5.x reads the metadata with a reader module that imports ``torch`` (not a
dependency of ours, nor needed for a tokenizer), so ``from_pretrained(gguf_file=...)`` fails
without torch. Here the key/value metadata is read with the engine's GGUF metadata reader
(plain Python values, as transformers' reader returns them; the tests check it equals what
llama.cpp's ``gguf`` package reads, which takes ~15 s instead of ~0.3 s on a 128k vocabulary)
into the same dictionary under transformers' own key mapping (``GGUF_TOKENIZER_MAPPING``), and
transformers' ``convert_gguf_tokenizer`` does the rest: the tokenizer is exactly the backend
``AutoTokenizer`` builds from the file. Special tokens are not added (parity compares
``add_special_tokens=False``), so the wrapper's BOS/EOS settings do not matter.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

NAME = "transformers (GGUF)"


def import_transformers() -> Any:
    """``transformers``, imported without its "PyTorch was not found" notice on stderr (a
    tokenizer needs no torch; the CLI's stderr is for errors)."""
    before = os.environ.get("TRANSFORMERS_VERBOSITY")
    os.environ["TRANSFORMERS_VERBOSITY"] = "error"
    try:
        import transformers
    finally:
        if before is None:
            os.environ.pop("TRANSFORMERS_VERBOSITY", None)
        else:
            os.environ["TRANSFORMERS_VERBOSITY"] = before
    return transformers


def read_gguf_fields(path: str | Path) -> dict[str, Any]:
    """Every metadata key of a GGUF file as plain Python values (8-bit arrays as lists of
    ints, as transformers' reader and ``gguf``'s ``ReaderField.contents()`` give them)."""
    from explorer.engine.formats.gguf_reader import read_metadata

    return {key: list(value) if isinstance(value, bytes) else value
            for key, value in read_metadata(Path(path)).items()}


def gguf_tokenizer_dict(metadata: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(architecture, tokenizer_dict)`` as transformers' ``get_gguf_tokenizer`` builds them."""
    from transformers.integrations.gguf.gguf_tokenizer_mapping import GGUF_TOKENIZER_MAPPING

    renames = GGUF_TOKENIZER_MAPPING["tokenizer"]
    tokenizer = {name: metadata[f"tokenizer.{key}"] for key, name in renames.items()
                 if f"tokenizer.{key}" in metadata}
    return str(metadata["general.architecture"]), tokenizer


def transformers_gguf_tokenizer(path: str | Path) -> Any:
    """The HF ``tokenizers.Tokenizer`` transformers converts ``path``'s vocabulary into.

    Raises ``ValueError`` (transformers' own message) for a tokenizer model it cannot convert
    (``bert``, for instance).
    """
    import_transformers()
    from transformers.integrations.gguf.gguf_tokenizer_mapping import convert_gguf_tokenizer
    from transformers.utils import logging

    architecture, tokenizer = gguf_tokenizer_dict(read_gguf_fields(path))
    verbosity = logging.get_verbosity()
    logging.set_verbosity_error()  # "no merges in the file; deriving them" is not for users
    try:
        backend, _ = convert_gguf_tokenizer(architecture, tokenizer)
    finally:
        logging.set_verbosity(verbosity)
    return backend
