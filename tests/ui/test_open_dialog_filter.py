"""File > Open's name filters: Qt reads them as intended, every format we load is offered
under "Vocabularies" by its real file name, and each of those files opens."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import minbpe_reference
import pytest
from PySide6.QtCore import QDir
from PySide6.QtWidgets import QFileDialog
from references import require

from explorer.engine.formats import load_tokenizer
from explorer.engine.formats.gguf_reader import read_metadata
from explorer.ui.tokenizer_source import FILE_FILTER, FILE_TYPES


def patterns(name_filter: str) -> list[str]:
    """The globs of one filter, read as Qt reads them (the last parenthesised group)."""
    m = re.search(r"\(([^()]*)\)$", name_filter)
    assert m, name_filter
    return m.group(1).split()


def test_qt_reads_every_filter(qtbot) -> None:
    dialog = QFileDialog()
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog)
    dialog.setNameFilter(FILE_FILTER)
    filters = dialog.nameFilters()
    assert len(filters) == len(FILE_TYPES) + 2  # Vocabularies, each type, All files
    assert filters[0].startswith("Vocabularies (") and filters[-1] == "All files (*)"
    every = patterns(filters[0])
    for f in filters[1:-1]:
        assert set(patterns(f)) <= set(every), f


@pytest.fixture(scope="module")
def real_files(tmp_path_factory) -> list[Path]:
    """One real file of every format, under the name people have it."""
    tmp = tmp_path_factory.mktemp("open")
    files = [require("gpt-tokenizer", "cl100k_base.tiktoken"),
             require("minilm", "tokenizer.json"),
             require("mon-tokenizer", "mon_tokenizer.json"),
             require("mistral-common", "tokenizer.model.v1"),
             require("llama-cpp", "ggml-vocab-phi-3.gguf"),
             require("mistral-tekken", "tekken_240911.json"),
             require("anthropic-tokenizer", "claude.json"),
             require("js-tiktoken", "o200k_base.js")]
    folder = tmp / "bert"
    shutil.copytree(require("minilm-folder", "vocab.txt").parent, folder)
    files += [folder / n for n in ("vocab.txt", "tokenizer_config.json",
                                   "special_tokens_map.json", "config.json")]
    gpt2 = tmp / "gpt2"
    gpt2.mkdir()
    meta = read_metadata(require("llama-cpp", "ggml-vocab-gpt-2.gguf"))
    vocab = {t: i for i, t in enumerate(meta["tokenizer.ggml.tokens"])}
    (gpt2 / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (gpt2 / "merges.txt").write_text("\n".join(meta["tokenizer.ggml.merges"]), encoding="utf-8")
    files += [gpt2 / "vocab.json", gpt2 / "merges.txt"]
    spm = tmp / "spm"
    spm.mkdir()
    shutil.copyfile(require("mistral-common", "tokenizer.model.v1"), spm / "tokenizer.model")
    (spm / "chat_template.jinja").write_text("{{ messages }}")
    files += [spm / "tokenizer.model", spm / "chat_template.jinja"]
    basic = minbpe_reference.RegexTokenizer(pattern="")
    basic.train("aaabdaaabac", 256 + 3)
    basic.save(str(tmp / "toy"))
    files += [tmp / "toy.model", tmp / "toy.vocab"]
    return files


def test_every_format_is_offered_and_opens(real_files) -> None:
    every = patterns(FILE_FILTER.split(";;")[0])
    for path in real_files:
        assert QDir.match(every, path.name), f"{path.name} is hidden by File > Open's filter"
        assert load_tokenizer(path).vocab_size > 0, path
    for other in ("notes.txt", "picture.png", "model.bin"):
        assert not QDir.match(every, other)


def test_ui_tests_keep_qts_own_state_out_of_the_users_config() -> None:
    """A non-native file dialog saves its history through QSettings("QtProject"): in the
    tests it lands in Qt's test directories (CI runs added their clone's path to the
    user's ~/.config/QtProject.conf before)."""
    from pathlib import Path

    from PySide6.QtCore import QStandardPaths

    assert QStandardPaths.isTestModeEnabled()
    config = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericConfigLocation)
    assert Path(config) != Path.home() / ".config"
    assert ".qttest" in Path(config).parts
