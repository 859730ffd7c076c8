"""The fast Token factories build exactly what the dataclass constructor builds."""

from __future__ import annotations

import pytest

from explorer.engine import encoding
from explorer.engine.encoding import Token


@pytest.mark.parametrize("fast", [True, False])
def test_token_factories_equal_the_constructor(fast: bool, monkeypatch) -> None:
    monkeypatch.setattr(encoding, "_FAST", fast)
    scored = encoding._make_scored()
    ranked = encoding._make_ranked()
    assert scored(7, "▁a", b" a", 3, 5, True, False, -1.5) == Token(
        7, "▁a", b" a", 3, 5, special=True, unknown=False, score=-1.5
    )
    t = ranked(9, "ab", b"ab", 0, 2)
    assert t == Token(9, "ab", b"ab", 0, 2, rank=9)
    assert (t.special, t.unknown, t.score) == (False, False, None)
    with pytest.raises(AttributeError):
        t.id = 3  # type: ignore[misc]  # still frozen


def test_the_fast_path_is_on_for_the_current_token_fields() -> None:
    assert encoding._FAST
