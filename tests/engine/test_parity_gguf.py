"""GGUF parity: our engine against transformers' GGUF tokenizer conversion on llama.cpp's real
vocabularies, with llama.cpp's own test vectors (``.gguf.inp`` / ``.gguf.out``, the ids the
original tokenizer gives) deciding who is right where the two differ.

Where transformers' conversion and our engine disagree, our ids are the test vectors' and
transformers' are not, and the stage named is the one that explains it: the converter has no
split regex for some ``tokenizer.ggml.pre`` values (pre-tokenization), no ``ignore_merges`` for
Llama 3 (merges/scores), SentencePiece's whitespace handling differs (normalization), and it
adds tokens of its own, or matches user-defined ones whole (added tokens).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from references import require
from test_gguf_vocab import read_vectors

from explorer.engine.parity import check_lines, check_text, implementations_for
from explorer.engine.parity.check import Row, TextParity
from explorer.engine.parity.implementations import ImplementationSet

ROOT = Path(__file__).resolve().parents[2]
TRANSFORMERS = "transformers (GGUF)"
OURS = "explorer (this engine)"


def row(result: TextParity, name: str) -> Row:
    """The row of implementation ``name`` (llama.cpp adds a row where it is installed)."""
    return next(r for r in result.rows if r.name == name)


def multilingual() -> list[str]:
    text = (ROOT / "tests" / "data" / "multilingual.txt").read_text(encoding="utf-8")
    return [line for line in text.split("\n") if line]


_CACHE: dict[str, tuple[Path, ImplementationSet]] = {}


def impls_of(name: str) -> tuple[Path, ImplementationSet]:
    """Our engine and transformers' conversion of ``ggml-vocab-NAME.gguf`` (built once)."""
    if name not in _CACHE:
        path = require("llama-cpp", f"ggml-vocab-{name}.gguf")
        impls = implementations_for(path)
        assert TRANSFORMERS in impls.names, [u.describe() for u in impls.unavailable]
        _CACHE[name] = path, impls
    return _CACHE[name]


@pytest.mark.parametrize("name", ["gpt-2", "phi-3"])
def test_transformers_gguf_agrees_on_vectors_and_multilingual_text(name: str) -> None:
    """Byte-level BPE (gpt-2) and SentencePiece BPE (phi-3): transformers' conversion gives
    our ids, which are llama.cpp's test vectors."""
    path, impls = impls_of(name)
    vectors = read_vectors(path)
    for text, expected in vectors:
        result = check_text(impls, text, explain=False)
        assert result.agree, (text, [r.encoding and r.encoding.ids for r in result.rows])
        assert result.rows[0].encoding is not None
        assert result.rows[0].encoding.ids == expected
    for text in multilingual():
        assert check_text(impls, text, explain=False).agree, text


# name -> (the stage of every span where transformers differs on the test vectors,
#          one test vector where they differ, its first differing token index)
DIFFERING = {
    "llama-spm": ("normalization", "   ", 0),
    "starcoder": ("pre-tokenization", "ied 4 ½ months", 3),
    "llama-bpe": ("merges/scores", "Cửa Việt", 2),
    "mpt": ("added tokens", "  Hello", 0),
}


@pytest.mark.parametrize("name", list(DIFFERING))
def test_where_transformers_differs_the_test_vectors_side_with_us(name: str) -> None:
    """On llama.cpp's test vectors: every differing case has our ids = the vector's ids and
    transformers' ids != them; every differing span is explained by the expected stage."""
    stage, example, first = DIFFERING[name]
    path, impls = impls_of(name)
    differing = []
    for text, expected in read_vectors(path):
        result = check_text(impls, text)
        ours, theirs = result.rows[0], row(result, TRANSFORMERS)
        assert ours.encoding is not None and ours.encoding.ids == expected, text
        if theirs.agrees:
            continue
        assert theirs.encoding is not None
        assert theirs.encoding.ids != expected, text
        assert {s.cause.stage for s in theirs.spans} == {stage}, (text, theirs.spans)
        differing.append(text)
    assert example in differing
    result = check_text(impls, example)
    assert result.first_divergence == (TRANSFORMERS, first)


