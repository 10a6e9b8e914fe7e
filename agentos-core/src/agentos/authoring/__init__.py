"""Authoring: ``agentos new`` (component packages and agent folders) and ``agentos init``."""
