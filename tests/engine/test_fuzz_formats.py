"""Bad vocabulary files give one clear line and exit 2, never a traceback or a memory blow-up.

The four causes the first fuzzing found each get a regression test; then a seeded fuzz run
over every format (``tests/fuzz_formats.py``) goes through ``info``/``encode`` in a child
process with a 3 GB address-space cap, so a loader that allocates by a corrupt count fails
the test instead of taking the machine down.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import fuzz_formats
import pytest

from explorer.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _cli(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


def _assert_one_line_error(path: Path, capsys, needle: str) -> None:
    code, err = _cli(["info", "--vocab", str(path)], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and needle in err, err


def test_json_nested_deeper_than_the_recursion_limit(tmp_path, capsys):
    p = tmp_path / "tokenizer.json"
    p.write_text('{"model": ' + "[" * 100_000 + "]" * 100_000 + "}")
    _assert_one_line_error(p, capsys, "nested too deeply")


def test_json_integer_over_4300_digits(tmp_path, capsys):
    p = tmp_path / "tokenizer.json"
    p.write_text('{"model": {"vocab": {"a": ' + "7" * 5000 + "}}}")
    _assert_one_line_error(p, capsys, "4300")


@pytest.mark.parametrize("rank", [2**31, 2**32, 2**64])
def test_tiktoken_rank_far_beyond_the_token_count(tmp_path, capsys, rank):
    lines = fuzz_formats._tiktoken_lines(300)
    lines[-1] = lines[-1].split()[0] + b" " + str(rank).encode()
    p = tmp_path / "bad.tiktoken"
    p.write_bytes(b"\n".join(lines) + b"\n")
    _assert_one_line_error(p, capsys, f"rank {rank}")


def test_sentencepiece_piece_not_utf8(tmp_path, capsys):
    from explorer.engine.formats.sentencepiece_schema import ModelProto

    proto = ModelProto.FromString((fuzz_formats.RESOURCES / "corpus_unigram_4k.model")
                                  .read_bytes())
    data = proto.SerializeToString()
    piece = proto.pieces[300].piece.encode()
    assert data.count(piece) >= 1
    bad = data.replace(b"\n" + bytes([len(piece)]) + piece,
                       b"\n" + bytes([len(piece)]) + b"\xff" + piece[1:], 1)
    assert bad != data
    p = tmp_path / "bad.model"
    p.write_bytes(bad)
    _assert_one_line_error(p, capsys, "not valid UTF-8")


def test_seeded_fuzz_over_every_format():
    """Every format's mutants: exit 0, or exit 2 with one stderr line (3 GB cap, 1 process)."""
    mutants = int(os.environ.get("EXPLORER_FUZZ_MUTANTS", "60"))
    env = dict(os.environ, PYTHONPATH=str(ROOT), EXPLORER_NO_VOCAB_CACHE="1")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "fuzz_formats.py"), "--seed", "16",
         "--mutants", str(mutants), "--max-as-gb", "3"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["cases"] == mutants * len(fuzz_formats.SEEDS)
    assert result["failures"] == [], json.dumps(result["failures"][:5], indent=1)