def test_llama_spm_normalization_shows_both_outputs() -> None:
    """transformers' Llama conversion keeps the text's spaces for Metaspace; llama.cpp (and
    we) escape every space and prepend one: the stage's output on both sides is shown."""
    _, impls = impls_of("llama-spm")
    [span] = row(check_text(impls, "   "), TRANSFORMERS).spans
    assert span.cause.stage == "normalization"
    assert (span.cause.ours, span.cause.theirs) == ("▁▁▁▁", "   ")


def test_starcoder_pre_tokenization_shows_the_cut() -> None:
    """StarCoder's ``tokenizer.ggml.pre`` splits digits one by one and keeps a lone space
    before '½' its own pre-token; transformers' converter has no regex for it (GPT-2's)."""
    _, impls = impls_of("starcoder")
    spans = row(check_text(impls, "ied 4 ½ months"), TRANSFORMERS).spans
    assert [s.cause.stage for s in spans] == ["pre-tokenization"]
    assert spans[0].cause.ours == "Ġ | Â½"
    assert spans[0].cause.theirs == "ĠÂ½"


def test_whole_file_of_multilingual_text_counts_the_differing_lines(tmp_path: Path) -> None:
    """The whole-file check over multilingual text: the lines transformers' llama-spm
    conversion tokenizes differently (the ones starting with spaces) and their stage."""
    _, impls = impls_of("llama-spm")
    lines = multilingual()
    job = check_lines(impls, lines)
    try:
        while True:
            next(job)
    except StopIteration as stop:
        result = stop.value
    assert result.lines == len(lines)
    leading = sum(1 for line in lines if line.startswith(" "))
    assert leading > 0
    # llama.cpp, where installed, is counted and agrees with us everywhere
    assert {k: v for k, v in result.counts().items() if v} == {TRANSFORMERS: leading}
    assert result.stage_counts() == {"normalization": leading}
    assert all(lines[d.line - 1].startswith(" ") for d in result.differing)


def test_bert_gguf_is_listed_as_not_convertible() -> None:
    """transformers cannot convert a ``bert`` GGUF tokenizer: listed with its reason."""
    impls = implementations_for(require("llama-cpp", "ggml-vocab-bert-bge.gguf"))
    reasons = {u.name: u.reason for u in impls.unavailable}
    assert "bert" in reasons[TRANSFORMERS]
    assert impls.names == [OURS] + (["llama.cpp"] if "llama.cpp" in impls.names else [])


@pytest.mark.parametrize("name", ["llama-spm", "phi-3"])
def test_metadata_read_for_transformers_equals_the_gguf_package(name: str) -> None:
    """The fast metadata reader feeding transformers' converter gives exactly what llama.cpp's
    ``gguf`` package reads (every key: tokens, scores, token types, merges, ids, flags; two
    32k vocabularies, as ``GGUFReader`` takes ~15 s on a 128k one)."""
    from gguf import GGUFReader

    from explorer.engine.parity.gguf_transformers import read_gguf_fields

    path = require("llama-cpp", f"ggml-vocab-{name}.gguf")
    reader = GGUFReader(str(path))
    theirs = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    ours = {k: v for k, v in read_gguf_fields(path).items() if not k.startswith("GGUF.")}
    assert ours.keys() == theirs.keys()
    assert "tokenizer.ggml.tokens" in ours
    for key in ours:
        assert ours[key] == theirs[key], key


def test_transformers_missing_is_listed_with_its_pip_command(monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "transformers", None)  # import fails: not installed
    impls = implementations_for(require("llama-cpp", "ggml-vocab-phi-3.gguf"))
    assert TRANSFORMERS not in impls.names
    missing = {u.name: u for u in impls.unavailable}[TRANSFORMERS]
    assert missing.pip == "pip install transformers"
    assert missing.describe() == ("transformers (GGUF): not installed "
                                  "(install: pip install transformers)")
