"""Chat templates: render a conversation the way a model expects it, then count its tokens.

- :mod:`.sandbox`: transformers' Jinja2 environment in the immutable sandbox, with a time
  limit and an output-size limit (:func:`render`, :class:`ChatTemplateError`).
- :mod:`.templates`: where templates come from (a model folder's ``chat_template``, named
  ones included; a GGUF's ``tokenizer.chat_template``; built-ins such as ChatML) and the
  special tokens and context length that go with them (:func:`chat_setup`).
- :mod:`.prompt`: render + tokenize, with each message's span and token count
  (:func:`build_prompt`).

jinja2 is imported by these modules only; nothing else in the engine needs it.
"""
