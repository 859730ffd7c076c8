"""Metaspace's split (``cut_before``) against the general split with ``MergedWithNext``,
and against HF tokenizers' own Metaspace pre-tokenizer."""

from __future__ import annotations

import random

import tokenizers

from explorer.engine.hf.normalized import Aligned
from explorer.engine.hf.pre_tokenizers import MetaspacePre, _literal, cut_before
from explorer.engine.hf.splitting import single_char_matches, split_pieces

SP = "\u2581"


def texts() -> list[str]:
    rng = random.Random(11)
    return ["", SP, SP * 3, "a", f"a{SP}", f"{SP}a", f"a{SP}{SP}b{SP}"] + [
        "".join(rng.choice(f"ab{SP}{SP} ") for _ in range(rng.randint(0, 25)))
        for _ in range(400)]


def spans(pieces: list[Aligned]) -> list[tuple[str, list[int], list[int]]]:
    return [(p.text, p.starts, p.ends) for p in pieces]


def test_cutting_before_each_replacement_is_the_merged_with_next_split() -> None:
    one = _literal(SP)
    for text in texts():
        pieces = [Aligned.from_original(text), Aligned.from_original(text[::-1], 5)]
        general = split_pieces(pieces, lambda t: single_char_matches(one, t), "MergedWithNext")
        assert spans(cut_before(pieces, one)) == spans(general), repr(text)


def test_metaspace_pieces_and_offsets_as_hf_tokenizers() -> None:
    for scheme in ("always", "first", "never"):
        ours = MetaspacePre(SP, scheme, True)
        hf = tokenizers.pre_tokenizers.Metaspace(replacement=SP, prepend_scheme=scheme)
        for text in texts():
            text = text.replace(SP, " ")
            got = [(p.text, p.span(0, len(p))) for p in ours.split([Aligned.from_original(text)])]
            assert got == hf.pre_tokenize_str(text), (scheme, repr(text))
