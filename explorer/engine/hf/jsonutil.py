"""Small helpers to read tokenizer.json values with clear errors.

``req`` fetches a required key of a given type or raises :class:`VocabFormatError` naming
the component and key; ``pattern_from_json`` reads HF's ``{"String": ..}``/``{"Regex": ..}``
pattern objects (regexes translated from Oniguruma, see :mod:`explorer.engine.hf.onig`).
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

import regex

from explorer.engine.errors import VocabFormatError
from explorer.engine.hf.onig import compile_onig

T = TypeVar("T")


def parse_json_text(data: str | bytes, where: str) -> Any:
    """Parse JSON text, turning every way it can fail into :class:`VocabFormatError`.

    Besides malformed JSON and bad UTF-8 this covers what ``json`` raises outside
    ``JSONDecodeError``: nesting deeper than the interpreter's recursion limit
    (``RecursionError``) and integer literals longer than Python's 4300-digit limit
    (``ValueError``).
    """
    try:
        return json.loads(data)
    except json.JSONDecodeError as e:
        raise VocabFormatError(f"{where}: malformed JSON at line {e.lineno} column {e.colno}: "
                               f"{e.msg}") from None
    except UnicodeDecodeError as e:
        raise VocabFormatError(f"{where}: not UTF-8 (byte {e.start})") from None
    except RecursionError:
        raise VocabFormatError(f"{where}: JSON nested too deeply") from None
    except ValueError as e:  # int literal over sys.get_int_max_str_digits() digits
        raise VocabFormatError(f"{where}: bad JSON value ({str(e).split(';')[0]})") from None


def req(obj: dict[str, Any], key: str, kind: type[T], where: str) -> T:
    """``obj[key]``, which must exist and be of type ``kind``."""
    if key not in obj:
        raise VocabFormatError(f"tokenizer.json: {where} is missing the key {key!r}")
    value = obj[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return value  # type: ignore[return-value]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise VocabFormatError(
            f"tokenizer.json: {where}.{key} should be {kind.__name__}, "
            f"got {type(value).__name__}"
        )
    return value


def pattern_from_json(obj: dict[str, Any], where: str) -> tuple[regex.Pattern[str], str]:
    """Compile a ``{"String": s}`` (literal) or ``{"Regex": r}`` pattern; return it and source."""
    if "String" in obj and isinstance(obj["String"], str):
        return regex.compile(regex.escape(obj["String"])), obj["String"]
    if "Regex" in obj and isinstance(obj["Regex"], str):
        return compile_onig(obj["Regex"], where), obj["Regex"]
    raise VocabFormatError(f"tokenizer.json: {where}.pattern needs a 'String' or 'Regex'")


_MISSING = object()


def opt(obj: dict[str, Any], key: str, kind: type[T], default: Any, where: str) -> Any:
    """``obj[key]`` if present and not null (must be of type ``kind``), else ``default``."""
    value = obj.get(key, _MISSING)
    if value is _MISSING or value is None:
        return default
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise VocabFormatError(
            f"tokenizer.json: {where}.{key} should be {kind.__name__}, "
            f"got {type(value).__name__}"
        )
    return value
