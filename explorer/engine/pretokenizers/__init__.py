"""pretokenizers."""
