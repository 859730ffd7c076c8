"""The pipeline trace (and ``tokenizer-explorer pipeline``) against the reference libraries'
own stage outputs on multilingual text: HF ``normalize_str`` / ``pre_tokenize_str`` /
``encode`` / ``decode``, sentencepiece ``normalize`` / ``encode`` / ``decode``, tiktoken."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hf_support import hf_reference, parity_texts, trained_files
from references import require

from explorer.engine.explain.alternatives import alternatives, finder
from explorer.engine.explain.pipeline import changes, losses, pipeline_trace
from explorer.engine.formats import load_tokenizer

ROOT = Path(__file__).resolve().parents[2]
EXTRA = ["Café  ÉCOLE naïve ½ ﬁne ＡＢＣ", "  spaced   out  ", "e\u0301 composed\u0301",
         "𞤀𞤣𞤤𞤢𞥄 end", "東京は晴れ 👩‍👩‍👧 ok"]


def _texts() -> list[str]:
    return [t for t in parity_texts() + EXTRA
            if "<s>" not in t and "[CLS]" not in t]  # added tokens: split out before stages


def _check_hf(path: Path, texts: list[str], *, pre_exact: bool = True) -> None:
    tok, ref = load_tokenizer(path), hf_reference(path)
    for text in texts:
        tr = pipeline_trace(tok, text)
        want_norm = ref.normalizer.normalize_str(text) if ref.normalizer else text
        assert tr.normalized == want_norm, text
        assert len(tr.norm_starts) == len(tr.normalized) == len(tr.norm_ends)
        if ref.pre_tokenizer is not None and pre_exact:
            want = [[p, list(span)] for p, span in ref.pre_tokenizer.pre_tokenize_str(want_norm)]
            assert tr.to_json()["pre_tokens"] == want, text
        enc = ref.encode(text, add_special_tokens=False)
        assert tr.encoding.ids == enc.ids and tr.encoding.pieces == enc.tokens, text
        assert tr.decoded == ref.decode(enc.ids, skip_special_tokens=False), text
        if ref.post_processor is not None:
            assert tr.post_ids == ref.encode(text).ids, text


@pytest.mark.parametrize("name", ["bytelevel_bpe", "llama_style_bpe", "prefix_suffix_bpe",
                                  "unigram", "wordpiece", "wordlevel"])
def test_trained_tokenizer_json_stages_equal_hf(name: str) -> None:
    _check_hf(trained_files()[name], _texts())


@pytest.mark.parametrize(("key", "name"), [("minilm", "tokenizer.json"),
                                           ("mon-tokenizer", "mon_tokenizer.json")])
def test_real_tokenizer_json_stages_equal_hf(key: str, name: str) -> None:
    _check_hf(require(key, name), _texts())


def test_minilm_post_processor_additions_are_cls_and_sep() -> None:
    tr = pipeline_trace(load_tokenizer(require("minilm", "tokenizer.json")), "Héllo wörld")
    assert [(a.index, a.id, a.piece) for a in tr.additions] == [(0, 101, "[CLS]"),
                                                                (3, 102, "[SEP]")]
    assert [(c.before, c.after) for c in tr.changes] == [("H", "h"), ("é", "e"), ("ö", "o")]


@pytest.mark.parametrize("name", ["botchan_en_unigram_1000.model", "botchan_en_bpe_1000.model",
                                  "kyoto_ja_unigram_8000.model"])
def test_sentencepiece_stages_equal_sentencepiece(name: str) -> None:
    import sentencepiece as spm

    path = require("sentencepiece", name)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = load_tokenizer(path)
    for text in _texts():
        tr = pipeline_trace(tok, text)
        assert tr.normalized == sp.normalize(text), text
        assert "".join(p.piece for p in tr.pre_tokens) == tr.normalized
        ids = sp.encode(text)
        assert tr.encoding.ids == ids, text
        assert tr.decoded == sp.decode(ids), text
        # every change is a real difference, placed where the alignment says
        for c in tr.changes:
            assert c.before != c.after and text[c.orig_start:c.orig_end] == c.before


def test_sentencepiece_byte_fallback_model() -> None:
    import sentencepiece as spm

    path = require("mistral-common", "tokenizer.model.v1")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = load_tokenizer(path)
    text = "naïve 𞤀𞤣𞤤 ☃ text"
    tr = pipeline_trace(tok, text)
    assert tr.normalized == sp.normalize(text)
    assert tr.encoding.ids == sp.encode(text)
    assert tr.decoded == sp.decode(sp.encode(text))
    assert any(c.after.startswith("\u2581") for c in tr.changes)  # spaces became ▁


def test_tiktoken_pre_tokens_and_alternatives() -> None:
    import regex
    from tiktoken_support import ours, reference

    tok, ref = ours("cl100k"), reference("cl100k")
    text = "Hello world's 12345 \n\n  x ½東京"
    tr = pipeline_trace(tok, text)
    assert [text[p.orig_start:p.orig_end] for p in tr.pre_tokens] == regex.findall(
        tok.splitter.pattern, text)
    assert tr.encoding.ids == ref.encode(text) and tr.decoded == ref.decode(ref.encode(text))
    rules = {text[p.orig_start:p.orig_end]: p.rule for p in tr.pre_tokens}
    assert rules["123"] == rules["45"] == r"\p{N}{1,3}+"
    assert rules["'s"].startswith("'(?i:")
    assert tr.normalized == text and tr.changes == []


def test_gguf_pre_tokenizer_regex_alternatives() -> None:
    path = require("llama-cpp", "ggml-vocab-llama-bpe.gguf")
    tok = load_tokenizer(path)
    text = "Numbers 1234567 and don't\n\n  stop"
    tr = pipeline_trace(tok, text)
    assert tr.encoding.ids == tok.encode(text).ids
    assert ("tokenizer.ggml.pre", "llama-bpe") in [(c.kind, c.description)
                                                   for c in tr.components]
    rules = {text[p.orig_start:p.orig_end]: p.rule for p in tr.pre_tokens}
    assert rules["123"] == rules["456"] == r"\p{N}{1,3}"
    assert all(p.regex for p in tr.pre_tokens)


def test_alternatives_split_at_top_level_only() -> None:
    pat = r"(?i:'s|'t)|[^\r\n|\p{L}]?\p{L}+|\p{N}{1,3}|[]|]+|\s+(?!\S)"
    assert alternatives(pat) == [r"(?i:'s|'t)", r"[^\r\n|\p{L}]?\p{L}+", r"\p{N}{1,3}",
                                 r"[]|]+", r"\s+(?!\S)"]
    f = finder(pat)
    assert f.which("ab  12", 2, 3) == 4  # one space: \s+(?!\S) leaves the space before "1"
    assert f.which("ab  12", 2, 4) is None  # no alternative matches exactly that span
    assert f.which("ab  12", 4, 6) == 2
    assert f.which("x |] y", 2, 4) == 3


def test_changes_and_losses_from_alignment() -> None:
    # "Ab\u0301c": 'A'->'a', b+combining->'b' (mark removed), leading mark removed
    text = "\u0301Ab\u0301c"
    got = changes(text, "abc", [1, 2, 4], [2, 3, 5])
    assert [(c.orig_start, c.orig_end, c.before, c.after) for c in got] == [
        (0, 1, "\u0301", ""), (1, 2, "A", "a"), (2, 4, "b\u0301", "b")]
    assert [(x.original, x.decoded) for x in losses("naïve  café", "naive cafe")] == [
        ("ï", "i"), (" ", ""), ("é", "e")]
    assert losses("same", "same") == []


def test_cli_pipeline_lines_json_equal_hf(tmp_path: Path) -> None:
    path = require("minilm", "tokenizer.json")
    ref = hf_reference(path)
    lines = ["Café ÉCOLE", "𞤀𞤣𞤤𞤢𞥄 naïve", "東京 ok"]
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "explorer", "pipeline", "--vocab", str(path),
                        "--lines", "--output", "json", str(src)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(rows) == len(lines)
    for row, text in zip(rows, lines, strict=True):
        norm = ref.normalizer.normalize_str(text)
        assert row["normalized"] == norm
        assert row["pre_tokens"] == [[p, list(s)] for p, s in
                                     ref.pre_tokenizer.pre_tokenize_str(norm)]
        enc = ref.encode(text, add_special_tokens=False)
        assert row["ids"] == enc.ids and row["tokens"] == enc.tokens
        assert row["decoded"] == ref.decode(enc.ids, skip_special_tokens=False)
        assert row["post_processor"]["ids"] == ref.encode(text).ids
    text_out = subprocess.run([sys.executable, "-m", "explorer", "pipeline", "--vocab",
                               str(path), str(src)], capture_output=True, text=True, env=env,
                              timeout=120)
    assert text_out.returncode == 0 and "normalized  'cafe ecole" in text_out.stdout
    bad = subprocess.run([sys.executable, "-m", "explorer", "pipeline", "--vocab",
                          str(tmp_path / "missing.json"), str(src)], capture_output=True,
                         text=True, env=env, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
