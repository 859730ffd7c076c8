"""What the editor should paint, computed independently of the painter (for the UI tests).

Per block: the grapheme clusters (``regex``'s ``\\X``, UAX #29, independent of Qt), the tokens
touching each cluster (UTF-16 offsets from encoding text prefixes, not ``Utf16Map``), one
colour per cluster (the token's, or the split colour when several tokens touch it), then runs
of clusters with the same token (or consecutive split clusters) merged into one range.

A token's colour is its palette colour, or that colour's second shade when the token before it
has the same colour and is not itself shaded (neighbours never look like one token).
"""

from __future__ import annotations

from itertools import pairwise

import regex


def u16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def grapheme_boundaries(text: str) -> list[int]:
    """UTF-16 grapheme-cluster boundaries of ``text``, 0 and the end included."""
    out = [0]
    for m in regex.finditer(r"\X", text):
        out.append(out[-1] + u16(m.group()))
    return out


def shades(formats, ids: list[int]) -> list[bool]:
    """Per token: drawn in its colour's second shade (the token before it has the same
    colour and is not shaded)."""
    out: list[bool] = []
    for i, token_id in enumerate(ids):
        same = i > 0 and formats.color(token_id) == formats.color(ids[i - 1])
        out.append(same and not out[-1])
    return out


def expected_ranges(window) -> dict[int, list[tuple[int, int, str]]]:
    """Per block number: ``(start16, length16, background name)`` the painter should set."""
    text = window.text()
    formats = window.painter.formats
    enc = window.tokenizer.encode(text)
    prefix = [0]  # UTF-16 offset of every code point
    for ch in text:
        prefix.append(prefix[-1] + (2 if ord(ch) > 0xFFFF else 1))
    cover: list[list[tuple[int, int]]] = [[] for _ in range(prefix[-1])]
    shaded = shades(formats, [t.id for t in enc.tokens])
    for i, t in enumerate(enc.tokens):  # UTF-16 unit -> the tokens covering it
        for unit in range(prefix[t.start], prefix[t.end]):
            cover[unit].append((i, t.id))
    out: dict[int, list[tuple[int, int, str]]] = {}
    block = window.editor.document().begin()
    split_name = formats.split_color.name()
    while block.isValid():
        pos, bt = block.position(), block.text()
        bounds = grapheme_boundaries(bt)
        runs: list[list] = []  # [start, end, key, colour]
        for c0, c1 in pairwise(bounds):
            touching = sorted({x for unit in range(pos + c0, pos + c1) for x in cover[unit]})
            if not touching:
                continue
            if len(touching) == 1:
                i = touching[0][0]
                key, colour = i, formats.color(touching[0][1], shaded[i]).name()
            else:
                key, colour = "split", split_name
            if runs and runs[-1][2] == key and runs[-1][1] == c0:
                runs[-1][1] = c1
            else:
                runs.append([c0, c1, key, colour])
        if runs:
            out[block.blockNumber()] = [(s, e - s, c) for s, e, _, c in runs]
        block = block.next()
    return out


def painted_ranges(window) -> dict[int, list[tuple[int, int, str]]]:
    """Per block number: the ``(start16, length16, background name)`` ranges in its layout."""
    out = {}
    block = window.editor.document().begin()
    while block.isValid():
        rs = [(r.start, r.length, r.format.background().color().name())
              for r in block.layout().formats()]
        if rs:
            out[block.blockNumber()] = rs
        block = block.next()
    return out
