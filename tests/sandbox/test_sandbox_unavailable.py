"""Where no sandbox can run, ``agentos index verify`` says so in one line and stores nothing (exit 2),
unless ``--unsandboxed``; with bwrap present (the valid twin) the probe finds nothing wrong."""

from __future__ import annotations

import argparse

import pytest
from agentos.errors import UsageError
from agentos.sandbox import _bwrap


def test_the_probe_passes_where_bwrap_runs():
    _bwrap._PROBED.clear()
    assert _bwrap.problem() is None


def test_without_bwrap_verify_refuses_in_one_line_before_anything_is_made(monkeypatch, tmp_path):
    from agentos.cli._verify_command import verify_command

    monkeypatch.setattr(_bwrap, "BWRAP", str(tmp_path / "no-bwrap"))
    monkeypatch.setattr(_bwrap.shutil, "which", lambda name: None)
    monkeypatch.setattr(_bwrap, "_PROBED", {})
    assert "bubblewrap (bwrap) is not installed" in _bwrap.problem()
    args = argparse.Namespace(rest=["walker"], tolerance=None, timeout=60.0, unsandboxed=False,
                              episodes=None, seed=None)
    with pytest.raises(UsageError, match=r"no sandbox can run here .*--unsandboxed re-runs without one"):
        verify_command(args, str(tmp_path / "index"))
    assert not (tmp_path / "index").exists()  # nothing made, nothing stored
