"""tiktoken JSON (js-tiktoken ranks, Anthropic's claude.json) against tiktoken built from the
same JSON, and Mistral tekken.json against mistral-common: ids, pieces, offsets."""

from __future__ import annotations

import base64
import json
import re
import unicodedata
from pathlib import Path

import pytest
from references import require

from explorer.engine.errors import VocabFormatError
from explorer.engine.formats import detect_format, load_tokenizer

DATA = Path(__file__).resolve().parents[1] / "data" / "multilingual.txt"
TEXT = DATA.read_text(encoding="utf-8")
EXTRA = "ﬁne ①② Ｔｅｓｔ x² ㈱ Å vs Å, ｶﾀｶﾅ, \u00a0nbsp\u3000ideographic, 😀‍🔥 <EOT>"


def _json_of(path: Path) -> dict:
    data = path.read_text(encoding="utf-8")
    m = re.match(r"\s*export\s+default\s+(\{.*\})\s*;?\s*$", data, re.S)
    return json.loads(m.group(1) if m else data)


def _tiktoken_from_json(obj: dict):
    tiktoken = pytest.importorskip("tiktoken")
    ranks: dict[bytes, int] = {}
    for line in obj["bpe_ranks"].split("\n"):
        if line:
            _, offset, *tokens = line.split(" ")
            for i, token in enumerate(tokens):
                ranks[base64.b64decode(token)] = int(offset) + i
    return tiktoken.Encoding("from-json", pat_str=obj["pat_str"], mergeable_ranks=ranks,
                             special_tokens=obj["special_tokens"])


def _check_offsets(text: str, enc) -> None:
    for t in enc.tokens:
        assert 0 <= t.start <= t.end <= len(text)
    assert [t.start for t in enc.tokens] == sorted(t.start for t in enc.tokens)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "r50k_base"])
def test_js_tiktoken_ranks_module_and_json(tmp_path, name):
    module = require("js-tiktoken", f"{name}.js")
    obj = _json_of(module)
    as_json = tmp_path / f"{name}.json"
    as_json.write_text(json.dumps(obj))
    ref = _tiktoken_from_json(obj)
    for path in (module, as_json):
        assert detect_format(path) == "tiktoken-json"
        tok = load_tokenizer(path)
        for text in (TEXT, EXTRA, "<|endoftext|> x <|endoftext|>"):
            enc = tok.encode(text)
            assert enc.ids == ref.encode(text, allowed_special="all")
            assert tok.decode(enc.ids) == text
            _check_offsets(text, enc)
        assert tok.info.special_tokens == obj["special_tokens"]


def test_js_tiktoken_cl100k_equals_the_tiktoken_file():
    tok = load_tokenizer(require("js-tiktoken", "cl100k_base.js"))
    ref = load_tokenizer(require("gpt-tokenizer", "cl100k_base.tiktoken"))
    assert tok.encode(TEXT).ids == ref.encode(TEXT).ids
    assert tok.encode(TEXT).pieces == ref.encode(TEXT).pieces


def test_claude_json_applies_nfkc_like_its_npm_library():
    path = require("anthropic-tokenizer", "claude.json")
    obj = _json_of(path)
    ref = _tiktoken_from_json(obj)
    tok = load_tokenizer(path)
    assert tok.info.normalizer == "NFKC"
    for text in (TEXT, EXTRA):
        enc = tok.encode(text)
        # @anthropic-ai/tokenizer: tokenizer.encode(text.normalize('NFKC'), 'all')
        assert enc.ids == ref.encode(unicodedata.normalize("NFKC", text), allowed_special="all")
        _check_offsets(text, enc)
    enc = tok.encode("ﬁne Ｔｅｓｔ")
    assert [("ﬁne Ｔｅｓｔ"[t.start:t.end]) for t in enc.tokens] == ["ﬁne", " Ｔｅｓｔ"]


@pytest.mark.parametrize("name", ["tekken_240718.json", "tekken_240911.json"])
def test_tekken_parity_with_mistral_common(name):
    tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    path = require("mistral-tekken", name)
    ref = tekken.Tekkenizer.from_file(path)
    assert detect_format(path) == "tekken"
    tok = load_tokenizer(path)
    assert tok.info.vocab_size == ref.n_words
    for text in (TEXT, EXTRA.replace("<EOT>", "")):
        enc = tok.encode(text)
        assert enc.ids == ref.encode(text, bos=False, eos=False)
        assert tok.decode(enc.ids) == ref.decode(enc.ids) == text
        _check_offsets(text, enc)
    for i in (0, 1, 2, 3, 500, 999):
        assert tok.id_to_token(i).piece == ref.id_to_piece(i)
        assert tok.id_to_token(i).special
    for i in (1000, 1100, 5000, ref.n_words - 1):
        assert tok.id_to_token(i).token_bytes == ref.id_to_byte_piece(i)
    # the explorer recognises special tokens typed in the text (chat prompts)
    assert tok.encode("[INST]hi[/INST]").ids == [
        ref.get_special_token("[INST]"), *ref.encode("hi", bos=False, eos=False),
        ref.get_special_token("[/INST]")]


def _tekken(tmp_path: Path, mutate) -> Path:
    obj = {"config": {"pattern": r"\s+|\S+", "default_vocab_size": 300,
                      "default_num_special_tokens": 3, "version": "v13",
                      "num_vocab_tokens": 297},
           "vocab": [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(),
                      "token_str": None} for i in range(256)]
           + [{"rank": 256 + i, "token_bytes": base64.b64encode(b"ab" + bytes([65 + i])).decode(),
               "token_str": None} for i in range(41)],
           "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": True},
                              {"rank": 1, "token_str": "<s>", "is_control": True}]}
    mutate(obj)
    p = tmp_path / "tekken.json"
    p.write_text(json.dumps(obj))
    return p


