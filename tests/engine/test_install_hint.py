"""Messages about a missing optional library: the pip command from a pip install; in the
frozen build (no pip, reference libraries left out) that it is not included and how to get
it."""

from __future__ import annotations

import sys

import pytest

from explorer.engine.errors import CorpusError
from explorer.engine.install_hint import install_hint, is_frozen
from explorer.engine.parity.implementations import Unavailable
from explorer.engine.stats import CorpusSource, corpus_stats


def test_pip_command_from_a_pip_install() -> None:
    assert not is_frozen()
    u = Unavailable("tiktoken", "not installed", "pip install tiktoken")
    assert u.describe() == "tiktoken: not installed (install: pip install tiktoken)"
    assert install_hint("pip install x", frozen=False) == "install: pip install x"


def test_frozen_build_says_not_included_and_how_to_get_it(monkeypatch) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    d = Unavailable("tiktoken", "not installed", "pip install tiktoken").describe()
    assert d.startswith("tiktoken: not installed (not included in the frozen build; ")
    assert "install Tokenizer Explorer with pip" in d and d.endswith("pip install tiktoken)")
    assert "(install: pip" not in d
    # a library that cannot read the file is not about installing: no hint either way
    assert Unavailable("HF", "cannot read this file").describe() == "HF: cannot read this file"


@pytest.mark.parametrize("frozen", [False, True])
def test_dask_missing_message(monkeypatch, frozen: bool) -> None:
    from explorer.bundled import bundled_vocabulary
    from explorer.engine.formats import load_tokenizer

    if frozen:
        monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails as if not installed
    tok = load_tokenizer(bundled_vocabulary("bundled:corpus_bpe_4k"))
    job = corpus_stats([tok], [CorpusSource.memory("t", "a b\n")], scheduler="tcp://x:1")
    with pytest.raises(CorpusError) as e:
        next(job)
    assert 'pip install "dask[distributed]"' in str(e.value)
    assert ("frozen build" in str(e.value)) is frozen
