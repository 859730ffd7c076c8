"""Training API: cancellation leaves no files, corpora from files or strings, the CLI."""

from __future__ import annotations

import threading

import pytest

from explorer.bundled import resource_path
from explorer.cli import main
from explorer.engine.errors import Cancelled
from explorer.engine.trainers import (
    BpeConfig,
    BytesRead,
    Corpus,
    CorpusError,
    Merge,
    UnigramConfig,
    run,
    train,
    train_to_file,
)
from explorer.engine.trainers.corpus import split_lines

BOTCHAN = resource_path("corpus", "botchan.txt")


@pytest.mark.parametrize("config", [BpeConfig(vocab_size=600), UnigramConfig(vocab_size=300)],
                         ids=["bpe", "unigram"])
def test_cancel_flag_stops_training_and_writes_nothing(config, tmp_path):
    stop = threading.Event()
    out = tmp_path / "model.json"
    seen = 0
    with pytest.raises(Cancelled):
        for _ in train_to_file(Corpus.from_files([BOTCHAN]), config, out, cancel=stop):
            seen += 1
            if seen == 8:
                stop.set()
    assert seen == 8
    assert list(tmp_path.iterdir()) == []


def test_cancel_callable_and_generator_close():
    calls = {"n": 0}

    def cancel() -> bool:
        calls["n"] += 1
        return calls["n"] > 30

    with pytest.raises(Cancelled):
        run(train(Corpus.from_files([BOTCHAN]), BpeConfig(vocab_size=1000), cancel=cancel))
    gen = train(Corpus.from_files([BOTCHAN]), BpeConfig(vocab_size=1000))
    merges = [e for _, e in zip(range(200), gen, strict=False) if isinstance(e, Merge)]
    gen.close()  # stopping mid-way is clean; a fresh run is unaffected
    assert merges
    again = run(train(Corpus.from_files([BOTCHAN]), BpeConfig(vocab_size=1000,
                                                               merge_events=False)))
    assert again.model.vocab_size == 1000


def test_train_to_file_writes_once_at_the_end(tmp_path):
    out = tmp_path / "u.model"
    events = train_to_file(Corpus.from_files([BOTCHAN]), UnigramConfig(vocab_size=300), out)
    for event in events:
        if isinstance(event, BytesRead):
            assert not out.exists()
    assert out.stat().st_size > 0
    assert [p.name for p in tmp_path.iterdir()] == ["u.model"]


def test_corpus_blocks_are_whole_lines_and_report_bytes(tmp_path):
    text = "first line\r\nsecond\n" + "é" * 5000 + "\nlast without newline"
    p = tmp_path / "c.txt"
    p.write_bytes(text.encode("utf-8"))
    blocks = list(Corpus(paths=[p], block_chars=1000).blocks())
    assert "".join(b for b, _ in blocks) == text
    assert all(b.endswith("\n") for b, _ in blocks[:-1])
    assert blocks[-1][1] == len(text.encode("utf-8"))
    assert split_lines("a\nb\r\n\nc") == ["a\n", "b\r\n", "\n", "c"]


def test_corpus_errors_are_one_line(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(CorpusError, match="not UTF-8"):
        run(train(Corpus.from_files([bad]), BpeConfig(vocab_size=300)))
    with pytest.raises(CorpusError, match="no such file"):
        Corpus.from_files([tmp_path / "missing.txt"])


def test_cli_train_bpe_and_unigram(tmp_path, capsys):
    out = tmp_path / "bpe.tiktoken"
    assert main(["train", "--algorithm", "bpe", "--vocab-size", "500", "--output", str(out),
                 str(BOTCHAN)]) == 0
    captured = capsys.readouterr()
    assert "merges" in captured.out and "244" in captured.out
    assert "merging" in captured.err
    assert len(out.read_bytes().splitlines()) == 500
    out2 = tmp_path / "uni.json"
    assert main(["train", "--algorithm", "unigram", "--vocab-size", "300", "--quiet",
                 "--output", str(out2), str(BOTCHAN)]) == 0
    assert "unigram" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--algorithm", "unigram", "--output", "x.tiktoken"], "byte-level BPE"),
    (["--algorithm", "bpe", "--output", "x.model"], "metaspace"),
    (["--algorithm", "bpe", "--output", "x.txt"], "extension"),
    (["--algorithm", "bpe", "--output", "x.json", "missing.txt"], "no such file"),
    (["--algorithm", "bpe", "--output", "nodir/x.json"], "no such folder"),
])
def test_cli_errors_exit_2_with_one_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    corpus = [] if argv[-1] == "missing.txt" else [str(BOTCHAN)]
    assert main(["train", "--vocab-size", "300", *argv, *corpus]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert list(tmp_path.iterdir()) == []


def test_gc_is_restored_after_bpe_training_and_after_cancel(automatic_gc):
    import gc

    assert gc.isenabled()
    run(train(Corpus.from_files([BOTCHAN]), BpeConfig(vocab_size=400)))
    assert gc.isenabled()
    during: list[bool] = []

    def stop() -> bool:  # asked inside a merge step
        during.append(gc.isenabled())
        return False

    gen = train(Corpus.from_files([BOTCHAN]), BpeConfig(vocab_size=400), finish=stop)
    for event in gen:
        if isinstance(event, Merge):
            assert gc.isenabled()  # restored at every yield, not held across it
            break
    assert during and not any(during)  # paused while merging
    gen.close()
    assert gc.isenabled()


def test_cli_metaspace_bpe_model_with_special_tokens(tmp_path, capsys):
    spm = pytest.importorskip("sentencepiece")
    out = tmp_path / "m.model"
    assert main(["train", "--algorithm", "bpe", "--mode", "metaspace", "--special-token", "<unk>",
                 "--special-token", "<pad>", "--vocab-size", "400", "--quiet", "--output",
                 str(out), str(BOTCHAN)]) == 0
    sp = spm.SentencePieceProcessor(model_file=str(out))
    assert sp.get_piece_size() == 400
    assert sp.id_to_piece(0) == "<unk>" and sp.is_unknown(0)
    assert sp.id_to_piece(1) == "<pad>" and sp.is_control(1)
    assert "<unk> <pad>" in capsys.readouterr().out
