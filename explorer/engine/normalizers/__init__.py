"""normalizers."""
