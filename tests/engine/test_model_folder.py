"""Hugging Face model folders (tokenizer.json + config, or the slow-tokenizer files) against
transformers' own ``AutoTokenizer.from_pretrained(folder)``: ids, tokens, offsets; the folder
is found from any file in it; errors name the file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from references import require

from explorer.engine.errors import VocabFormatError
from explorer.engine.formats import detect_format, load_tokenizer
from explorer.engine.formats.gguf_reader import read_metadata
from explorer.engine.formats.model_folder import read_folder

DATA = Path(__file__).resolve().parents[1] / "data" / "multilingual.txt"
TEXT = DATA.read_text(encoding="utf-8")
EXTRA = "  leading spaces, <|endoftext|> and <s>x</s> <mask>, Tabs\tand\nnew lines 2024 😀‍🔥 "
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def auto(folder: Path):
    transformers = pytest.importorskip("transformers")
    return transformers.AutoTokenizer.from_pretrained(str(folder))


def assert_same(tok, ref, text: str, *, with_specials: bool = False) -> None:
    """ids, tokens and offsets as transformers gives them without special tokens (and, with
    ``with_specials``, with them)."""
    enc = tok.encode(text)
    r = ref(text, add_special_tokens=False, return_offsets_mapping=True)
    assert enc.ids == r["input_ids"]
    assert enc.pieces == ref.convert_ids_to_tokens(r["input_ids"])
    assert enc.offsets == [tuple(o) for o in r["offset_mapping"]]
    if with_specials:
        enc = tok.encode(text, add_special_tokens=True)
        r = ref(text, return_offsets_mapping=True)
        assert enc.ids == r["input_ids"]
        assert enc.offsets == [tuple(o) for o in r["offset_mapping"]]


@pytest.fixture(scope="module")
def gpt2_files() -> tuple[dict[str, int], list[str]]:
    meta = read_metadata(require("llama-cpp", "ggml-vocab-gpt-2.gguf"))
    tokens, merges = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.merges"]
    return {t: i for i, t in enumerate(tokens)}, merges


def write_bpe_folder(folder: Path, vocab: dict[str, int], merges: list[str],
                     config: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n",
                                       encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


def test_gpt2_vocab_json_merges_txt(tmp_path, gpt2_files):
    vocab, merges = gpt2_files
    folder = write_bpe_folder(tmp_path / "gpt2", vocab, merges, {
        "tokenizer_class": "GPT2Tokenizer", "model_max_length": 1024,
        "chat_template": CHATML})
    ref = auto(folder)
    for chosen in (folder, folder / "vocab.json", folder / "merges.txt",
                   folder / "tokenizer_config.json"):
        assert detect_format(chosen) == "folder"
        tok = load_tokenizer(chosen)
        assert tok.info.format == "folder" and tok.info.vocab_size == 50257
    for text in (TEXT, EXTRA):
        assert_same(tok, ref, text)
    assert tok.info.special_tokens == {"<|endoftext|>": 50256}
    cfg = read_folder(folder / "merges.txt")
    assert cfg.model_max_length == 1024 and cfg.chat_templates == {"default": CHATML}


def test_gpt2_folder_add_bos_and_eos_token(tmp_path, gpt2_files):
    vocab, merges = gpt2_files
    folder = write_bpe_folder(tmp_path / "gpt2bos", vocab, merges, {
        "tokenizer_class": "GPT2Tokenizer", "add_bos_token": True, "add_eos_token": True})
    ref, tok = auto(folder), load_tokenizer(folder)
    assert tok.info.extra["add_bos_token"] == "True"
    for text in ("Hello world", EXTRA):
        enc = tok.encode(text, add_special_tokens=True)
        r = ref(text, return_offsets_mapping=True)
        assert enc.ids == r["input_ids"] and enc.ids[0] == enc.ids[-1] == 50256
        assert enc.offsets == [tuple(o) for o in r["offset_mapping"]]


@pytest.mark.parametrize("prefix_space", [True, False])
def test_roberta_vocab_json_merges_txt(tmp_path, gpt2_files, prefix_space):
    """RobertaProcessing trims offsets past spaces even without special tokens, as HF does:
    compared on the multilingual lines (spaces, tabs, newlines) with and without them."""
    vocab, merges = gpt2_files
    vocab = dict(vocab)
    for extra in ("<s>", "<pad>", "</s>", "<unk>", "<mask>"):
        vocab[extra] = len(vocab)
    folder = write_bpe_folder(tmp_path / "roberta", vocab, merges, {
        "tokenizer_class": "RobertaTokenizer", "add_prefix_space": prefix_space})
    ref = auto(folder)
    tok = load_tokenizer(folder)
    assert {"<s>", "</s>", "<mask>", "<pad>", "<unk>"} <= set(tok.info.special_tokens)
    for text in (TEXT, EXTRA, "Hello  world, wörld 你好\n  x"):
        assert_same(tok, ref, text, with_specials=True)
    enc = tok.encode(" Hello world")
    assert enc.offsets[-1] == (7, 12)  # "Ġworld" without its space


def test_bert_vocab_txt_with_config(tmp_path):
    src = require("minilm-folder", "vocab.txt").parent
    folder = tmp_path / "bert"
    folder.mkdir()
    for name in ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copyfile(src / name, folder / name)
    ref = auto(folder)
    tok = load_tokenizer(folder / "special_tokens_map.json")
    for text in (TEXT, EXTRA + " [CLS] Ünïcödé ÀÉÎ"):
        assert_same(tok, ref, text)
    assert tok.encode("Hello [MASK] x", add_special_tokens=True).ids == \
        ref("Hello [MASK] x")["input_ids"]
    # the slow (pure Python) tokenizer agrees too
    slow = pytest.importorskip("transformers").BertTokenizerLegacy(
        vocab_file=str(folder / "vocab.txt"), do_lower_case=True)
    for line in TEXT.splitlines():
        assert tok.encode(line).ids == slow.encode(line, add_special_tokens=False)
    # do_lower_case / strip_accents from the config are honoured
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    cfg.update(do_lower_case=False, strip_accents=False)
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    ref, tok = auto(folder), load_tokenizer(folder)
    assert_same(tok, ref, "Ünïcödé ÀÉÎ Hello WORLD")


def test_folder_with_tokenizer_json_reads_the_config(tmp_path):
    src = require("minilm-folder", "tokenizer.json").parent
    folder = tmp_path / "minilm"
    shutil.copytree(src, folder)
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    cfg["chat_template"] = [{"name": "default", "template": CHATML},
                            {"name": "rag", "template": "{{ documents }}"}]
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    ref = auto(folder)
    tok = load_tokenizer(folder / "config.json")
    assert tok.info.format == "folder"
    assert tok.info.extra["chat templates"] == "default, rag"
    assert_same(tok, ref, TEXT)
    assert read_folder(folder).model_max_length == 512
    # the tokenizer.json itself, chosen directly, still opens as tokenizer.json
    assert load_tokenizer(folder / "tokenizer.json").encode(TEXT).ids == tok.encode(TEXT).ids


ADDED = {"content": "<|im_start|>", "special": True, "normalized": False, "lstrip": False,
         "rstrip": False, "single_word": False}


def test_config_added_tokens_join_the_vocabulary(tmp_path, gpt2_files):
    """added_tokens_decoder entries a tokenizer.json (or the slow files) lack are added."""
    src = require("minilm-folder", "tokenizer.json").parent
    folder = tmp_path / "minilm"
    shutil.copytree(src, folder)
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    cfg["added_tokens_decoder"] = {"30522": ADDED}
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    text = "hi <|im_start|>user x"
    ref, tok = auto(folder), load_tokenizer(folder)
    assert tok.info.vocab_size == len(ref) == 30523
    assert_same(tok, ref, text)
    vocab, merges = gpt2_files
    gpt2 = write_bpe_folder(tmp_path / "gpt2", vocab, merges, {
        "tokenizer_class": "GPT2Tokenizer", "added_tokens_decoder": {"50257": ADDED}})
    ref, tok = auto(gpt2), load_tokenizer(gpt2)
    assert tok.info.special_tokens == {"<|endoftext|>": 50256, "<|im_start|>": 50257}
    assert_same(tok, ref, text)


def test_folder_with_only_tokenizer_model(tmp_path):
    folder = tmp_path / "spm"
    folder.mkdir()
    shutil.copyfile(require("mistral-common", "tokenizer.model.v1"), folder / "tokenizer.model")
    (folder / "tokenizer_config.json").write_text('{"bos_token": "<s>"}')
    tok = load_tokenizer(folder)
    assert tok.info.format == "folder" and tok.info.vocab_size == 32000
    assert "from the model's own settings" in tok.info.extra["folder files"]


@pytest.mark.parametrize(("files", "needle"), [
    ({"vocab.json": "{}", "merges.txt": ""}, "vocab.json: must be a non-empty"),
    ({"vocab.json": '{"a": 0, "b": 1, "ab": 2}'}, "needs merges.txt"),
    ({"merges.txt": "a b\n"}, "needs vocab.json"),
    ({"vocab.json": '{"a": 0, "b": 1}', "merges.txt": "a b\n"}, "merges.txt:1: the merged"),
    ({"vocab.json": '{"a": 0, "b": 1, "ab": 2}', "merges.txt": "a b c\n"}, "merges.txt:1"),
    ({"vocab.json": '{"a": 0, "b": -1}', "merges.txt": ""}, "vocab.json: the id of 'b'"),
    ({"vocab.json": "[1]", "merges.txt": ""}, "vocab.json: must be"),
    ({"vocab.txt": "[PAD]\nhello\n"}, "unknown token '[UNK]'"),
    ({"vocab.txt": "[UNK]\n", "tokenizer_config.json": "{"}, "tokenizer_config.json: malformed"),
    ({"vocab.txt": "[UNK]\n", "tokenizer_config.json": '{"chat_template": 3}'},
     "chat_template must be"),
    ({"tokenizer_config.json": "{}"}, "no tokenizer files"),
    ({"vocab.txt": b"[UNK]\n\xff\n"}, "vocab.txt: not UTF-8"),
])
def test_bad_folders_name_the_file(tmp_path, files, needle):
    for name, content in files.items():
        p = tmp_path / name
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(VocabFormatError, match=re.escape(needle)):
        load_tokenizer(tmp_path)


def test_empty_folder(tmp_path):
    with pytest.raises(VocabFormatError, match="no tokenizer files"):
        load_tokenizer(tmp_path)


# --- add_bos_token / add_eos_token: what transformers v5 does with them -------------------

LLAMA_BOS_TEMPLATE = {
    "type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
               {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
             {"Sequence": {"id": "A", "type_id": 0}},
             {"SpecialToken": {"id": "<s>", "type_id": 1}},
             {"Sequence": {"id": "B", "type_id": 1}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}
FLAGS = [{}, {"add_bos_token": False, "add_eos_token": True},
         {"add_bos_token": True, "add_eos_token": True}]
LLAMA_TEXTS = [*TEXT.splitlines()[::8], "Hello wörld 你好 <s> x</s> end", "  two  spaces "]


@pytest.fixture(scope="module")
def llama_tokenizer_json(tmp_path_factory) -> dict:
    """A Llama-style tokenizer.json: Mistral's real SentencePiece model converted by
    transformers itself, given the ``<s> $A`` post-processor Llama 2's file has."""
    transformers = pytest.importorskip("transformers")
    src = tmp_path_factory.mktemp("llama_src")
    shutil.copyfile(require("mistral-common", "tokenizer.model.v1"), src / "tokenizer.model")
    (src / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>",
         "unk_token": "<unk>"}))
    out = tmp_path_factory.mktemp("llama_out")
    transformers.AutoTokenizer.from_pretrained(str(src)).save_pretrained(str(out))
    obj = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    obj["post_processor"] = LLAMA_BOS_TEMPLATE
    return obj


