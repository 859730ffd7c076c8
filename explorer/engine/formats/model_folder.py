"""Hugging Face model folders: the tokenizer files a downloaded model comes with.

A folder is opened as the folder itself or through any file in it (``vocab.txt``,
``tokenizer_config.json``...). What it holds, in the order transformers prefers it:

- ``tokenizer.json`` (the fast tokenizer) -> :mod:`hf_json`;
- ``vocab.json`` + ``merges.txt``: GPT-2 / RoBERTa byte-level BPE, built as transformers v5's
  ``GPT2Tokenizer`` / ``RobertaTokenizer`` build it (BPE without unk, ``ByteLevel``
  pre-tokenizer with ``add_prefix_space``, ``ByteLevel`` decoder);
- ``vocab.txt``: BERT WordPiece as ``BertTokenizer`` builds it (``BertNormalizer`` with
  ``do_lower_case``, ``tokenize_chinese_chars``, ``strip_accents`` from the config,
  ``BertPreTokenizer``, ``[CLS] $A [SEP]``);
- ``tokenizer.model``: SentencePiece -> :mod:`sentencepiece_model`.

``tokenizer_config.json`` (and ``special_tokens_map.json``) add the special tokens (its
``added_tokens_decoder``, else the ``*_token`` entries), ``model_max_length`` and the chat
templates (:class:`ModelFolder`). Every error names the file and what is wrong; nothing
half-loads.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.engine.errors import VocabFormatError
from explorer.engine.hf.jsonutil import parse_json_text
from explorer.engine.hf.post_processors import AddSpecialPost
from explorer.engine.tokenizer import Tokenizer

TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "merges.txt", "vocab.txt", "tokenizer.model")
SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
                "mask_token")
UNKNOWN_LENGTH = 10**12
"""transformers writes ``model_max_length = 1e30`` when it does not know; above this: unknown."""


@dataclass(frozen=True)
class ModelFolder:
    """What a model folder says besides its vocabulary."""

    root: Path
    config: dict[str, Any] = field(default_factory=dict)
    """``tokenizer_config.json`` (empty when absent)."""
    special_tokens_map: dict[str, Any] = field(default_factory=dict)
    chat_templates: dict[str, str] = field(default_factory=dict)
    """Template name -> Jinja source; the unnamed template is ``"default"``."""
    model_max_length: int | None = None

    def token(self, key: str) -> str | None:
        """The ``bos_token``/``eos_token``/... string of the config (or the special map)."""
        for source in (self.config, self.special_tokens_map):
            value = _token_text(source.get(key))
            if value is not None:
                return value
        return None

    def flag(self, key: str, default: bool = False) -> bool:
        """A boolean of the config (``add_bos_token``, ``do_lower_case``...)."""
        value = self.config.get(key, default)
        return value if isinstance(value, bool) else default


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def folder_root(path: str | Path) -> Path:
    """The folder of ``path`` (itself when it is a directory)."""
    p = Path(path)
    return p if p.is_dir() else p.parent


def _read_json(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise VocabFormatError(f"{path}: cannot read ({e.strerror})") from None
    return parse_json_text(data, str(path))


def _json_object(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    obj = _read_json(path)
    if not isinstance(obj, dict):
        raise VocabFormatError(f"{path}: the top level must be a JSON object")
    return obj


def _templates(root: Path, config: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    cfg = root / "tokenizer_config.json"
    value = config.get("chat_template")
    if isinstance(value, str):
        out["default"] = value
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if not (isinstance(item, dict) and isinstance(item.get("name"), str)
                    and isinstance(item.get("template"), str)):
                raise VocabFormatError(f"{cfg}: chat_template[{i}] is not {{name, template}}")
            out[item["name"]] = item["template"]
    elif value is not None:
        raise VocabFormatError(f"{cfg}: chat_template must be a string or a list of "
                               "{name, template}")
    as_json = root / "chat_template.json"
    if as_json.is_file():
        obj = _read_json(as_json)
        if not isinstance(obj, dict) or not isinstance(obj.get("chat_template"), str):
            raise VocabFormatError(f"{as_json}: expected {{\"chat_template\": \"...\"}}")
        out["default"] = obj["chat_template"]
    jinja = root / "chat_template.jinja"
    extra = root / "additional_chat_templates"
    for name, path in ([("default", jinja)] + [(p.stem, p) for p in sorted(extra.glob("*.jinja"))]
                       if extra.is_dir() else [("default", jinja)]):
        if path.is_file():
            try:
                out[name] = path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise VocabFormatError(f"{path}: cannot read the chat template ({e})") from None
    return out


def read_folder(path: str | Path) -> ModelFolder:
    """The configuration of the model folder holding ``path``."""
    root = folder_root(path)
    config = _json_object(root / "tokenizer_config.json")
    special_map = _json_object(root / "special_tokens_map.json")
    length = config.get("model_max_length")
    if not (type(length) is int and 0 < length < UNKNOWN_LENGTH):
        model_cfg = _json_object(root / "config.json") if (root / "config.json").is_file() else {}
        length = model_cfg.get("max_position_embeddings")
        if not (type(length) is int and 0 < length < UNKNOWN_LENGTH):
            length = None
    return ModelFolder(root, config, special_map, _templates(root, config), length)


def has_tokenizer(path: str | Path) -> bool:
    """True when the folder of ``path`` holds tokenizer files (or a tokenizer config)."""
    root = folder_root(path)
    return any((root / n).is_file() for n in (*TOKENIZER_FILES, "tokenizer_config.json"))


def load(path: Path, *, preset: str | None = None) -> Tokenizer:
    """Load the tokenizer of the model folder holding ``path``."""
    root = folder_root(path)
    if not root.is_dir():
        raise VocabFormatError(f"{path}: no such folder")
    folder = read_folder(root)
    if (root / "tokenizer.json").is_file():
        return _relabel(_fast(folder), folder, "tokenizer.json")
    if (root / "vocab.json").is_file() or (root / "merges.txt").is_file():
        return _relabel(_byte_level_bpe(folder), folder, "vocab.json + merges.txt")
    if (root / "vocab.txt").is_file():
        return _relabel(_wordpiece(folder), folder, "vocab.txt")
    if (root / "tokenizer.model").is_file():
        from explorer.engine.formats import sentencepiece_model, spm_rebuild

        cls = str(folder.config.get("tokenizer_class", ""))
        if cls in spm_rebuild.LLAMA_CLASSES:
            how = (f"transformers v5 rebuilds it as {cls}: no normalizer, Metaspace "
                   f"prepend_scheme {spm_rebuild.prepend_scheme(folder)}, BPE with merges "
                   "from the piece ids")
            return _relabel(_rebuilt(folder, spm_rebuild.llama_pipeline), folder,
                            f"tokenizer.model ({how})")
        if cls in spm_rebuild.GEMMA_CLASSES:
            how = (f"transformers v5 rebuilds it as {cls}: spaces as \u2581, no dummy prefix, "
                   "BPE with merges from the piece ids")
            return _relabel(_rebuilt(folder, spm_rebuild.gemma_pipeline), folder,
                            f"tokenizer.model ({how})")
        if cls in spm_rebuild.T5_CLASSES:
            how = (f"transformers v5 rebuilds it as {cls}: Unigram with the extra ids, unknown "
                   "id 2, WhitespaceSplit + Metaspace, $A </s>")
            return _relabel(_rebuilt(folder, spm_rebuild.t5_pipeline), folder,
                            f"tokenizer.model ({how})")
        if cls in spm_rebuild.GENERIC_CLASSES:
            how = ("transformers v5 rebuilds it from the model's own settings, legacy = "
                   f"{str(folder.flag('legacy', True)).lower()}")
            return _relabel(_rebuilt(folder, spm_rebuild.proto_pipeline), folder,
                            f"tokenizer.model ({how})")
        sp = sentencepiece_model.load(root / "tokenizer.model")
        sp = sp.with_post_processor(_sp_bos_eos(folder, list(sp.model.pieces)))
        sp._extra["tokenizer_class"] = (
            f"{cls}: transformers v5 rebuilds tokenizer.model with that class's own "
            "pipeline, not modelled here; this is SentencePiece's encoding and ids or "
            "offsets can differ from AutoTokenizer")
        return sp
    raise VocabFormatError(f"{root}: no tokenizer files in this folder (expected one of "
                           f"{', '.join(TOKENIZER_FILES)})")


def _rebuilt(folder: ModelFolder, build: Callable[[ModelFolder, Any], Tokenizer]) -> Tokenizer:
    """``tokenizer.model`` rebuilt as transformers v5 does (see :mod:`spm_rebuild`)."""
    from explorer.engine.formats.sentencepiece_model import parse_model_proto

    path = folder.root / "tokenizer.model"
    try:
        data = path.read_bytes()
    except OSError as e:
        raise VocabFormatError(f"{path}: cannot read ({e.strerror})") from None
    return build(folder, parse_model_proto(data, source=str(path)))


def _relabel(tok: Any, folder: ModelFolder, files: str) -> Tokenizer:
    """The pipeline tokenizer named after the folder, with what the folder adds in ``info``."""
    from explorer.engine.hf.pipeline import PipelineTokenizer

    extra = {"folder files": files}
    if folder.model_max_length:
        extra["model_max_length"] = str(folder.model_max_length)
    if folder.chat_templates:
        extra["chat templates"] = ", ".join(folder.chat_templates)
    for key in ("add_bos_token", "add_eos_token"):
        if key in folder.config:
            extra[key] = str(folder.config[key]) + (
                " (ignored: tokenizer.json's post-processor decides, as in transformers v5)"
                if files == "tokenizer.json" else "")
    return PipelineTokenizer(tok.c, name=folder.root.name or str(folder.root), fmt="folder",
                             extra={**tok.info.extra, **extra})


def _fast(folder: ModelFolder) -> Tokenizer:
    """tokenizer.json, plus the config's ``added_tokens_decoder`` entries it lacks (what
    transformers adds when it loads the folder)."""
    from explorer.engine.formats.hf_json import from_dict
    from explorer.engine.hf.parse import loads

    path = folder.root / "tokenizer.json"
    try:
        data = path.read_bytes()
    except OSError as e:
        raise VocabFormatError(f"{path}: cannot read ({e.strerror})") from None
    obj = loads(data, str(path))
    added = obj.get("added_tokens") or []
    if folder.config.get("added_tokens_decoder") and isinstance(added, list):
        model = obj.get("model")
        vocab = model.get("vocab") if isinstance(model, dict) else None
        known = {t.get("id") for t in added if isinstance(t, dict)}
        extra = [t for i, t in sorted(_decoder_tokens(
            folder, len(vocab) if isinstance(vocab, dict | list) else 0).items())
            if i not in known]
        obj["added_tokens"] = [*added, *extra]
    return from_dict(obj, name=path.name)


# ---------------------------------------------------------------- slow-tokenizer files


def _vocab_json(path: Path) -> dict[str, int]:
    if not path.is_file():
        raise VocabFormatError(f"{path.parent}: merges.txt needs vocab.json beside it")
    vocab = _read_json(path)
    if not isinstance(vocab, dict) or not vocab:
        raise VocabFormatError(f"{path}: must be a non-empty JSON object of token -> id")
    for token, i in vocab.items():
        if type(i) is not int or i < 0:
            raise VocabFormatError(f"{path}: the id of {token!r} is not a non-negative integer")
    if len(set(vocab.values())) != len(vocab):
        raise VocabFormatError(f"{path}: two tokens share one id")
    if max(vocab.values()) >= 2 * len(vocab) + 65536:
        raise VocabFormatError(f"{path}: id {max(vocab.values())} is far beyond the "
                               f"{len(vocab)} tokens")
    return vocab


def _merges_txt(path: Path, vocab: dict[str, int]) -> list[list[str]]:
    if not path.is_file():
        raise VocabFormatError(f"{path.parent}: vocab.json needs merges.txt beside it")
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise VocabFormatError(f"{path}: cannot read ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise VocabFormatError(f"{path}: not UTF-8 (byte {e.start})") from None
    merges: list[list[str]] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if not line or line.startswith("#"):  # "#version: 0.2" (what transformers skips)
            continue
        parts = line.split()
        if len(parts) != 2:
            raise VocabFormatError(f"{path}:{lineno}: expected 'left right'")
        for part in parts:
            if part not in vocab:
                raise VocabFormatError(f"{path}:{lineno}: {part!r} is not in vocab.json")
        if parts[0] + parts[1] not in vocab:
            raise VocabFormatError(f"{path}:{lineno}: the merged token "
                                   f"{parts[0] + parts[1]!r} is not in vocab.json")
        merges.append(parts)
    return merges


def _decoder_tokens(folder: ModelFolder, size: int) -> dict[int, dict[str, Any]]:
    """The config's ``added_tokens_decoder`` as tokenizer.json ``added_tokens`` by id
    (``size``: the vocabulary's size, bounding the ids)."""
    cfg = folder.root / "tokenizer_config.json"
    decoder = folder.config.get("added_tokens_decoder")
    out: dict[int, dict[str, Any]] = {}
    if decoder is None:
        return out
    if not isinstance(decoder, dict):
        raise VocabFormatError(f"{cfg}: added_tokens_decoder must be an object")
    for key, entry in decoder.items():
        if not (re.fullmatch(r"[0-9]{1,18}", key) and isinstance(entry, dict)
                and isinstance(entry.get("content"), str)):
            raise VocabFormatError(f"{cfg}: added_tokens_decoder[{key!r}] is not "
                                   "id -> {content, ...}")
        if int(key) >= 2 * size + 65536:
            raise VocabFormatError(f"{cfg}: added token id {key} is far beyond the "
                                   f"{size} tokens")
        out[int(key)] = {"id": int(key), "content": entry["content"],
                         "single_word": bool(entry.get("single_word", False)),
                         "lstrip": bool(entry.get("lstrip", False)),
                         "rstrip": bool(entry.get("rstrip", False)),
                         "normalized": bool(entry.get("normalized", False)),
                         "special": bool(entry.get("special", True))}
    return out


def _added_tokens(folder: ModelFolder, vocab: dict[str, int],
                  defaults: dict[str, str]) -> list[dict[str, Any]]:
    """tokenizer.json ``added_tokens`` for a slow folder: ``added_tokens_decoder`` when the
    config has it, plus its special ``*_token`` entries (class defaults for missing keys)."""
    out = _decoder_tokens(folder, len(vocab))
    next_id = max([*vocab.values(), *out]) + 1
    for key in SPECIAL_KEYS:
        content = folder.token(key) if (key in folder.config or key in folder.special_tokens_map) \
            else defaults.get(key)
        if content is None or any(t["content"] == content for t in out.values()):
            continue
        tid = vocab.get(content)
        if tid is None:  # transformers appends a special token missing from the vocabulary
            tid = next_id
            next_id += 1
        out[tid] = {"id": tid, "content": content, "single_word": False, "lstrip": False,
                    "rstrip": False, "normalized": False, "special": True}
    return [out[i] for i in sorted(out)]


def _byte_level_bpe(folder: ModelFolder) -> Tokenizer:
    from explorer.engine.formats.hf_json import from_dict

    vocab = _vocab_json(folder.root / "vocab.json")
    merges = _merges_txt(folder.root / "merges.txt", vocab)
    roberta = "roberta" in str(folder.config.get("tokenizer_class", "")).lower()
    prefix = folder.flag("add_prefix_space")
    defaults = ({"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>",
                 "cls_token": "<s>", "unk_token": "<unk>", "pad_token": "<pad>",
                 "mask_token": "<mask>"} if roberta else
                {"unk_token": "<|endoftext|>", "bos_token": "<|endoftext|>",
                 "eos_token": "<|endoftext|>"})
    added = _added_tokens(folder, vocab, defaults)
    ids = {t["content"]: t["id"] for t in added}
    sep, cls = folder.token("sep_token") or "</s>", folder.token("cls_token") or "<s>"
    if roberta:
        post = ({"type": "RobertaProcessing", "sep": [sep, ids[sep]], "cls": [cls, ids[cls]],
                 "trim_offsets": folder.flag("trim_offsets", True), "add_prefix_space": prefix}
                if sep in ids and cls in ids else None)
    else:
        post = _bos_eos_processor(folder, ids, defaults)
    obj = {
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": prefix,
                          "trim_offsets": True, "use_regex": True},
        "post_processor": post,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "",
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }
    return from_dict(obj, name=folder.root.name)


