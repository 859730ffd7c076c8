"""A rendered chat prompt, tokenized, with the part of the prompt each message produced.

Message spans come from rendering growing prefixes of the conversation: when the render of
``messages[:k]`` is a prefix of the whole prompt, message ``k`` produced the text between
the renders of ``k - 1`` and ``k`` messages (its role header, content and end-of-turn
marker); what follows the last message is the generation prompt. Templates that render a
partial conversation differently (or refuse it) fall back to finding each message's content
in order. A token counts for the message whose span holds its first character.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from explorer.engine.chat.sandbox import (
    DEFAULT_MAX_OUTPUT,
    DEFAULT_TIME_LIMIT,
    ChatTemplateError,
    render,
)
from explorer.engine.encoding import Encoding
from explorer.engine.tokenizer import Tokenizer


def parse_tools_documents(text: str) -> tuple[list[Any] | None, list[Any] | None]:
    """``{"tools": [...], "documents": [...]}`` (either key optional; blank text: neither),
    as the chat panel's field holds it. Raises :class:`ChatTemplateError` with one line."""
    from explorer.engine.errors import VocabFormatError
    from explorer.engine.hf.jsonutil import parse_json_text

    if not text.strip():
        return None, None
    try:
        obj = parse_json_text(text.encode("utf-8"), "tools/documents")
    except VocabFormatError as e:
        raise ChatTemplateError(str(e)) from None
    if not isinstance(obj, dict) or not set(obj) <= {"tools", "documents"}:
        raise ChatTemplateError('tools/documents: expected {"tools": [...], "documents": [...]}')
    for name in ("tools", "documents"):
        if obj.get(name) is not None and not isinstance(obj[name], list):
            raise ChatTemplateError(f"tools/documents: '{name}' must be a list")
    return obj.get("tools"), obj.get("documents")


@dataclass(frozen=True)
class ChatPrompt:
    """The prompt text, its tokens and each message's share of them."""

    text: str
    encoding: Encoding
    spans: list[tuple[int, int] | None]
    """Per message: the character span of the prompt it produced (None: not located)."""
    counts: list[int | None]
    """Per message: how many tokens start inside its span."""
    tail_span: tuple[int, int]
    """What follows the last message (the generation prompt), possibly empty."""
    tail_count: int
    context_length: int | None = None

    @property
    def total(self) -> int:
        """Tokens in the whole prompt."""
        return len(self.encoding.tokens)

    def message_of_token(self, index: int) -> int | None:
        """The message token ``index`` belongs to (None: template text outside messages)."""
        start = self.encoding.tokens[index].start
        for i, span in enumerate(self.spans):
            if span is not None and span[0] <= start < span[1]:
                return i
        return None


def message_spans(source: str, messages: Sequence[Mapping[str, Any]], text: str, *,
                  variables: Mapping[str, Any] | None = None,
                  tools: Sequence[Any] | None = None,
                  documents: Sequence[Any] | None = None,
                  time_limit: float = DEFAULT_TIME_LIMIT,
                  max_output: int = DEFAULT_MAX_OUTPUT) -> list[tuple[int, int] | None]:
    """Each message's span of ``text`` (the full render), see the module docstring. The
    prefixes are rendered with the same ``tools`` and ``documents``, so a tool or document
    block a template puts before the first message counts for that message."""
    ends: list[int] = []
    try:
        for k in range(1, len(messages) + 1):
            prefix = render(source, messages[:k], variables=variables, tools=tools,
                            documents=documents, time_limit=time_limit, max_output=max_output)
            if not text.startswith(prefix) or (ends and len(prefix) < ends[-1]):
                raise ChatTemplateError("not a prefix")
            ends.append(len(prefix))
    except ChatTemplateError:
        return _spans_by_content(messages, text)
    starts = [0, *ends[:-1]]
    return list(zip(starts, ends, strict=True))


def _spans_by_content(messages: Sequence[Mapping[str, Any]],
                      text: str) -> list[tuple[int, int] | None]:
    spans: list[tuple[int, int] | None] = []
    cursor = 0
    for m in messages:
        content = m.get("content")
        pos = text.find(content, cursor) if isinstance(content, str) and content else -1
        if pos < 0:
            spans.append(None)
            continue
        spans.append((cursor, pos + len(content)))  # type: ignore[arg-type]
        cursor = pos + len(content)  # type: ignore[arg-type]
    return spans


def build_prompt(tokenizer: Tokenizer, source: str, messages: Sequence[Mapping[str, Any]], *,
                 add_generation_prompt: bool = False,
                 variables: Mapping[str, Any] | None = None,
                 tools: Sequence[Any] | None = None,
                 documents: Sequence[Any] | None = None,
                 context_length: int | None = None,
                 time_limit: float = DEFAULT_TIME_LIMIT,
                 max_output: int = DEFAULT_MAX_OUTPUT) -> ChatPrompt:
    """Render ``messages`` with template ``source``, tokenize (special tokens recognised, as
    ``apply_chat_template(tokenize=True)`` does) and attribute tokens to messages.

    ``tools`` / ``documents``: passed to the template as ``apply_chat_template(tools=...,
    documents=...)`` passes them (tool-use and RAG templates)."""
    text = render(source, messages, add_generation_prompt=add_generation_prompt,
                  variables=variables, tools=tools, documents=documents,
                  time_limit=time_limit, max_output=max_output)
    encoding = tokenizer.encode(text)
    spans = message_spans(source, messages, text, variables=variables, tools=tools,
                          documents=documents, time_limit=time_limit, max_output=max_output)
    last_end = max((s[1] for s in spans if s is not None), default=0)
    tail = (last_end, len(text))
    counts: list[int | None] = [0 if s is not None else None for s in spans]
    tail_count = 0
    for t in encoding.tokens:
        for i, span in enumerate(spans):
            if span is not None and span[0] <= t.start < span[1]:
                counts[i] = (counts[i] or 0) + 1
                break
        else:
            if t.start >= tail[0]:
                tail_count += 1
    return ChatPrompt(text, encoding, spans, counts, tail, tail_count, context_length)