def assert_specials_like_transformers(folder: Path) -> None:
    ref, tok = auto(folder), load_tokenizer(folder)
    for text in LLAMA_TEXTS:
        assert tok.encode(text).ids == ref(text, add_special_tokens=False)["input_ids"], text
        assert tok.encode(text, add_special_tokens=True).ids == ref(text)["input_ids"], text


@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("cls", ["PreTrainedTokenizerFast", "LlamaTokenizer"])
def test_tokenizer_json_post_processor_wins_over_config_flags(tmp_path, llama_tokenizer_json,
                                                              cls, flags):
    """transformers v5 drops add_bos_token/add_eos_token from the config when the folder
    has a tokenizer.json: the file's post-processor (here ``<s> $A``) decides, even when
    the config says ``add_bos_token: false, add_eos_token: true``."""
    folder = tmp_path / "llama"
    folder.mkdir()
    (folder / "tokenizer.json").write_text(json.dumps(llama_tokenizer_json), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": cls, "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
         **flags}))
    assert_specials_like_transformers(folder)
    assert load_tokenizer(folder).encode("x", add_special_tokens=True).ids[0] == 1


@pytest.mark.parametrize("flags", FLAGS)
def test_tokenizer_model_folder_follows_config_flags(tmp_path, flags):
    """Without tokenizer.json transformers converts tokenizer.model and builds the
    post-processor from add_bos_token / add_eos_token (both default False)."""
    folder = tmp_path / "spm"
    folder.mkdir()
    shutil.copyfile(require("mistral-common", "tokenizer.model.v1"), folder / "tokenizer.model")
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", **flags}))
    assert_specials_like_transformers(folder)
    tok = load_tokenizer(folder)
    assert tok.supports_post_processor()
    want = [1] * bool(flags.get("add_bos_token")), [2] * bool(flags.get("add_eos_token"))
    ids = tok.encode("Hi", add_special_tokens=True).ids
    assert (ids[:len(want[0])], ids[len(ids) - len(want[1]):]) == want


