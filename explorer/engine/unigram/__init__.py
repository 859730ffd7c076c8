"""unigram."""
