"""Learning and records: ``train``, ``run`` (single or batched) and ``runs``, and the run records."""
