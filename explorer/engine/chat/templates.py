"""Where chat templates come from, with the special tokens and context length beside them.

:func:`chat_setup` looks at what the user opened:

- a model folder (or any file in it): ``tokenizer_config.json``'s ``chat_template`` (a
  string, or named templates ``[{name, template}]``), ``chat_template.json``/``.jinja``;
  special tokens from the config (``special_tokens_map`` in transformers' terms) and
  ``model_max_length``;
- a GGUF: ``tokenizer.chat_template`` and the named ``tokenizer.chat_template.<name>``;
  ``bos_token``/``eos_token``... from ``tokenizer.ggml.*_token_id``; ``<arch>.context_length``;
- anything else: no template of its own; special tokens guessed from common names.

Built-in templates (:data:`BUILTIN_TEMPLATES`, ChatML and the common ones) are always offered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.engine.errors import TokenizerError, VocabFormatError

BUILTIN_TEMPLATES: dict[str, str] = {
    "chatml": (
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
        "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
        "{{ '<|im_start|>assistant\n' }}{% endif %}"),
    "llama-3": (
        "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
        "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] "
        "| trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content "
        "%}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}"
        "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"),
    "mistral-instruct": (
        "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != "
        "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
        "user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}"
        "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == "
        "'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception("
        "'Only user and assistant roles are supported!') }}{% endif %}{% endfor %}"),
    "gemma": (
        "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System "
        "role not supported') }}{% endif %}{% for message in messages %}{% if (message['role']"
        " == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must "
        "alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == "
        "'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}"
        "{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + "
        "'<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}"
        "{{'<start_of_turn>model\n'}}{% endif %}"),
    "phi-3": (
        "{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + "
        "message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}"
        "{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == "
        "'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}"
        "{{ eos_token }}{% endif %}"),
}
"""Built-in templates by name: ChatML (Qwen and many fine-tunes), Llama 3, Mistral Instruct
v0.1 (``[INST]``), Gemma 1/2 and Phi-3, as their model cards' tokenizer configs ship them."""

SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
                "mask_token")
_GGUF_IDS = {"bos_token": "bos_token_id", "eos_token": "eos_token_id",
             "unk_token": "unknown_token_id", "sep_token": "seperator_token_id",
             "pad_token": "padding_token_id", "cls_token": "cls_token_id",
             "mask_token": "mask_token_id"}
_GUESSES = {
    "bos_token": ("<s>", "<|begin_of_text|>", "<bos>", "<|startoftext|>"),
    "eos_token": ("</s>", "<|end_of_text|>", "<|endoftext|>", "<eos>", "<|im_end|>"),
    "unk_token": ("<unk>", "[UNK]"),
    "pad_token": ("<pad>", "[PAD]"),
}


@dataclass(frozen=True)
class ChatSetup:
    """The templates offered for a vocabulary and what they are rendered with."""

    templates: dict[str, str] = field(default_factory=dict)
    """The file's own templates by name (``default`` first); built-ins are separate."""
    origin: str = ""
    """Where the file's templates came from (for display)."""
    variables: dict[str, str] = field(default_factory=dict)
    """Special tokens passed to templates (``bos_token``...)."""
    context_length: int | None = None

    def template(self, name: str) -> str:
        """The template called ``name``: the file's own, else a built-in."""
        if name in self.templates:
            return self.templates[name]
        if name in BUILTIN_TEMPLATES:
            return BUILTIN_TEMPLATES[name]
        known = ", ".join([*self.templates, *BUILTIN_TEMPLATES])
        raise TokenizerError(f"no chat template named {name!r}; known: {known}")

    def names(self) -> list[str]:
        """The file's templates, then the built-ins."""
        return [*self.templates, *(n for n in BUILTIN_TEMPLATES if n not in self.templates)]

    def default_name(self) -> str | None:
        """The template used when none is chosen: the file's ``default`` (or only) one."""
        if "default" in self.templates:
            return "default"
        return next(iter(self.templates), None)


def chat_setup(path: str | Path | None, specials: Mapping[str, int] | None = None) -> ChatSetup:
    """The chat setup for a vocabulary at ``path`` (None: a bundled one, built-ins only).

    ``specials``: the loaded tokenizer's special tokens, used to guess ``bos_token`` etc.
    when the file does not name them.
    """
    guessed = _guess(specials or {})
    if path is None:
        return ChatSetup(variables=guessed)
    p = Path(path)
    from explorer.engine.formats import detect_format

    fmt = detect_format(p)
    if fmt == "gguf":
        return _gguf_setup(p, guessed)
    from explorer.engine.formats.model_folder import folder_root, has_tokenizer, read_folder

    if fmt == "folder" or (p.name in ("tokenizer.json", "tokenizer.model")
                           and has_tokenizer(p)
                           and (folder_root(p) / "tokenizer_config.json").is_file()):
        folder = read_folder(p)
        variables = {k: v for k in SPECIAL_KEYS if (v := folder.token(k)) is not None}
        templates = dict(sorted(folder.chat_templates.items(), key=lambda kv: kv[0] != "default"))
        return ChatSetup(templates, str(folder.root / "tokenizer_config.json"),
                         variables or guessed, folder.model_max_length)
    return ChatSetup(variables=guessed)


def _guess(specials: Mapping[str, int]) -> dict[str, str]:
    out = {}
    for key, names in _GUESSES.items():
        found = next((n for n in names if n in specials), None)
        if found is not None:
            out[key] = found
    return out


def _gguf_setup(path: Path, guessed: dict[str, str]) -> ChatSetup:
    from explorer.engine.formats.gguf_reader import read_metadata

    try:
        meta: dict[str, Any] = read_metadata(path)
    except (OSError, ValueError, IndexError, UnicodeDecodeError) as e:
        raise VocabFormatError(f"{path}: cannot read GGUF metadata ({e})") from None
    templates: dict[str, str] = {}
    if isinstance(meta.get("tokenizer.chat_template"), str):
        templates["default"] = meta["tokenizer.chat_template"]
    prefix = "tokenizer.chat_template."
    for key, value in meta.items():
        if key.startswith(prefix) and isinstance(value, str):
            templates[key[len(prefix):]] = value
    tokens = meta.get("tokenizer.ggml.tokens")
    variables = dict(guessed)
    if isinstance(tokens, list):
        for key, id_key in _GGUF_IDS.items():
            tid = meta.get("tokenizer.ggml." + id_key)
            if isinstance(tid, int) and 0 <= tid < len(tokens) and isinstance(tokens[tid], str):
                variables[key] = tokens[tid]
    arch = meta.get("general.architecture")
    length = meta.get(f"{arch}.context_length") if isinstance(arch, str) else None
    return ChatSetup(templates, f"{path.name}: tokenizer.chat_template", variables,
                     length if isinstance(length, int) and length > 0 else None)
