"""``tokenizer-explorer train`` with the BPE marks/length cap and the Unigram symbol options."""

from __future__ import annotations

import json
import re

import pytest

from explorer.bundled import resource_path
from explorer.cli import main

BOTCHAN = resource_path("corpus", "botchan.txt")


def test_cli_bpe_prefix_suffix_and_max_length(tmp_path, capsys):
    tokenizers = pytest.importorskip("tokenizers")
    out = tmp_path / "bpe.json"
    assert main(["train", "--algorithm", "bpe", "--vocab-size", "600", "--quiet",
                 "--continuing-subword-prefix", "##", "--end-of-word-suffix", "</w>",
                 "--max-token-length", "6", "--output", str(out), str(BOTCHAN)]) == 0
    assert "prefix '##', suffix '</w>'" in capsys.readouterr().out
    model = json.loads(out.read_text("utf-8"))["model"]
    assert model["continuing_subword_prefix"] == "##" and model["end_of_word_suffix"] == "</w>"
    assert any(t.startswith("##") for t in model["vocab"])
    assert any(t.endswith("</w>") for t in model["vocab"])
    bare = [t.removeprefix("##").removesuffix("</w>") for t in model["vocab"]]
    assert max(map(len, bare)) < 6
    text = "I went to the school in the country."
    assert tokenizers.Tokenizer.from_file(str(out)).decode(
        tokenizers.Tokenizer.from_file(str(out)).encode(text).ids) == text


def test_cli_unigram_user_symbols_and_split_digits(tmp_path, capsys):
    spm = pytest.importorskip("sentencepiece")
    out = tmp_path / "uni.model"
    assert main(["train", "--algorithm", "unigram", "--vocab-size", "800", "--quiet",
                 "--user-defined-symbol", "<mask>", "--user-defined-symbol", "[SEP]",
                 "--split-digits", "--output", str(out), str(BOTCHAN)]) == 0
    assert "<mask> [SEP]" in capsys.readouterr().out
    sp = spm.SentencePieceProcessor(model_file=str(out))
    assert [sp.id_to_piece(i) for i in (3, 4)] == ["<mask>", "[SEP]"]
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    assert not [p for p in pieces if re.search(r"[0-9].|.[0-9]", p)]
    assert sp.encode("a<mask>b[SEP]", out_type=str)[-1] == "[SEP]"


@pytest.mark.parametrize("argv, message", [
    (["--algorithm", "bpe", "--continuing-subword-prefix", "##", "--output", "x.tiktoken"],
     ".json output"),
    (["--algorithm", "bpe", "--mode", "metaspace", "--end-of-word-suffix", "</w>",
      "--output", "x.model"], ".json output"),
    (["--algorithm", "bpe", "--max-token-length", "0", "--output", "x.json"], "at least 1"),
    (["--algorithm", "unigram", "--user-defined-symbol", "a b", "--output", "x.model"],
     "user-defined symbols"),
])
def test_cli_option_errors_exit_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--vocab-size", "500", *argv, str(BOTCHAN)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert list(tmp_path.iterdir()) == []
