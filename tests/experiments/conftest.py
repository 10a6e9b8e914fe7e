"""Helpers for experiment tests: tiny corridor grids, run through the real CLI or API."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def agentos(*args, cwd, env=None, timeout=240, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentos", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, **kwargs)


@pytest.fixture
def write_experiment(tmp_path):
    def write(text: str, name: str = "sweep") -> Path:
        path = tmp_path / f"{name}.ini"
        path.write_text(text)
        return path

    return write
