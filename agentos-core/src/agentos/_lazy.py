"""Package attributes imported on first use, so that importing a package stays fast."""

from __future__ import annotations

import importlib
import sys


def lazy_attributes(module: str, package: str | None, where: dict[str, str]):
    """A module ``__getattr__`` for ``module``: ``where[name]`` is the module defining ``name``
    (relative to ``package``); the value is imported on first access and kept."""

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name], package), name)
        setattr(sys.modules[module], name, value)
        return value

    return __getattr__
