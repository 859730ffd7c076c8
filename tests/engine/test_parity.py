"""Parity: our engine against the real reference libraries, where they agree and where they
really differ (Oniguruma vs fancy-regex on a possessive quantifier), with the right first
divergence and stage."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import regex
import tokenizers
from hf_support import EXTRA_TEXTS
from references import require

from explorer.engine.encoding import Encoding, Token
from explorer.engine.formats import load_tokenizer
from explorer.engine.parity import check_lines, check_text, implementations_for
from explorer.engine.parity.adapters import HFImplementation, tiktoken_from_tokenizer_json
from explorer.engine.parity.diff import diff_encodings
from explorer.engine.parity.implementations import EngineImplementation, ImplementationSet
from explorer.engine.parity.lines import to_csv, to_json
from explorer.engine.pretokenizers import patterns

ROOT = Path(__file__).resolve().parents[2]
BPE_4K = ROOT / "resources" / "vocab" / "corpus_bpe_4k.json"
TIKTOKEN_ROW = "tiktoken (from tokenizer.json)"
HF_CONVERTED = "HF tokenizers (converted from .model)"


def texts() -> list[str]:
    lines = (ROOT / "tests" / "data" / "multilingual.txt").read_text(encoding="utf-8")
    return [ln for ln in lines.split("\n") if ln] + EXTRA_TEXTS


def _with(obj: dict, tmp: Path, name: str, **changes: object) -> Path:
    data = json.loads(json.dumps(obj))
    data.update(changes)
    path = tmp / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def bpe_obj() -> dict:
    return json.loads(BPE_4K.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def possessive(tmp_path_factory: pytest.TempPathFactory, bpe_obj: dict) -> Path:
    """The bundled byte-level BPE with cl100k's Split regex (``\\p{N}{1,3}+``), the way
    converters write tiktoken vocabularies as tokenizer.json."""
    pre = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": patterns.CL100K}, "behavior": "Isolated",
         "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": False}]}
    return _with(bpe_obj, tmp_path_factory.mktemp("parity"), "possessive.json",
                 pre_tokenizer=pre)


def test_the_libraries_really_read_the_quantifier_differently(possessive: Path) -> None:
    """Ground truth, from the libraries alone: HF (Oniguruma) keeps a 7-digit run whole,
    Python ``regex`` / tiktoken split it in threes."""
    hf = tokenizers.Tokenizer.from_file(str(possessive))
    assert [s for s, _ in hf.pre_tokenizer.pre_tokenize_str("2000000")] == ["2000000"]
    assert regex.findall(patterns.CL100K, "2000000") == ["200", "000", "0"]


def test_possessive_quantifier_first_divergence_and_stage(possessive: Path) -> None:
    impls = implementations_for(possessive)
    assert impls.names == ["explorer (this engine)", "HF tokenizers", TIKTOKEN_ROW]
    text = "Hello world 2000000 and 1234567!"
    result = check_text(impls, text)
    ours, hf, tk = result.rows
    assert hf.agrees  # our engine reads the regex the way HF's Oniguruma does
    assert not tk.agrees and not result.agree
    assert tk.encoding is not None and ours.encoding is not None
    # 'Hello' -> H ell o, ' world', ' ', then the digits: ours 2|00|00|00, tiktoken 2|00|00|0|0
    assert ours.encoding.pieces[5:9] == ["2", "00", "00", "00"]
    assert tk.encoding.pieces[5:10] == ["2", "00", "00", "0", "0"]
    assert result.first_divergence == (TIKTOKEN_ROW, 8)
    [span] = tk.spans
    assert (span.span.start, span.span.end) == (17, 19)
    assert text[17:19] == "00"
    assert span.cause.stage == "pre-tokenization"
    assert span.cause.ours == "2000000"  # our (and HF's) pre-token
    assert span.cause.theirs is None  # tiktoken does not expose its pre-tokens


def test_possessive_quantifier_whole_file(possessive: Path, tmp_path: Path) -> None:
    lines = ["plain words only", "year 2024 and 1000000", "no digits", "7"]
    impls = implementations_for(possessive)
    job = check_lines(impls, lines, every=1)
    progress = []
    try:
        while True:
            progress.append(next(job))
    except StopIteration as stop:
        result = stop.value
    assert progress[-1].done == 4
    assert result.lines == 4
    assert result.counts() == {"HF tokenizers": 0, TIKTOKEN_ROW: 1}
    [d] = result.differing
    assert (d.line, d.implementation, d.stage) == (2, TIKTOKEN_ROW, "pre-tokenization")
    rows = to_csv(result).splitlines()
    assert rows[0].startswith("line,implementation,spans,first_token,stage")
    assert rows[1].startswith(f"2,{TIKTOKEN_ROW},")
    data = json.loads(to_json(result))
    assert data["differing_lines"] == {"HF tokenizers": 0, TIKTOKEN_ROW: 1}
    assert data["differing"][0]["ours_stage_output"] == "1000000"


def test_whole_file_check_cancels_cleanly(possessive: Path) -> None:
    impls = implementations_for(possessive)
    job = check_lines(impls, (f"line {i}" for i in range(10_000)), every=8)
    assert next(job).done == 8
    job.close()  # the worker's cancellation: no further work, no error
    with pytest.raises(StopIteration):
        next(job)


def test_normalization_stage_with_both_outputs(tmp_path: Path, bpe_obj: dict) -> None:
    """Same vocabulary, the reference file adds NFKC: the differing span is explained by
    normalization and shows each side's normalized text."""
    nfkc = _with(bpe_obj, tmp_path, "nfkc.json", normalizer={"type": "NFKC"})
    ours = EngineImplementation(load_tokenizer(BPE_4K))
    ref = HFImplementation(tokenizers, nfkc, ours.tokenizer, name="HF (NFKC)")
    result = check_text(ImplementationSet([ours, ref], []), "a ﬁne day")
    [span] = result.rows[1].spans
    assert span.cause.stage == "normalization"
    assert (span.cause.ours, span.cause.theirs) == (" ﬁne", " fine")