# --- tokenizer.model + tokenizer_class LlamaTokenizer: transformers v5's own pipeline --------

SPECIAL_TEXTS = ["x</s> end", "<s>Hi <s> mid", " lead space", "  two  spaces ", "a <unk> b",
                 "</s>", "Hé<s>\tZ 你好</s>", "\nnew line", "[INST] Bonjour [/INST] réponse</s>",
                 "[TOOL_CALLS][{}]"]


@pytest.mark.parametrize(("model", "config"), [
    ("tokenizer.model.v1", {"tokenizer_class": "LlamaTokenizer"}),
    ("tokenizer.model.v1", {"tokenizer_class": "LlamaTokenizerFast", "legacy": True,
                            "add_bos_token": True}),
    ("mistral_instruct_tokenizer_240323.model.v3",
     {"tokenizer_class": "LlamaTokenizerFast", "legacy": False, "add_bos_token": True}),
    ("mistral_instruct_tokenizer_241114.model.v7",
     {"tokenizer_class": "LlamaTokenizer", "add_prefix_space": False, "add_eos_token": True}),
])
def test_llama_class_tokenizer_model_like_transformers(tmp_path, model, config):
    """transformers v5 rebuilds tokenizer.model as LlamaTokenizer's own pipeline (no
    normalizer, Metaspace prepend_scheme first/always/never, BPE from generated merges,
    special tokens split on the raw text): ids and offsets with and without special tokens,
    on multilingual text with special tokens inside it."""
    folder = tmp_path / "llama"
    folder.mkdir()
    shutil.copyfile(require("mistral-common", model), folder / "tokenizer.model")
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", **config}))
    ref, tok = auto(folder), load_tokenizer(folder)
    assert type(ref).__name__ == "LlamaTokenizer"
    assert config["tokenizer_class"] in tok.info.extra["folder files"]
    for text in [*LLAMA_TEXTS, *SPECIAL_TEXTS]:
        assert_same(tok, ref, text, with_specials=True)
        ids = ref(text)["input_ids"]
        assert tok.decode(ids) == ref.decode(ids)


