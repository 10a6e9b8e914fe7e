"""Helpers for experiment tests: the real ``agentos`` command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys


def agentos(*args, cwd, env=None, timeout=240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentos", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})