def test_small_tekken_fills_specials(tmp_path):
    tok = load_tokenizer(_tekken(tmp_path, lambda o: None))
    assert tok.info.special_tokens == {"<unk>": 0, "<s>": 1, "<SPECIAL_2>": 2}
    assert tok.encode("abA").ids == [256 + 3]


@pytest.mark.parametrize(("mutate", "needle"), [
    (lambda o: o.pop("config"), "no 'config'"),
    (lambda o: o["config"].update(default_vocab_size=10**9), "does not fit"),
    (lambda o: o["vocab"][5].update(rank=7), "vocab[5]"),
    (lambda o: o["vocab"][300 - 4].update(token_bytes="@@"), "not base64"),
    (lambda o: o.update(special_tokens=[{"rank": i, "token_str": "<s>"} for i in (0, 1)]),
     "unique"),
    (lambda o: o["config"].update(version=None), "version"),
])
def test_bad_tekken_names_the_problem(tmp_path, mutate, needle):
    with pytest.raises(VocabFormatError, match=re.escape(needle)):
        load_tokenizer(_tekken(tmp_path, mutate))


@pytest.mark.parametrize(("content", "needle"), [
    ('{"pat_str": "", "bpe_ranks": "! 0 IQ=="}', "pat_str"),
    ('{"pat_str": "x", "bpe_ranks": 5}', "bpe_ranks"),
    ('{"pat_str": "x", "bpe_ranks": "! z IQ=="}', "line 1"),
    ('{"pat_str": "x", "bpe_ranks": "! 0 @@"}', "base64"),
    ('{"pat_str": "x", "bpe_ranks": "! 0 IQ==", "special_tokens": []}', "special_tokens"),
    ('{"pat_str": "x", "bpe_ranks": "! 0 IQ=="}', "256 single bytes"),
    ('{"pat_str": "x", "bpe_ranks": "! 4294967296 IQ=="}', "32-bit"),
])
def test_bad_tiktoken_json_names_the_problem(tmp_path, content, needle):
    p = tmp_path / "ranks.json"
    p.write_text(content)
    with pytest.raises(VocabFormatError, match=re.escape(needle)) as e:
        load_tokenizer(p)
    assert "ranks.json" in str(e.value)


def test_tekken_ordinary_text_equals_mistral_common_with_special_strings():
    """mistral-common's Tekkenizer never turns '<s>' in a text into the BOS id. The window
    recognises typed special tokens (chat prompts); with ``allowed_special=()`` our ids are
    exactly mistral-common's, which is what the parity view compares (it found this)."""
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    from explorer.engine.parity.implementations import reference_allowed_special

    path = require("mistral-tekken", "tekken_240911.json")
    ours = load_tokenizer(path)
    theirs = Tekkenizer.from_file(str(path))
    text = "<s>[INST] hi [/INST]</s> <unk> [CLS]"
    allowed = reference_allowed_special(ours)
    assert allowed == ()
    assert ours.encode(text, allowed_special=allowed).ids == list(
        theirs.encode(text, bos=False, eos=False))
    assert ours.encode(text).ids[0] == 1  # typed in the window: the BOS token


@pytest.mark.parametrize("name", ["tekken_240718.json", "tekken_240911.json"])
def test_tekken_add_special_tokens_is_mistral_common_bos(name):
    """``add_special_tokens=True`` adds what mistral-common's ``encode(text, bos=True,
    eos=False)`` adds (transformers' MistralCommonBackend asks exactly that), shown as the
    post-processor in ``info`` and in the pipeline trace."""
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    from explorer.engine.explain.pipeline import pipeline_trace

    path = require("mistral-tekken", name)
    ref, tok = Tekkenizer.from_file(str(path)), load_tokenizer(path)
    assert tok.supports_post_processor()
    assert tok.info.extra["post-processor"].startswith("<s> $A (mistral-common")
    for text in [*TEXT.splitlines()[::4], "", "hi <s> [INST]"]:
        enc = tok.encode(text, add_special_tokens=True, allowed_special=())
        assert enc.ids == ref.encode(text, bos=True, eos=False)
        assert enc.offsets[0] == (0, 0) and enc.tokens[0].special
        keep = SpecialTokenPolicy.KEEP
        assert tok.decode(enc.ids) == ref.decode(enc.ids, special_token_policy=keep)
        assert tok.encode(text, allowed_special=()).ids == ref.encode(text, bos=False, eos=False)
    trace = pipeline_trace(tok, "Bonjour, 世界")
    assert trace.post_ids == ref.encode("Bonjour, 世界", bos=True, eos=False)
    assert [(a.index, a.id, a.piece) for a in trace.additions] == [(0, ref.bos_id, "<s>")]


def test_tekken_cli_encode_and_pipeline_add_bos(tmp_path, capsys):
    """``encode --add-special-tokens`` and ``pipeline --output json`` show the BOS."""
    from explorer.cli import main

    path = require("mistral-tekken", "tekken_240911.json")
    src = tmp_path / "in.txt"
    src.write_text("Hé", encoding="utf-8")
    assert main(["encode", "--vocab", str(path), "--add-special-tokens", "--output", "json",
                 str(src)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ids"][0] == 1 and out["pieces"][0] == "<s>" and out["offsets"][0] == [0, 0]
    assert main(["pipeline", "--vocab", str(path), "--output", "json", str(src)]) == 0
    post = json.loads(capsys.readouterr().out)["post_processor"]
    assert post["added"] == [[0, 1, "<s>"]] and post["ids"] == out["ids"]
