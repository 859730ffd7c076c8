"""minbpe ``.model``/``.vocab`` files against minbpe's own code (tests/minbpe_reference.py,
from the seed) and its golden examples."""

from __future__ import annotations

import re as stdre
from pathlib import Path

import minbpe_reference as ref
import pytest
import regex
from references import require

from explorer.engine.bpe.minbpe import MinBPETokenizer
from explorer.engine.errors import VocabFormatError
from explorer.engine.formats import detect_format, load_tokenizer
from explorer.engine.formats.tiktoken_file import read_ranks


def multilingual_lines() -> list[str]:
    path = Path(__file__).resolve().parents[1] / "data" / "multilingual.txt"
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln]


def _saved(tmp_path, tok, name="toy"):
    prefix = str(tmp_path / name)
    tok.save(prefix)
    return tmp_path / f"{name}.model", tmp_path / f"{name}.vocab"


def test_golden_aaabdaaabac(tmp_path):
    basic = ref.RegexTokenizer(pattern="")
    basic.train("aaabdaaabac", 256 + 3)
    model, vocab = _saved(tmp_path, basic)
    for chosen in (model, vocab):  # choosing the .vocab opens the .model beside it
        assert detect_format(chosen) == "minbpe"
        tok = load_tokenizer(chosen)
        assert tok.encode("aaabdaaabac").ids == [258, 100, 258, 97, 99]
        assert tok.decode([258, 100, 258, 97, 99]) == "aaabdaaabac"
    assert tok.info.extra["minbpe"] == "BasicTokenizer"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    corpus = "\n".join(multilingual_lines()[:60])
    tok = ref.RegexTokenizer()
    tok.train(corpus, 256 + 200)
    tok.register_special_tokens({"<|endoftext|>": 456, "<|fim|>": 457})
    folder = tmp_path_factory.mktemp("minbpe")
    return tok, _saved(folder, tok, "regex")[0]


def test_regex_tokenizer_parity_multilingual(trained):
    reference, model = trained
    tok = load_tokenizer(model)
    assert tok.info.format == "minbpe" and tok.info.vocab_size == 458
    for line in [*multilingual_lines(), "a <|endoftext|>b<|fim|> 😀😀 \t\n x"]:
        enc = tok.encode(line)
        assert enc.ids == reference.encode(line), line
        assert tok.encode_ids(line) == enc.ids
        assert tok.decode(enc.ids) == line
        # each token's bytes come from the characters of its span, spans in order
        assert all(t.token_bytes in line[t.start:t.end].encode() for t in enc.tokens)
        assert [t.start for t in enc.tokens] == sorted(t.start for t in enc.tokens)


def test_gpt4_tokenizer_equals_cl100k_ids():
    """GPT4Tokenizer (recovered merges + byte shuffle) gives tiktoken's cl100k ids."""
    tiktoken = pytest.importorskip("tiktoken")
    from explorer.engine.formats.tiktoken_presets import PRESETS

    ranks = read_ranks(require("gpt-tokenizer", "cl100k_base.tiktoken"))
    text = "hello123!!!? (안녕하세요!) 😉 Tokenizers wörk, naïvely… 東京 2024"
    chunks = [c.encode() for c in regex.findall(ref.GPT4_SPLIT_PATTERN, text)]
    # Only merges whose token lies inside a chunk can ever be looked up for this text.
    needed = {t: r for t, r in ranks.items() if len(t) == 1 or any(t in c for c in chunks)}
    merges = {pair: rank for pair, rank in ref.recover_merges(needed).items()}
    shuffle = [ranks[bytes([b])] for b in range(256)]
    tok = MinBPETokenizer(merges, ref.GPT4_SPLIT_PATTERN, name="gpt4", byte_shuffle=shuffle)
    enc = tiktoken.Encoding("cl100k", pat_str=PRESETS["cl100k"].pattern, mergeable_ranks=ranks,
                            special_tokens={})
    assert tok.encode_ids("hello123!!!? (안녕하세요!) 😉") == [
        15339, 4513, 12340, 30, 320, 31495, 230, 75265, 243, 92245, 16715, 57037]
    assert tok.encode_ids(text) == enc.encode_ordinary(text)
    assert tok.decode(tok.encode_ids(text)) == text


@pytest.mark.parametrize(("content", "needle"), [
    ("minbpe v2\n\n0\n", "not a minbpe model"),
    ("minbpe v1\n", "truncated"),
    ("minbpe v1\n\nx\n", "not an integer"),
    ("minbpe v1\n\n5\n<a> 300\n", "announced"),
    ("minbpe v1\n\n0\n97 97\n256 300\n", "not defined yet"),
    ("minbpe v1\n\n0\n97 97\n97 97\n", "listed twice"),
    ("minbpe v1\n\n1\n<s> 256\n97 97\n", "collides"),
    ("minbpe v1\n\n1\n<s> 99999999999\n97 97\n", "absurd id"),
    ("minbpe v1\n(unclosed\n0\n97 97\n", "does not compile"),
    ("minbpe v1\n\n0\n97 x\n", "expected '<id1> <id2>'"),
])
def test_bad_files_name_the_file_and_the_problem(tmp_path, content, needle):
    p = tmp_path / "bad.model"
    p.write_text(content)
    with pytest.raises(VocabFormatError, match=stdre.escape(needle)) as e:
        load_tokenizer(p)
    assert "bad.model" in str(e.value)


def test_vocab_without_model(tmp_path):
    (tmp_path / "x.vocab").write_text("[a] 97\n")
    (tmp_path / "x.model").write_text("minbpe v1\n\n0\n")
    (tmp_path / "x.model").unlink()
    with pytest.raises(VocabFormatError):
        load_tokenizer(tmp_path / "x.vocab")
