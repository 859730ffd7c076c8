"""Broken or unsupported GGUF files: one clear error, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import gguf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from references import require

from explorer.cli import main
from explorer.engine.errors import TokenizerError, UnsupportedComponentError, VocabFormatError
from explorer.engine.formats import load_tokenizer


def _write_gguf(path: Path, model: str, pre: str | None) -> Path:
    w = gguf.GGUFWriter(str(path), arch="llama")
    w.add_tokenizer_model(model)
    if pre is not None:
        w.add_tokenizer_pre(pre)
    w.add_token_list(["a", "b", "ab"])
    w.add_token_types([1, 1, 1])
    w.add_token_merges(["a b"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_tiny_written_file_loads(tmp_path: Path) -> None:
    tok = load_tokenizer(_write_gguf(tmp_path / "t.gguf", "gpt2", "gpt-2"))
    assert tok.encode("ab").ids == [2]
    assert tok.encode("ba").ids == [1, 0]


def test_unknown_pre_lists_supported(tmp_path: Path) -> None:
    p = _write_gguf(tmp_path / "t.gguf", "gpt2", "no-such-pre")
    with pytest.raises(UnsupportedComponentError) as info:
        load_tokenizer(p)
    msg = str(info.value)
    assert "'no-such-pre'" in msg
    for name in ("gpt-2", "llama-bpe", "qwen2", "qwen35", "deepseek-llm", "deepseek-coder",
                 "falcon", "mpt", "starcoder", "refact", "command-r"):
        assert name in msg


def test_unknown_model_lists_supported(tmp_path: Path) -> None:
    p = _write_gguf(tmp_path / "t.gguf", "rwkv", None)
    with pytest.raises(UnsupportedComponentError, match=r"'rwkv'.*gpt2, llama, t5, bert"):
        load_tokenizer(p)


@pytest.mark.parametrize("fraction", [0.0001, 0.01, 0.3, 0.7, 0.99])
def test_truncated_gguf(tmp_path: Path, fraction: float) -> None:
    data = require("llama-cpp", "ggml-vocab-gpt-2.gguf").read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: max(5, int(len(data) * fraction))])
    with pytest.raises(VocabFormatError, match="truncated GGUF"):
        load_tokenizer(cut)


def test_missing_tokens_key(tmp_path: Path) -> None:
    w = gguf.GGUFWriter(str(tmp_path / "n.gguf"), arch="llama")
    w.add_tokenizer_model("gpt2")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(VocabFormatError, match=r"no 'tokenizer\.ggml\.tokens'"):
        load_tokenizer(tmp_path / "n.gguf")


def test_cli_truncated_gguf_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = require("llama-cpp", "ggml-vocab-gpt-2.gguf").read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: len(data) // 2])
    text = tmp_path / "in.txt"
    text.write_text("hi", encoding="utf-8")
    for argv in (["encode", "--vocab", str(cut), str(text)], ["info", "--vocab", str(cut)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "truncated GGUF" in err and "Traceback" not in err


def test_cli_info_on_gguf(capsys: pytest.CaptureFixture[str]) -> None:
    path = require("llama-cpp", "ggml-vocab-llama-bpe.gguf")
    assert main(["info", "--vocab", str(path)]) == 0
    out = capsys.readouterr().out
    assert "gguf" in out and "bpe" in out and "llama-bpe" in out


def test_wrongly_typed_values_fail_cleanly(tmp_path: Path) -> None:
    w = gguf.GGUFWriter(str(tmp_path / "bad.gguf"), arch="llama")
    w.add_tokenizer_model("llama")
    w.add_token_list(["<unk>", "a", "b"])
    w.add_array("tokenizer.ggml.scores", ["x", "y", "z"])  # strings where floats belong
    w.add_token_types([2, 1, 1])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(VocabFormatError, match="corrupt GGUF"):
        load_tokenizer(tmp_path / "bad.gguf")


@settings(max_examples=int(os.environ.get("EXPLORER_HYPOTHESIS_EXAMPLES", "40")) * 2,
          deadline=None)
@given(flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1,
                      max_size=4))
def test_byte_flips_fail_cleanly(small_gguf: Path, flips: list[tuple[int, int]]) -> None:
    data = bytearray(small_gguf.read_bytes())
    for pos, value in flips:
        data[24 + pos % (len(data) - 24)] = value
    bad = small_gguf.with_name(f"flip-{abs(hash(tuple(flips)))}.gguf")
    bad.write_bytes(bytes(data))
    try:
        tok = load_tokenizer(bad)
        tok.decode(tok.encode("ab ba aab").ids)
    except TokenizerError as e:
        assert str(e) and "\n" not in str(e)
    finally:
        bad.unlink()


@pytest.fixture(scope="module")
def small_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small valid GPT-2 style GGUF in pytest's temporary directory (cleaned by pytest;
    a ``mkdtemp`` at import left one directory per run behind)."""
    path = tmp_path_factory.mktemp("gguf_small") / "small.gguf"
    _write_gguf(path, "gpt2", "gpt-2")
    return path


def test_every_gguf_pre_tokenizer_preset_compiles_and_splits() -> None:
    from explorer.engine.formats.gguf_presets import BPE_PRESETS
    from explorer.engine.hf.normalized import Aligned
    from explorer.engine.hf.onig import compile_onig
    from explorer.engine.hf.pre_tokenizers import SequencePre, SplitPre

    text = "Hello, World! It's 2024-06-01: 12345 東京 and ΐ Ω K Привет 🦙\n\n  x\ty"
    for name, preset in BPE_PRESETS.items():
        pre = SequencePre(tuple(SplitPre(compile_onig(r), r, "Isolated", False)
                                for r in preset.regexes))
        pieces = pre.split([Aligned.from_original(text)])
        assert "".join(p.text for p in pieces) == text, name  # Isolated keeps every char
        assert len(pieces) > 10, name
