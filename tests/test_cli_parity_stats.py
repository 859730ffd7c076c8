"""``tokenizer-explorer parity`` and ``stats``: output, exit codes, JSON schema, Dask."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import subprocess
import sys
from pathlib import Path

import distributed
import pytest
import tiktoken
import tiktoken.load
from references import require

from explorer.cli import main
from explorer.engine.formats.tiktoken_presets import PRESETS
from explorer.engine.pretokenizers import patterns

ROOT = Path(__file__).resolve().parents[1]
VOCAB = ROOT / "resources" / "vocab"
SAMPLES = ROOT / "resources" / "samples" / "multilingual.txt"


@pytest.fixture(scope="module")
def possessive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    obj = json.loads((VOCAB / "corpus_bpe_4k.json").read_text(encoding="utf-8"))
    obj["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": patterns.CL100K}, "behavior": "Isolated",
         "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": False}]}
    path = tmp_path_factory.mktemp("cli") / "possessive.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def test_parity_differs_exit_1(possessive: Path, tmp_path: Path, capsys) -> None:
    text = tmp_path / "t.txt"
    text.write_text("no digits here\nthe year 2000000\n", encoding="utf-8")
    assert main(["parity", "--vocab", str(possessive), str(text)]) == 1
    out = capsys.readouterr().out
    assert "implementations: explorer (this engine), HF tokenizers, " \
           "tiktoken (from tokenizer.json)" in out
    assert "lines: 2" in out and "differing lines: 1" in out
    assert "line 2 [tiktoken (from tokenizer.json)] token" in out
    assert "pre-tokenization output: ours '2000000' vs (not exposed)" in out
    assert main(["parity", "--vocab", str(possessive), "--output", "csv", str(text)]) == 1
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["line"], r["stage"]) for r in rows] == [("2", "pre-tokenization")]


def test_parity_agrees_exit_0(capsys) -> None:
    cl100k = require("gpt-tokenizer", "cl100k_base.tiktoken")
    assert main(["parity", "--vocab", str(cl100k), "--output", "json", str(SAMPLES)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["implementations"] == ["explorer (this engine)", "tiktoken"]
    assert data["differing"] == [] and data["lines"] == 18


def test_parity_bad_input_exit_2(tmp_path: Path, capsys) -> None:
    assert main(["parity", "--vocab", str(VOCAB / "cl100k_base.tiktoken"),
                 str(tmp_path / "missing.txt")]) == 2
    assert "no such file" in capsys.readouterr().err
    if importlib.util.find_spec("llama_cpp") is None:
        # transformers cannot convert a bert GGUF; llama.cpp is missing: nothing to compare
        gguf = require("llama-cpp", "ggml-vocab-bert-bge.gguf")
        assert main(["parity", "--vocab", str(gguf), str(SAMPLES)]) == 2
        err = capsys.readouterr().err
        assert "pip install llama-cpp-python" in err and "'bert'" in err
        assert len(err.strip().splitlines()) == 1


def test_parity_gguf_exit_codes(tmp_path: Path, capsys) -> None:
    """A GGUF through transformers' conversion: 0 when every line agrees (gpt-2), 1 when one
    differs (starcoder: no split regex for its ``tokenizer.ggml.pre``), with the stage."""
    lines = tmp_path / "lines.txt"
    lines.write_text("Hello world\nied 4 ½ months\n", encoding="utf-8")
    gpt2 = require("llama-cpp", "ggml-vocab-gpt-2.gguf")
    assert main(["parity", "--vocab", str(gpt2), str(lines)]) == 0
    assert "differing lines: 0" in capsys.readouterr().out
    starcoder = require("llama-cpp", "ggml-vocab-starcoder.gguf")
    assert main(["parity", "--vocab", str(starcoder), str(lines), "--output", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["differing_lines"]["transformers (GGUF)"] == 1
    [d] = data["differing"]
    assert (d["line"], d["stage"], d["first_token"]) == (2, "pre-tokenization", 3)


def _stats_json(args: list[str], capsys) -> dict:
    assert main(["stats", *args, "--output", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_stats_json_schema_and_reference_counts(capsys) -> None:
    cl100k = VOCAB / "cl100k_base.tiktoken"
    data = _stats_json(["--vocab", str(cl100k), "--vocab", str(VOCAB / "corpus_bpe_4k.json"),
                        "--workers", "1", str(SAMPLES)], capsys)
    first, second = data["tokenizers"]
    assert (first["name"], second["name"]) == ("cl100k_base.tiktoken", "corpus_bpe_4k.json")
    for key in ("tokens", "chars", "bytes", "by_script"):
        assert key in first
    assert set(first["by_script"]["Latin"]) >= {"tokens", "chars"}
    p = PRESETS["cl100k"]
    enc = tiktoken.Encoding("cl100k", pat_str=p.pattern, special_tokens=p.special_tokens,
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(cl100k)))
    lines = SAMPLES.read_text(encoding="utf-8").split("\n")[:-1]
    assert first["tokens"] == sum(len(enc.encode(x, allowed_special="all")) for x in lines)
    assert first["chars"] == sum(len(x) for x in lines)
    assert sum(v["tokens"] for v in first["by_script"].values()) == first["tokens"]


def test_stats_text_csv_by_script_and_diff(capsys) -> None:
    args = ["stats", "--vocab", str(VOCAB / "cl100k_base.tiktoken"), "--vocab",
            str(VOCAB / "corpus_unigram_4k.model"), "--workers", "1", str(SAMPLES)]
    assert main([*args, "--by-script", "--diff", "--diff-limit", "3"]) == 0
    out = capsys.readouterr().out
    assert "tokens per script" in out and "Hangul" in out
    assert "lines where the token boundaries differ (first 3 shown)" in out
    assert main([*args, "--by-script", "--output", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["script"] for r in rows} >= {"Latin", "Cyrillic", "CJK", "Arabic"}


def test_stats_scheduler_gives_the_local_table(capsys) -> None:
    args = ["--vocab", str(VOCAB / "corpus_bpe_4k.json"), str(SAMPLES),
            str(ROOT / "resources" / "samples" / "welcome.txt")]
    local = _stats_json([*args, "--workers", "1"], capsys)
    with distributed.LocalCluster(n_workers=1, processes=False,
                                  dashboard_address=None) as cluster:
        remote = _stats_json([*args, "--scheduler", cluster.scheduler_address], capsys)
    assert remote == local


def test_stats_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xc3(\n")
    for args in (["--vocab", str(VOCAB / "corpus_bpe_4k.json"), str(bad)],
                 ["--vocab", str(tmp_path / "none.json"), str(SAMPLES)],
                 ["--vocab", str(VOCAB / "corpus_bpe_4k.json"), "--workers", "0",
                  str(SAMPLES)]):
        proc = subprocess.run([sys.executable, "-m", "explorer", "stats", *args],
                              capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_parity_and_stats_read_bundled_vocabularies(capsys) -> None:
    """``--vocab bundled:NAME`` works as for ``encode`` (also in the frozen build, where the
    files sit inside the bundle); an unknown name is one line, exit 2."""
    assert main(["parity", "--vocab", "bundled:cl100k_base", str(SAMPLES)]) == 0
    assert "explorer (this engine), tiktoken" in capsys.readouterr().out
    data = _stats_json(["--vocab", "bundled:cl100k_base", "--workers", "1", str(SAMPLES)],
                       capsys)
    assert data["tokenizers"][0]["name"] == "cl100k_base.tiktoken"
    assert main(["stats", "--vocab", "bundled:nope", str(SAMPLES)]) == 2
    assert "no bundled vocabulary 'nope'" in capsys.readouterr().err