def test_added_tokens_stage(tmp_path: Path, bpe_obj: dict) -> None:
    added = [*bpe_obj["added_tokens"],
             {"id": 3999, "content": "world", "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True}]
    path = _with(bpe_obj, tmp_path, "added.json", added_tokens=added)
    ours = EngineImplementation(load_tokenizer(BPE_4K))
    ref = HFImplementation(tokenizers, path, ours.tokenizer, name="HF (added 'world')")
    result = check_text(ImplementationSet([ours, ref], []), "hello world")
    causes = [s.cause for s in result.rows[1].spans]
    assert causes and causes[0].stage == "added tokens"
    assert (causes[0].ours, causes[0].theirs) == ("(no tokens)", "world")


def test_pre_tokenization_stage_when_both_expose_it(tmp_path: Path, bpe_obj: dict) -> None:
    """The reference splits digits one by one (HF Digits): both pre-token lists shown."""
    pre = {"type": "Sequence", "pretokenizers": [
        {"type": "Digits", "individual_digits": True}, bpe_obj["pre_tokenizer"]]}
    path = _with(bpe_obj, tmp_path, "digits.json", pre_tokenizer=pre)
    ours = EngineImplementation(load_tokenizer(BPE_4K))
    ref = HFImplementation(tokenizers, path, ours.tokenizer, name="HF (digits)")
    result = check_text(ImplementationSet([ours, ref], []), "in 2000")
    # ours: in | Ġ20 | 00; theirs: in | Ġ | 2 | 0 | 0 | 0: two regions cut at offset 5
    first, second = result.rows[1].spans
    assert [(s.span.start, s.span.end) for s in (first, second)] == [(2, 5), (5, 7)]
    assert {first.cause.stage, second.cause.stage} == {"pre-tokenization"}
    assert (first.cause.ours, first.cause.theirs) == ("Ġ2000", "Ġ | 2 | 0")
    assert (second.cause.ours, second.cause.theirs) == ("Ġ2000", "0 | 0")


def test_diff_ignores_byte_fallback_offset_conventions() -> None:
    """Partial-UTF-8 tokens of one character compare equal whatever spans they carry."""
    text = "aé"
    mk = lambda spans: Encoding(text, [Token(i, p, b"", s, e) for (i, p, s, e) in spans])  # noqa: E731
    a = mk([(1, "a", 0, 1), (2, "<0xC3>", 1, 2), (3, "<0xA9>", 1, 2)])
    b = mk([(1, "a", 0, 1), (2, "<0xC3>", 1, 2), (4, "<0xA9>", 1, 2)])
    assert diff_encodings(a, a).equal
    d = diff_encodings(a, b)
    assert d.first_index == 2 and [(s.start, s.end) for s in d.spans] == [(1, 2)]


@pytest.mark.parametrize("vocab", [
    ("gpt-tokenizer", "cl100k_base.tiktoken"),
    ("gpt-tokenizer", "o200k_base.tiktoken"),
    ("gpt-tokenizer", "r50k_base.tiktoken"),
    ("mon-tokenizer", "mon_tokenizer.json"),
    ("minilm", "tokenizer.json"),
    ("sentencepiece", "botchan_en_unigram_1000.model"),
    ("sentencepiece", "kyoto_ja_unigram_8000.model"),
    ("mistral-common", "mistral_instruct_tokenizer_240323.model.v3"),
    ("mistral-tekken", "tekken_240911.json"),
    ("mistral-tekken", "tekken_240718.json"),
])
def test_parity_agrees_on_real_vocabularies(vocab: tuple[str, str]) -> None:
    """Every format's own reference library gives our ids (HF's .model converter is a
    different tokenizer: see the next test)."""
    impls = implementations_for(require(*vocab))
    assert impls.references, [u.describe() for u in impls.unavailable]
    own = [r for r in impls.names[1:] if r != HF_CONVERTED]
    assert own
    for text in texts():
        result = check_text(impls, text, explain=False)
        bad = [(r.name, r.error, r.encoding and r.encoding.pieces) for r in result.rows
               if r.name in own and not r.agrees]
        assert not bad, (text, bad)


def test_hf_converter_of_a_sentencepiece_model_differs_in_normalization() -> None:
    """HF's ``from_spm`` on a real Unigram ``.model``: sentencepiece drops trailing spaces
    while normalizing, the converted tokenizer.json keeps one and emits a '▁' for it."""
    impls = implementations_for(require("sentencepiece", "botchan_en_unigram_1000.model"))
    assert impls.names == ["explorer (this engine)", "sentencepiece", HF_CONVERTED]
    result = check_text(impls, "trailing  ")
    ours, sp, hf = result.rows
    assert sp.agrees and not hf.agrees
    assert hf.encoding is not None and ours.encoding is not None
    assert hf.encoding.pieces == [*ours.encoding.pieces, "▁"]
    assert result.first_divergence == (HF_CONVERTED, len(ours.encoding.pieces))
    [span] = hf.spans
    assert (span.span.start, span.span.end) == (8, 10)
    assert span.cause.stage == "normalization"
    assert (span.cause.ours, span.cause.theirs) == ("", " ")


def test_parity_agrees_for_a_bundled_tokenizer_json_through_hf_and_tiktoken() -> None:
    impls = implementations_for(BPE_4K)
    assert impls.names == ["explorer (this engine)", "HF tokenizers", TIKTOKEN_ROW]
    for text in texts():
        assert check_text(impls, text, explain=False).agree, text


def test_tiktoken_reads_only_convertible_tokenizer_json() -> None:
    mon = json.loads(require("mon-tokenizer", "mon_tokenizer.json").read_text("utf-8"))
    assert tiktoken_from_tokenizer_json(mon) == "not a BPE model"
    impls = implementations_for(require("mon-tokenizer", "mon_tokenizer.json"))
    assert [u.name for u in impls.unavailable] == ["tiktoken"]


def test_gguf_references_llama_cpp_listed_with_pip_when_missing_and_transformers() -> None:
    """``.gguf``: llama.cpp through llama-cpp-python (optional; listed with its pip command
    when missing) and transformers' GGUF conversion (tests/engine/test_parity_gguf.py)."""
    path = require("llama-cpp", "ggml-vocab-gpt-2.gguf")
    impls = implementations_for(path)
    assert "transformers (GGUF)" in impls.names
    if importlib.util.find_spec("llama_cpp") is None:
        [missing] = impls.unavailable
        assert missing.pip == "pip install llama-cpp-python"
        assert "not installed" in missing.describe()
        assert impls.names == ["explorer (this engine)", "transformers (GGUF)"]
    else:  # llama-cpp-python installed: it must agree with us
        assert impls.names[1] == "llama.cpp"
        for text in texts():
            result = check_text(impls, text, explain=False)
            assert result.rows[1].agrees, text


def test_unknown_byte_fallback_stage(tmp_path: Path) -> None:
    """A real Unigram tokenizer.json with byte fallback (ours) against the same file with it
    off (HF): a character missing from the vocabulary is bytes on one side, <unk> on the
    other; normalization and pre-tokens agree, so the stage is unknown/byte fallback."""
    path = require("mon-tokenizer", "mon_tokenizer.json")
    obj = json.loads(path.read_text(encoding="utf-8"))
    assert obj["model"]["byte_fallback"] is True
    obj["model"]["byte_fallback"] = False
    variant = tmp_path / "no_fallback.json"
    variant.write_text(json.dumps(obj), encoding="utf-8")
    ours = EngineImplementation(load_tokenizer(path))
    ref = HFImplementation(tokenizers, variant, ours.tokenizer, name="HF (no byte fallback)")
    result = check_text(ImplementationSet([ours, ref], []), "a ﬁne day")
    [span] = result.rows[1].spans
    assert span.cause.stage == "unknown/byte fallback"
    assert "<0xEF> | <0xAC> | <0x81>" in span.cause.ours
    assert "<unk>" in span.cause.theirs