def _bos_eos_processor(folder: ModelFolder, ids: dict[str, int],
                       defaults: dict[str, str]) -> dict[str, Any]:
    """transformers v5's ``update_post_processor`` for a tokenizer without one:
    ``[bos] $A [eos]`` by ``add_bos_token`` / ``add_eos_token`` (both default False)."""
    single: list[dict[str, Any]] = [{"Sequence": {"id": "A", "type_id": 0}}]
    specials: dict[str, Any] = {}
    for key, flag, front in (("bos_token", "add_bos_token", True),
                             ("eos_token", "add_eos_token", False)):
        token = folder.token(key) or defaults.get(key)
        if folder.flag(flag) and token is not None and token in ids:
            piece = {"SpecialToken": {"id": token, "type_id": 0}}
            single = [piece, *single] if front else [*single, piece]
            specials[token] = {"id": token, "ids": [ids[token]], "tokens": [token]}
    return {"type": "TemplateProcessing", "single": single, "pair": single,
            "special_tokens": specials}


def _sp_bos_eos(folder: ModelFolder, pieces: list[str]) -> AddSpecialPost:
    """transformers v5 for a folder with only ``tokenizer.model``: the converted tokenizer's
    post-processor is ``[bos] $A [eos]`` by the config's ``add_bos_token`` /
    ``add_eos_token`` (both default False; ``bos_token``/``eos_token`` default to the model's
    ``<s>``/``</s>``). With a ``tokenizer.json`` transformers ignores both flags: the file's
    post-processor decides (see :func:`_fast`)."""
    ids = {p: i for i, p in reversed(list(enumerate(pieces)))}
    parts: list[list[tuple[int, str]]] = [[], []]
    why = []
    for k, (key, flag, default) in enumerate((("bos_token", "add_bos_token", "<s>"),
                                              ("eos_token", "add_eos_token", "</s>"))):
        token = folder.token(key) or default
        if folder.flag(flag) and token in ids:
            parts[k].append((ids[token], token))
        if flag in folder.config:
            why.append(f"{flag} = {str(folder.flag(flag)).lower()}")
    rule = ("tokenizer_config.json: " + ", ".join(why) if why
            else "no add_bos_token/add_eos_token in tokenizer_config.json: nothing added")
    return AddSpecialPost(tuple(parts[0]), tuple(parts[1]), rule)


