"""Render a chat template exactly as transformers' ``apply_chat_template`` does, safely.

The Jinja2 environment is the one ``transformers.utils.chat_template_utils`` builds:
``ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`` with the loop-controls
extension and the ``{% generation %}`` tag, ``raise_exception``, ``strftime_now``, HF's
``tojson`` filter (``json.dumps`` with ``ensure_ascii=False``, ``indent``, ``separators``,
``sort_keys``), a ``dict`` global and a ``namespace`` that refuses underscore names; the
template sees ``messages``, ``tools``, ``documents``, ``add_generation_prompt`` and the special
tokens (``bos_token``...) as keyword arguments.

A chat template is untrusted code from a downloaded file, so on top of the sandbox:

- a **time limit**: a trace function on the rendering thread checks a deadline on every line
  the compiled template runs (loops included) and aborts past it;
- an **output-size limit**: output is streamed (``Template.generate``) and cut when it grows
  past the limit; what could allocate a huge value before reaching the output is checked
  first: ``*`` and ``**`` on strings, lists and numbers (``'x' * 10**10``), ``%`` and
  ``str.format`` field widths, the ``center`` and ``indent`` filters;
- recursion (a macro calling itself) and everything the sandbox refuses (``__class__``,
  ``mro``, methods that mutate) end as a :class:`ChatTemplateError` with a clear message.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from datetime import datetime
from functools import lru_cache
from types import FrameType
from typing import Any

import jinja2
import jinja2.ext
import jinja2.filters
import jinja2.nodes
import jinja2.parser
import jinja2.utils
from jinja2.exceptions import SecurityError, TemplateError, TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from explorer.engine.errors import TokenizerError

DEFAULT_TIME_LIMIT = 2.0
"""Seconds a render may take."""
DEFAULT_MAX_OUTPUT = 1_000_000
"""Characters a rendered prompt may have."""
_MAX_OPERATION = 1_000_000
"""Largest string or list a ``*`` may build."""
_MAX_POWER_DIGITS = 10_000
"""Largest number (in decimal digits) a ``**`` may build."""


class ChatTemplateError(TokenizerError):
    """A chat template failed, looped too long, grew too large or left the sandbox."""


class _Abort(BaseException):
    """Raised by the tracer inside the template; BaseException so no template catches it."""


def _raise_exception(message: str) -> None:
    raise TemplateError(message)


def _tojson(x: Any, ensure_ascii: bool = False, indent: int | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    # transformers' tojson: json.dumps, unlike Jinja's own (which escapes HTML characters)
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def _strftime_now(format: str) -> str:
    return datetime.now().strftime(format)


class _TemplateDict:
    """``dict(...)`` in templates (a class would expose its attributes)."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
        return dict.fromkeys(*args, **kwargs)


class _TemplateNamespace(jinja2.utils.Namespace):
    """``namespace(...)`` refusing underscore names (transformers' TemplateNamespace)."""

    def __init__(*args: Any, **kwargs: Any) -> None:
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise SecurityError("Chat templates cannot store underscore-prefixed attributes on "
                                f"a namespace, but got {name!r}. Please rename the attribute.")


class _AssistantTracker(jinja2.ext.Extension):
    """The ``{% generation %}`` tag transformers adds (it only marks assistant text)."""

    tags = {"generation"}  # noqa: RUF012 - Jinja's API

    def __init__(self, environment: jinja2.Environment) -> None:
        super().__init__(environment)
        self._tracking: ContextVar[Any] = ContextVar("assistant_tracker", default=None)

    def parse(self, parser: jinja2.parser.Parser) -> jinja2.nodes.CallBlock:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_generation_support"), [], [],
                                      body).set_lineno(lineno)

    @jinja2.pass_eval_context
    def _generation_support(self, context: jinja2.nodes.EvalContext,
                            caller: Callable[[], str]) -> str:
        return caller()


def _too_big(n: int) -> bool:
    return n > _MAX_OPERATION


_WIDE_FIELD = re.compile(r"\d{7,}|\*")
"""A format spec asking for a field of a million characters or more (or a ``*`` width)."""


def _check_format(spec: str) -> None:
    if _WIDE_FIELD.search(spec):
        raise SecurityError("a format with a huge (or '*') field width is refused")


class _LimitedEnvironment(ImmutableSandboxedEnvironment):
    """The immutable sandbox, plus size checks on ``*``, ``**``, ``%`` and ``str.format``."""

    intercepted_binops = frozenset(["*", "**", "%"])

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """``str.format``/``format_map`` in a template: refuse fields a million characters
        wide, and widths taken from arguments (``{0:>{1}}``)."""
        wrapped = super().wrap_str_format(value)
        fmt = getattr(value, "__self__", None)
        if wrapped is not None and isinstance(fmt, str):
            if re.search(r"\{[^{}]*:[^{}]*\{", fmt):
                raise SecurityError("a format with a nested field width is refused")
            for part in re.findall(r"\{[^{}]*\}", fmt):
                _check_format(part)
        return wrapped

    def unsafe_undefined(self, obj: Any, attribute: str) -> jinja2.Undefined:
        """Refuse at once: Jinja would return an Undefined that prints as ``""``, so a
        template probing ``__globals__`` would fail silently instead of being reported."""
        raise SecurityError(f"access to attribute {attribute!r} of "
                            f"{type(obj).__name__!r} object is unsafe")

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any,
                   right: Any) -> Any:
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and isinstance(count, int) \
                        and _too_big(len(seq) * max(count, 0)):
                    raise SecurityError(f"'*' would build {len(seq) * count:,} items "
                                        f"(limit {_MAX_OPERATION:,})")
        elif operator == "%" and isinstance(left, str):
            for spec in re.findall(r"%[^a-zA-Z%]*[a-zA-Z%]", left):
                _check_format(spec)
        elif operator == "**" and isinstance(left, int) and isinstance(right, int) \
                and abs(left) > 1 and right * left.bit_length() * 0.302 > _MAX_POWER_DIGITS:
            raise SecurityError("'**' would build a number of more than "
                                f"{_MAX_POWER_DIGITS:,} digits")
        return super().call_binop(context, operator, left, right)