@pytest.mark.parametrize(("model", "config"), [
    (("sentencepiece", "botchan_en_unigram_1000.model"), {}),
    (("sentencepiece", "kyoto_ja_unigram_8000.model"), {"legacy": False, "add_bos_token": True}),
    (("sentencepiece", "botchan_en_bpe_1000.model"), {"tokenizer_class": "TokenizersBackend"}),
    (("mistral-common", "mistral_instruct_tokenizer_240323.model.v3"),
     {"legacy": True, "add_eos_token": True}),
])
def test_tokenizer_model_without_class_like_transformers(tmp_path, model, config):
    """No model-specific tokenizer_class: transformers v5 rebuilds the pipeline from the
    model's own normalizer spec (charsmap, whitespace, dummy prefix by ``legacy``), Unigram or
    BPE by score, special tokens split on the raw text."""
    shutil.copyfile(require(*model), tmp_path / "tokenizer.model")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    ref, tok = auto(tmp_path), load_tokenizer(tmp_path)
    for text in [*LLAMA_TEXTS, *SPECIAL_TEXTS, "ﬁne ①② Ｔｅｓｔ  x"]:
        for specials in (False, True):
            enc = tok.encode(text, add_special_tokens=specials)
            r = ref(text, add_special_tokens=specials, return_offsets_mapping=True)
            assert enc.ids == r["input_ids"]
            assert enc.offsets == [tuple(o) for o in r["offset_mapping"]]
            # an unknown Unigram piece keeps its text, in HF tokenizers as here
            assert enc.pieces == ref.backend_tokenizer.encode(
                text, add_special_tokens=specials).tokens
        ids = ref(text)["input_ids"]
        assert tok.decode(ids) == ref.decode(ids)


