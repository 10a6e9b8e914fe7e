"""N-tuple policy."""
