"""{{ cookiecutter.description }}."""

from __future__ import annotations

from .trainer import {{ cookiecutter.class_name }}, Trainable

__all__ = ["{{ cookiecutter.class_name }}", "Trainable"]