@pytest.mark.parametrize(("model", "config"), [
    (("mistral-common", "tokenizer.model.v1"),
     {"tokenizer_class": "GemmaTokenizer", "add_bos_token": True}),
    (("sentencepiece", "botchan_en_unigram_1000.model"),
     {"tokenizer_class": "GemmaTokenizerFast", "bos_token": "<s>", "add_eos_token": True}),
])
def test_gemma_class_tokenizer_model_like_transformers(tmp_path, model, config):
    """GemmaTokenizer's own pipeline (spaces as ▁, no dummy prefix, BPE from the pieces,
    ``<bos>``/``<eos>``/``<pad>``/``<mask>`` defaults appended when the model lacks them)."""
    shutil.copyfile(require(*model), tmp_path / "tokenizer.model")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    ref, tok = auto(tmp_path), load_tokenizer(tmp_path)
    assert type(ref).__name__ == "GemmaTokenizer" and tok.info.vocab_size == len(ref)
    for text in [*LLAMA_TEXTS, *SPECIAL_TEXTS, "<bos>x<eos> y <pad>"]:
        assert_same(tok, ref, text, with_specials=True)


@pytest.mark.parametrize(("model", "config"), [
    (("mistral-common", "tokenizer.model.v1"), {"tokenizer_class": "T5Tokenizer"}),
    (("sentencepiece", "kyoto_ja_unigram_8000.model"),
     {"tokenizer_class": "T5TokenizerFast", "extra_ids": 10, "add_bos_token": True}),
])
def test_t5_class_tokenizer_model_like_transformers(tmp_path, model, config):
    """T5Tokenizer's own pipeline: the extra ids appended, unknown id 2, the charsmap,
    WhitespaceSplit + Metaspace, always ``$A </s>`` (the config's flags are ignored)."""
    shutil.copyfile(require(*model), tmp_path / "tokenizer.model")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    ref, tok = auto(tmp_path), load_tokenizer(tmp_path)
    assert type(ref).__name__ == "T5Tokenizer" and tok.info.vocab_size == len(ref)
    for text in [*LLAMA_TEXTS, *SPECIAL_TEXTS, "x<extra_id_0> y <pad></s>", "ﬁne ①② Ｔｅｓｔ"]:
        for specials in (False, True):
            enc = tok.encode(text, add_special_tokens=specials)
            r = ref(text, add_special_tokens=specials, return_offsets_mapping=True)
            assert enc.ids == r["input_ids"]
            assert enc.offsets == [tuple(o) for o in r["offset_mapping"]]
        assert tok.decode(enc.ids) == ref.decode(enc.ids)


def test_other_tokenizer_class_is_named_in_info(tmp_path):
    """A tokenizer_class whose rebuild is not modelled says so instead of passing silently."""
    shutil.copyfile(require("mistral-common", "tokenizer.model.v1"), tmp_path / "tokenizer.model")
    (tmp_path / "tokenizer_config.json").write_text('{"tokenizer_class": "XLNetTokenizer"}')
    assert "not modelled" in load_tokenizer(tmp_path).info.extra["tokenizer_class"]
