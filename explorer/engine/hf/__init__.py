"""HF tokenizers pipelines (tokenizer.json components) and the pipeline tokenizer.

Modules: ``normalized`` (aligned text), ``normalizers``, ``splitting`` (HF split behaviours),
``pre_tokenizers``, ``models`` (BPE, WordPiece, WordLevel), ``unigram_model``, ``decoders``,
``added_tokens``, ``post_processors`` (what ``add_special_tokens=True`` adds),
``pipeline`` (:class:`PipelineTokenizer`), ``parse`` (JSON -> components),
``serialize`` (components -> JSON) and ``export`` (any tokenizer -> tokenizer.json,
``.tiktoken``, SentencePiece ``.model``).
"""
