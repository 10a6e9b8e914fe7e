"""Fixtures for experiment tests: experiment files written by the test."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def write_experiment(tmp_path):
    def write(text: str, name: str = "sweep") -> Path:
        path = tmp_path / f"{name}.ini"
        path.write_text(text)
        return path

    return write
