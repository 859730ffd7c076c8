"""HF tokenizers pipelines (tokenizer.json components) and the pipeline tokenizer.

Modules: ``normalized`` (aligned text), ``normalizers``, ``splitting`` (HF split behaviours),
``pre_tokenizers``, ``models`` (BPE, WordPiece, WordLevel), ``unigram_model``, ``decoders``,
``added_tokens``, ``pipeline`` (:class:`PipelineTokenizer`), ``parse`` (JSON -> components),
``serialize`` (components -> JSON) and ``export`` (any tokenizer -> tokenizer.json,
``.tiktoken``, SentencePiece ``.model``).
"""
