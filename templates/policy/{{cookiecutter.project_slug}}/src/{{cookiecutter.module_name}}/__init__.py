"""{{ cookiecutter.description }}."""

from __future__ import annotations

from ._device import resolve_device
from .policy import {{ cookiecutter.class_name }}

__all__ = ["{{ cookiecutter.class_name }}", "resolve_device"]