def _center(value: str, width: int = 80) -> str:
    if isinstance(width, int) and _too_big(width):
        raise SecurityError(f"center({width}) is wider than {_MAX_OPERATION:,} characters")
    return jinja2.filters.do_center(value, width)


def _indent(s: str, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    if (isinstance(width, int) and _too_big(width)) or \
            (isinstance(width, str) and _too_big(len(width))):
        raise SecurityError("indent() wider than the output limit is refused")
    return jinja2.filters.do_indent(s, width, first, blank)


@lru_cache(maxsize=64)
def compile_template(source: str) -> jinja2.Template:
    """Compile ``source`` in transformers' environment; ChatTemplateError on bad syntax."""
    env = _LimitedEnvironment(trim_blocks=True, lstrip_blocks=True,
                              extensions=[_AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.filters["center"] = _center
    env.filters["indent"] = _indent
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    try:
        return env.from_string(source)
    except TemplateSyntaxError as e:
        raise ChatTemplateError(f"chat template syntax error on line {e.lineno}: {e.message}") \
            from None
    except (TemplateError, RecursionError, MemoryError, ValueError) as e:
        raise ChatTemplateError(f"chat template does not compile: {e}") from None


def plain_data(value: Any) -> Any:
    """Only JSON-like data reaches a template (transformers' ``_plain_template_data``)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain_data(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain_data(v) for v in value)
    return f"<{type(value).__name__}>"


_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


def _alias_reasoning(chat: list[dict]) -> list[dict]:
    out = []
    for message in chat:
        reasoning = next((message[k] for k in _REASONING_FIELDS if message.get(k) is not None),
                         None)
        if reasoning is not None:
            message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        out.append(message)
    return out


@contextmanager
def _deadline(seconds: float):  # noqa: ANN202 - a context manager
    """Abort template code (``<template>`` frames) on this thread after ``seconds``."""
    end = time.monotonic() + seconds
    clock = time.monotonic
    previous = sys.gettrace()

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if clock() > end:
            raise _Abort
        return local

    def global_(frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename == "<template>":
            if clock() > end:
                raise _Abort
            return local
        return None

    sys.settrace(global_)
    try:
        yield
    finally:
        sys.settrace(previous)


def render(source: str, messages: Sequence[Mapping[str, Any]], *,
           add_generation_prompt: bool = False, tools: Sequence[Any] | None = None,
           documents: Sequence[Any] | None = None,
           variables: Mapping[str, Any] | None = None,
           time_limit: float = DEFAULT_TIME_LIMIT,
           max_output: int = DEFAULT_MAX_OUTPUT) -> str:
    """``apply_chat_template(messages, tokenize=False, ...)``'s text, within the limits.

    ``variables``: the tokenizer's special tokens (``bos_token``...) and any extra template
    keyword arguments (they override the specials, as in transformers).
    """
    template = compile_template(source)
    if not messages:
        raise ChatTemplateError("cannot apply a chat template to an empty conversation")
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            raise ChatTemplateError(f"message {i} is not an object")
    # transformers: drop None values, keep plain JSON data only, alias the reasoning fields
    chat = plain_data([{k: v for k, v in m.items() if v is not None} for m in messages])
    chat = _alias_reasoning(chat)
    context = {k: v for k, v in plain_data(dict(variables or {})).items()}
    parts: list[str] = []
    size = 0
    stream = None
    try:
        with _deadline(time_limit):
            stream = template.generate(messages=chat, tools=plain_data(tools),
                                       documents=plain_data(documents),
                                       add_generation_prompt=add_generation_prompt, **context)
            for piece in stream:
                size += len(piece)
                if size > max_output:
                    raise ChatTemplateError(
                        f"chat template output exceeds {max_output:,} characters")
                parts.append(piece)
    except _Abort:
        raise ChatTemplateError(
            f"chat template took longer than {time_limit:g} s (endless loop?)") from None
    except SecurityError as e:
        raise ChatTemplateError(f"chat template refused by the sandbox: {e}") from None
    except TemplateError as e:
        raise ChatTemplateError(f"chat template error: {e.message or e}") from None
    except RecursionError:
        raise ChatTemplateError("chat template recursed too deeply") from None
    except MemoryError:
        raise ChatTemplateError("chat template ran out of memory") from None
    except ChatTemplateError:
        raise
    except Exception as e:  # a template can raise anything Python can (1/0, int('x'))
        raise ChatTemplateError(f"chat template failed: {type(e).__name__}: {e}") from None
    finally:
        if stream is not None:
            _close_quietly(stream)
    return "".join(parts)


def _close_quietly(stream: Any) -> None:
    with suppress(BaseException):  # a template's cleanup must not mask the real error
        stream.close()

