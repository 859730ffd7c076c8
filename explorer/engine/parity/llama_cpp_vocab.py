"""A GGUF vocabulary loaded by llama.cpp (llama-cpp-python's C API), with no context and no
log lines.

``llama_cpp.Llama(vocab_only=True)`` still creates a context (which prints
"llama_context: n_ctx_seq (512) > n_ctx_train (0)" on stderr whatever ``verbose`` says) and
frees it in ``__del__``, which fails noisily at interpreter exit. Here the model is loaded with
``vocab_only`` through ``llama_model_load_from_file``, tokenized with ``llama_tokenize`` on its
``llama_vocab``, and freed by a ``weakref.finalize``; llama.cpp's log goes to a no-op callback
kept alive for the process.
"""

from __future__ import annotations

import ctypes
import weakref
from pathlib import Path
from typing import Any

_QUIET: dict[str, Any] = {}


def silence_llama_cpp(llama_cpp: Any) -> None:
    """Send llama.cpp's C-level log to a no-op callback (once per process)."""
    if "callback" in _QUIET:
        return
    callback = llama_cpp.llama_log_callback(lambda _level, _text, _user: None)
    _QUIET["callback"] = callback  # ctypes callbacks must outlive their registration
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
    llama_cpp.llama_backend_init()


class LlamaCppVocab:
    """The vocabulary of one GGUF file in llama.cpp."""

    def __init__(self, llama_cpp: Any, path: Path) -> None:
        silence_llama_cpp(llama_cpp)
        self._lib = llama_cpp
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        model = llama_cpp.llama_model_load_from_file(str(path).encode("utf-8"), params)
        if not model:
            raise ValueError(f"llama.cpp cannot load {Path(path).name}")
        self._finalizer = weakref.finalize(self, llama_cpp.llama_model_free, model)
        self._vocab = llama_cpp.llama_model_get_vocab(model)
        self.kind: int = llama_cpp.llama_vocab_type(self._vocab)
        """``LLAMA_VOCAB_TYPE_*`` (SPM, BPE, WPM, UGM, ...)."""

    def tokenize(self, data: bytes, *, add_special: bool = False,
                 parse_special: bool = True) -> list[int]:
        """``llama_tokenize(vocab, data, add_special, parse_special)``."""
        lib = self._lib
        size = len(data) + 8
        while True:
            out = (lib.llama_token * size)()
            n = lib.llama_tokenize(self._vocab, data, len(data), out, size, add_special,
                                   parse_special)
            if n >= 0:
                return list(out[:n])
            size = -n

    def piece(self, token: int, *, special: bool = True) -> bytes:
        """``llama_token_to_piece(vocab, token, special)``: the bytes token ``token`` stands
        for."""
        lib = self._lib
        size = 64
        while True:
            buf = ctypes.create_string_buffer(size)
            n = lib.llama_token_to_piece(self._vocab, token, buf, size, 0, special)
            if n >= 0:
                return buf.raw[:n]
            size = -n

    def close(self) -> None:
        """Free the model now."""
        self._finalizer()
