"""Plugin commands: listed from metadata, imported only when invoked, a broken one breaks only itself."""

from __future__ import annotations

import os
import subprocess
import sys


def _agentos(*args, env=None):
    code = (
        "import atexit, sys; from agentos.cli import main; "
        "atexit.register(lambda: print('IMPORTED' if {'agentos_academy', 'academy'} & set(sys.modules) else 'CLEAN')); "
        "sys.exit(main(sys.argv[1:]))"
    )
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)


def _with_dist(tmp_path, name: str, entry_points: str) -> dict:
    """A real (metadata-only) distribution on sys.path, declaring command entry points."""
    dist = tmp_path / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\nSummary: test commands\n")
    (dist / "entry_points.txt").write_text(entry_points)
    env = dict(os.environ, PYTHONPATH=str(tmp_path), AGENTOS_CACHE_DIR=str(tmp_path / "cache"))
    return env


def test_help_lists_plugin_command_without_importing_it():
    result = _agentos("--help")
    assert "serve" in result.stdout and "agentos-academy" in result.stdout
    assert result.stdout.strip().endswith("CLEAN")


def test_invoked_plugin_command_is_loaded():
    result = _agentos("serve", "--help")
    assert "--exchange" in result.stdout and "IMPORTED" in result.stdout


def test_broken_command_plugin_gives_one_line_and_breaks_nothing_else(tmp_path):
    env = _with_dist(tmp_path, "broken-commands", "[agentos.commands]\nbreakme = no_such_module_for_agentos\n")
    broken = _agentos("breakme", env=env)
    assert broken.returncode == 1
    assert broken.stderr.strip().splitlines() == [
        "agentos: error: command 'breakme' (broken-commands 1.0) failed to load: "
        "ModuleNotFoundError: No module named 'no_such_module_for_agentos'"
    ]
    listed = _agentos("list", "--kind", "environment", env=env)
    assert listed.returncode == 0 and "corridor" in listed.stdout
    helped = _agentos("--help", env=env)
    assert helped.returncode == 0 and "breakme" in helped.stdout
