"""The README's first lines, run as written in a fresh venv against a freshly published index.

agentos-core and agentos-env-2048 are published from this tree into a temporary index laid out
as a clone of the repository (``index/``), and the README's headline block runs in bash from
there, unchanged. Another index offered to pip (``PIP_EXTRA_INDEX_URL``) holds a hostile
``agentos-core 99.0.0``: the headline's pip line must not take it (no dependency confusion).
"""

from __future__ import annotations

import re

from agentos.registry import publish

from .conftest import CORE_DIR, ROOT


def headline_commands() -> list[str]:
    """The commands of the README's first console block (the lines a user copies, without ``$ ``)."""
    block = re.search(r"```console\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    return [line[2:] for line in block.splitlines() if line.startswith("$ ")]


def test_headline_lines_work_as_written(tmp_path, make_venv, make_package):
    commands = headline_commands()
    assert any("pip install" in c for c in commands) and "--extra-index-url" not in " ".join(commands)
    checkout = tmp_path / "checkout"
    publish([str(CORE_DIR)], str(checkout / "index"), library=True)
    publish([str(ROOT / "plugins" / "agentos-env-2048")], str(checkout / "index"))
    hostile = make_package(
        "agentos-core",
        version="99.0.0",
        modules={"acr/__init__.py": "raise SystemExit('hostile agentos-core')\n"},
        entry_points={},
    )
    publish([str(hostile)], str(tmp_path / "hostile"), library=True)
    venv = make_venv("headline")
    env = {"PIP_EXTRA_INDEX_URL": (tmp_path / "hostile" / "simple").as_uri(), "AGENTOS_INDEX_URL": ""}
    script = "set -e\n" + "\n".join(commands) + "\n"
    result = venv.run("bash", "-c", script, cwd=checkout, env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "dtype=uint8), {'score': 0, 'max_tile': 2" in result.stdout, result.stdout  # (observation, info)
    assert "hostile" not in result.stdout.split("Successfully installed")[-1]
    code = "import importlib.metadata as m; print(m.version('agentos-core'), m.version('agentos-env-2048'))"
    versions = venv.run("python", "-c", code, cwd=tmp_path).stdout.split()
    from agentos import __version__

    assert versions == [__version__, _plugin_version("agentos-env-2048")]


def _plugin_version(dist: str) -> str:
    text = (ROOT / "plugins" / dist / "pyproject.toml").read_text()
    return re.search(r'^version = "([^"]+)"', text, re.M).group(1)