def _vocab_txt(path: Path) -> dict[str, int]:
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise VocabFormatError(f"{path}: cannot read ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise VocabFormatError(f"{path}: not UTF-8 (byte {e.start})") from None
    vocab: dict[str, int] = {}
    # transformers: for index, token in enumerate(open(f)): vocab[token.rstrip("\n")] = index
    # (text mode: \r\n and \r read as \n; a repeated token keeps its last index)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, token in enumerate(lines):
        vocab[token] = i
    if not vocab:
        raise VocabFormatError(f"{path}: no tokens")
    return vocab


def _wordpiece(folder: ModelFolder) -> Tokenizer:
    from explorer.engine.formats.hf_json import from_dict

    path = folder.root / "vocab.txt"
    vocab = _vocab_txt(path)
    defaults = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
                "cls_token": "[CLS]", "mask_token": "[MASK]"}
    unk = folder.token("unk_token") or "[UNK]"
    if unk not in vocab:
        raise VocabFormatError(f"{path}: the unknown token {unk!r} is not in the vocabulary")
    cls, sep = folder.token("cls_token") or "[CLS]", folder.token("sep_token") or "[SEP]"
    strip = folder.config.get("strip_accents")
    obj = {
        "added_tokens": _added_tokens(folder, vocab, defaults),
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": folder.flag("tokenize_chinese_chars", True),
                       "strip_accents": strip if isinstance(strip, bool) else None,
                       "lowercase": folder.flag("do_lower_case", True)},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": ({"type": "TemplateProcessing",
                            "single": [{"SpecialToken": {"id": cls, "type_id": 0}},
                                       {"Sequence": {"id": "A", "type_id": 0}},
                                       {"SpecialToken": {"id": sep, "type_id": 0}}],
                            "pair": [{"SpecialToken": {"id": cls, "type_id": 0}},
                                     {"Sequence": {"id": "A", "type_id": 0}},
                                     {"SpecialToken": {"id": sep, "type_id": 0}},
                                     {"Sequence": {"id": "B", "type_id": 1}},
                                     {"SpecialToken": {"id": sep, "type_id": 1}}],
                            "special_tokens": {
                                t: {"id": t, "ids": [vocab[t]], "tokens": [t]}
                                for t in (cls, sep)}}
                           if cls in vocab and sep in vocab else None),
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": unk, "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }
    return from_dict(obj, name=folder.root.name)
