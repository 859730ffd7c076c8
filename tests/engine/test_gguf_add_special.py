"""GGUF ``encode(text, add_special_tokens=True)``: llama.cpp's ``tokenize(text, add_special=true)``.

The expected BOS/EOS below were derived by hand from each real file's metadata and the rules
of llama.cpp's ``src/llama-vocab.cpp`` (defaults by ``tokenizer.ggml.model``, the llama3-family
``pre`` values, the ``add_bos_token``/``add_eos_token`` keys, BERT's unconditional
``[CLS]``/``[SEP]``, Gemma 4's forced BOS); between them come exactly the ids of llama.cpp's own
``.inp``/``.out`` test vectors (which are encoded without ``add_special``).
"""

from __future__ import annotations

import pytest
from references import require
from test_gguf_vocab import WITH_VECTORS, WITHOUT_VECTORS, read_vectors

from explorer.cli import main
from explorer.engine.errors import UnsupportedComponentError
from explorer.engine.explain.pipeline import pipeline_trace
from explorer.engine.formats import load_tokenizer
from explorer.engine.formats.gguf_specials import gguf_add_special

# file -> (ids before the text, ids after it)
EXPECTED: dict[str, tuple[list[int], list[int]]] = {
    "llama-spm": ([1], []),          # add_bos_token = true, add_eos_token = false
    "phi-3": ([1], []),              # same keys; EOS 32000 not added
    "baichuan": ([1], []),           # no keys: the 'llama' default (BOS 1 on)
    "bert-bge": ([101], [102]),      # BERT: always [CLS] ... [SEP]
    "nomic-bert-moe": ([0], [2]),    # t5/UGM with add_bos = add_eos = true, bos 0, eos 2
    "command-r": ([5], []),          # add_bos_token = true, bos_token_id 5
    "deepseek-coder": ([32013], []),
    "deepseek-llm": ([100000], []),
    "gemma-4": ([2], []),            # add_bos_token = true, bos_token_id 2
    "llama-bpe": ([128000], []),     # no keys, but pre 'llama-bpe' turns add_bos on
    "gpt-2": ([], []), "qwen2": ([], []), "qwen35": ([], []), "falcon": ([], []),
    "mpt": ([], []), "refact": ([], []), "starcoder": ([], []), "aquila": ([], []),
    "gpt-neox": ([], []),            # gpt2 vocabularies without keys: nothing added
}


def test_every_real_file_has_an_expectation() -> None:
    assert sorted(EXPECTED) == sorted(WITH_VECTORS + WITHOUT_VECTORS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_files_add_what_llama_cpp_adds(name: str) -> None:
    path = require("llama-cpp", f"ggml-vocab-{name}.gguf")
    tok = load_tokenizer(path)
    before, after = EXPECTED[name]
    assert tok.supports_post_processor()
    texts = ([t for t, _ in read_vectors(path)][:25] if name in WITH_VECTORS
             else ["Hello world", " leading space", "Привет мир 你好"])
    for text in texts:
        plain = tok.encode(text)
        enc = tok.encode(text, add_special_tokens=True)
        assert enc.ids == before + plain.ids + after, (name, text)
        added = enc.tokens[:len(before)] + enc.tokens[len(enc.tokens) - len(after):]
        assert all(t.special and (t.start, t.end) == (0, 0) for t in added)
        # the tokens of the text keep their spans
        assert enc.offsets[len(before):len(enc) - len(after)] == plain.offsets
    if name in WITH_VECTORS:  # and the text's ids are llama.cpp's own test vectors
        text, ids = read_vectors(path)[3]
        assert tok.encode(text, add_special_tokens=True).ids == before + ids + after


def _meta(model: str, n: int = 300, **keys: object) -> tuple[dict[str, object], list[str]]:
    return ({"tokenizer.ggml.model": model, **{"tokenizer.ggml." + k: v for k, v in keys.items()}},
            [f"t{i}" for i in range(n)])


@pytest.mark.parametrize(("model", "keys", "before", "after"), [
    ("llama", {}, [1], []),                                   # SPM default
    ("llama", {"add_bos_token": False, "add_eos_token": True}, [], [2]),
    ("gpt2", {}, [], []),                                     # BPE default: nothing
    ("gpt2", {"pre": "tekken"}, [11], []),                    # tekken: BOS on, default id 11
    ("gpt2", {"pre": "llama3", "bos_token_id": 7}, [7], []),
    ("gpt2", {"add_eos_token": True, "eos_token_id": 9}, [], [9]),
    ("t5", {}, [], [1]),                                      # UGM default: EOS 1 only
    ("gemma4", {"add_bos_token": False, "bos_token_id": 2}, [2], []),  # Gemma 4 forces BOS
    ("bert", {"add_bos_token": False, "add_sep_token": False}, [101], [102]),  # flags unused
    ("bert", {"bos_token_id": 5, "seperator_token_id": 6}, [5], [6]),
    ("llama", {"bos_token_id": 999}, [1], []),                # out of range: default kept
])
def test_llama_cpp_rules(model, keys, before, after) -> None:
    meta, tokens = _meta(model, **keys)
    post = gguf_add_special(meta, tokens)
    assert post is not None and post.error is None
    assert [i for i, _ in post.prefix] == before and [i for i, _ in post.suffix] == after


def test_default_id_outside_the_vocabulary_is_dropped() -> None:
    meta, tokens = _meta("llama", n=1, add_bos_token=True)  # default BOS 1 does not exist
    post = gguf_add_special(meta, tokens)
    assert post is not None and post.error is not None
    assert "add_bos_token is true, but tokenizer.ggml.bos_token_id is not set" in post.error
    with pytest.raises(UnsupportedComponentError, match="refuses"):
        post.process([], True)
    assert post.process([], False) == []


def test_gemma4_without_bos_id_is_refused() -> None:
    meta, tokens = _meta("gemma4")
    post = gguf_add_special(meta, tokens)
    assert post is not None and post.error is not None and "bos_token_id" in post.error


def test_pipeline_row_and_cli(tmp_path, capsys) -> None:
    path = require("llama-cpp", "ggml-vocab-nomic-bert-moe.gguf")
    trace = pipeline_trace(load_tokenizer(path), "Hello world")
    assert [(a.id, a.piece) for a in trace.additions] == [(0, "<s>"), (2, "</s>")]
    rows = {c.kind: c.description for c in trace.components}
    assert rows["post-processor"].startswith("<s> $A </s> (llama.cpp:")
    src = tmp_path / "t.txt"
    src.write_text("Hello world", encoding="utf-8")
    spm = str(require("llama-cpp", "ggml-vocab-llama-spm.gguf"))
    assert main(["encode", "--vocab", spm, "--add-special-tokens", str(src)]) == 0
    assert capsys.readouterr().out.split() == ["1", "15043", "3186"]
