"""Bad tokenizer.json files give one clear error (never a traceback); unsupported parts named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.engine.errors import UnsupportedComponentError, VocabFormatError
from explorer.engine.formats import load_tokenizer
from explorer.engine.hf.onig import compile_onig, translate


def _minimal(**over: object) -> dict:
    obj: dict = {
        "version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
        "post_processor": None, "decoder": None,
        "model": {"type": "WordLevel", "vocab": {"<unk>": 0, "a": 1}, "unk_token": "<unk>"},
    }
    obj.update(over)
    return obj


def _write(tmp_path: Path, obj: object, name: str = "tokenizer.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(obj) if not isinstance(obj, str) else obj, encoding="utf-8")
    return p


def test_minimal_file_loads(tmp_path: Path) -> None:
    tok = load_tokenizer(_write(tmp_path, _minimal()))
    assert tok.encode("a").ids == [1]
    assert tok.encode("b").ids == [0]


def test_malformed_json(tmp_path: Path) -> None:
    p = _write(tmp_path, '{"model": {"type": "BPE", "vocab": {')
    with pytest.raises(VocabFormatError, match="malformed JSON at line 1"):
        load_tokenizer(p)


def test_top_level_not_object(tmp_path: Path) -> None:
    with pytest.raises(VocabFormatError, match="top level"):
        load_tokenizer(_write(tmp_path, "[1, 2]"), format="tokenizer.json")


def test_missing_model(tmp_path: Path) -> None:
    obj = _minimal()
    del obj["model"]
    with pytest.raises(VocabFormatError, match="missing the key 'model'"):
        load_tokenizer(_write(tmp_path, obj))


@pytest.mark.parametrize(("model", "message"), [
    ({"type": "BPE", "merges": []}, "BPE is missing the key 'vocab'"),
    ({"type": "BPE", "vocab": {"a": 0}}, "BPE is missing the key 'merges'"),
    ({"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]}, "result 'ab'"),
    ({"type": "BPE", "vocab": {"a": 0}, "merges": ["a c"]}, "'c' is not in the vocabulary"),
    ({"type": "Unigram", "vocab": [["a"]]}, "not \\[piece, score\\]"),
    ({"type": "WordPiece", "vocab": {"a": "x"}}, "not a token id"),
])
def test_bad_models(tmp_path: Path, model: dict, message: str) -> None:
    with pytest.raises(VocabFormatError, match=message):
        load_tokenizer(_write(tmp_path, _minimal(model=model)))


@pytest.mark.parametrize(("key", "value", "name"), [
    ("normalizer", {"type": "Unknown"}, "normalizer 'Unknown'"),
    ("pre_tokenizer", {"type": "UnicodeScripts"}, "pre-tokenizer 'UnicodeScripts'"),
    ("decoder", {"type": "CTC"}, "decoder 'CTC'"),
    ("model", {"type": "Mystery", "vocab": {}}, "model 'Mystery'"),
    ("pre_tokenizer", {"type": "Sequence", "pretokenizers": [{"type": "FixedLength"}]},
     "pre-tokenizer 'FixedLength'"),
])
def test_unsupported_components_are_named(tmp_path: Path, key: str, value: dict,
                                          name: str) -> None:
    with pytest.raises(UnsupportedComponentError, match=f"unsupported {name}"):
        load_tokenizer(_write(tmp_path, _minimal(**{key: value})))


def test_bpe_dropout_refused(tmp_path: Path) -> None:
    model = {"type": "BPE", "vocab": {"a": 0}, "merges": [], "dropout": 0.1}
    with pytest.raises(UnsupportedComponentError, match="dropout"):
        load_tokenizer(_write(tmp_path, _minimal(model=model)))


def test_cli_reports_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _write(tmp_path, '{"model": ')
    text = tmp_path / "in.txt"
    text.write_text("hello", encoding="utf-8")
    assert main(["encode", "--vocab", str(bad), str(text)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "malformed JSON" in err and "Traceback" not in err
    unsupported = _write(tmp_path, _minimal(normalizer={"type": "Unknown"}), "u.json")
    assert main(["info", "--vocab", str(unsupported)]) == 2
    err = capsys.readouterr().err
    assert "unsupported normalizer 'Unknown'" in err and err.count("\n") == 1


def test_oniguruma_interval_plus_is_not_possessive() -> None:
    assert translate(r"\p{N}{1,3}+") == r"(?:\p{N}{1,3})+"
    assert translate(r"[a-z]{2}+x") == r"(?:[a-z]{2})+x"
    assert translate(r"a++b?+") == r"a++b?+"  # possessive in both engines
    onig = compile_onig(r"\p{N}{1,3}+")
    assert onig.findall("2000000") == ["2000000"]


def test_hf_split_with_interval_plus_matches_hf(tmp_path: Path) -> None:
    from tokenizers import Tokenizer as HFTokenizer

    obj = _minimal(pre_tokenizer={
        "type": "Split", "pattern": {"Regex": r"\p{N}{1,3}+| ?\p{L}+|\s+"},
        "behavior": "Isolated", "invert": False})
    obj["model"]["vocab"] = {"<unk>": 0, "2000000": 1, "200": 2, " a": 3}
    p = _write(tmp_path, obj)
    ours = load_tokenizer(p)
    ref = HFTokenizer.from_file(str(p))
    for text in ["2000000", "200 a", "2000000 a 200"]:
        assert ours.encode(text).ids == ref.encode(text, add_special_tokens=False).ids
    assert ours.encode("2000000").ids == [1]


@pytest.mark.parametrize("behavior", ["Removed", "Isolated", "MergedWithPrevious",
                                      "MergedWithNext", "Contiguous"])
@pytest.mark.parametrize("invert", [False, True])
def test_split_behaviors_match_hf(tmp_path: Path, behavior: str, invert: bool) -> None:
    from tokenizers import pre_tokenizers

    ref = pre_tokenizers.Split(pattern="-", behavior=behavior.lower()
                               .replace("mergedwithprevious", "merged_with_previous")
                               .replace("mergedwithnext", "merged_with_next"), invert=invert)
    obj = _minimal(pre_tokenizer=json.loads(ref.__getstate__()))
    tok = load_tokenizer(_write(tmp_path, obj))
    for text in ["a-b--c-", "--x", "plain", "-"]:
        expected = [(s, o) for s, o in ref.pre_tokenize_str(text)]
        got = [(p.text, (p.start, p.end)) for p in tok.stages(text).pre_tokens]
        assert got == expected, text


def test_fast_char_class_split_agrees_with_predicates() -> None:
    import unicodedata

    from explorer.engine.hf.pre_tokenizers import _CHAR_CLASSES
    from explorer.engine.hf.splitting import char_matches, single_char_matches

    sample = "".join(chr(o) for o in range(0, 0x3100) if unicodedata.category(chr(o)) != "Cs")
    sample += "東京 ２０２６年 ٣٤ ߂ 🦙 ‼︎ ⁉ ፨ 𑁇 𐄀"
    for pred, (pattern, check) in _CHAR_CLASSES.items():
        got = single_char_matches(pattern, sample, pred if check else None)
        assert got == char_matches(pred, sample), pred.__name__


# Characters whose Unicode data differ between Python 3.11's unicodedata (Unicode 14) and
# the tables compiled into HF tokenizers (newer for case mapping, older for marks/NFKC).
UNICODE_VERSION_SKEW = {
    "NFKC": {0x32FF, 0xA7F2, 0xA7F3, 0xA7F4, 0xAB69},
    "NFKD": {0x32FF, 0xA7F2, 0xA7F3, 0xA7F4, 0xAB69},
    "BertNormalizer": {0x890, 0x891, 0x8E2},  # format characters added in Unicode 14
    "Lowercase": {0x1C89, 0xA7CB, 0xA7CC, 0xA7CE, 0xA7D2, 0xA7D4, 0xA7DA, 0xA7DC},
}


@pytest.mark.parametrize("spec", [
    {"type": "Nmt"}, {"type": "NFC"}, {"type": "NFD"}, {"type": "NFKC"}, {"type": "NFKD"},
    {"type": "Lowercase"}, {"type": "Strip", "strip_left": True, "strip_right": True},
    {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
     "strip_accents": False, "lowercase": False},
])
def test_normalizers_agree_with_hf_on_every_bmp_character(spec: dict) -> None:
    """Each normalizer on every BMP character (between two letters) equals HF's, except
    for the few characters whose Unicode data changed between the two libraries' tables."""
    from tokenizers import Tokenizer as HFTokenizer

    from explorer.engine.hf.normalized import Aligned
    from explorer.engine.hf.normalizers import normalizer_from_json

    hf = HFTokenizer.from_str(json.dumps(_minimal(normalizer=spec))).normalizer
    ours = normalizer_from_json(spec)
    assert ours is not None
    skew = UNICODE_VERSION_SKEW.get(spec["type"], set())
    bad = []
    for o in range(1, 0x10000):
        if 0xD800 <= o <= 0xDFFF or o in skew:
            continue
        for text in (f"a{chr(o)}b", f"{chr(o)}a{chr(o)}"):
            if ours.normalize(Aligned.from_original(text)).text != hf.normalize_str(text):
                bad.append(hex(o))
    assert bad == []
