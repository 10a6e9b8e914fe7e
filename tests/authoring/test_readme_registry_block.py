"""The Registry page's command block (docs/registry.md), run as written (bash -e) from where the Quick
start leaves a user.

It starts inside ``my_agent`` and must not publish from there: it makes a second agent beside it,
installs and uninstalls from the index that ``AGENTOS_INDEX_URL`` names, then publishes and yanks a
component made with ``agentos new`` into a folder of its own, with agentos-core installed from its
wheel (no checkout, no embedded index).
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from conftest import ROOT, wheel_for
from readme_blocks import blocks, script

PAGE = ROOT / "docs" / "registry.md"
HEADING = "## The commands"
COMPONENTS = ("agentos-core", "agentos-env-corridor", "agentos-policy-random", "agentos-env-2048",
              "agentos-policy-q-table")


@pytest.fixture(scope="module")
def registry_block_index(tmp_path_factory, wheelhouse):
    from agentos.registry import publish

    root = tmp_path_factory.mktemp("registry-block") / "index"
    publish([str(wheel_for(wheelhouse, d)) for d in COMPONENTS], str(root), library=True)
    return root


def test_registry_block_runs_as_written(fresh_venv, registry_block_index, tmp_path):
    ((language, body),) = [b for b in blocks(HEADING, path=PAGE) if b[0] == "console"]
    commands = script(body, language)
    assert "agentos publish" in commands and "agentos yank" in commands
    (tmp_path / "my_agent").mkdir()  # where the Quick start left the user
    result = subprocess.run(
        ["bash", "-e", "-x", "-c", commands], cwd=tmp_path / "my_agent", capture_output=True, text=True, timeout=600,
        env={**fresh_venv("registry-block").env, "AGENTOS_INDEX_URL": registry_block_index.as_uri(),
             "PIP_NO_BUILD_ISOLATION": "0", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    log = result.stdout[-4000:] + result.stderr[-4000:]
    assert result.returncode == 0, log
    assert "Traceback" not in result.stderr, log
    assert list((tmp_path / "my_agent").iterdir()) == [], log  # nothing was written into my_agent
    ini = (tmp_path / "second_agent" / "agent.ini").read_text()
    assert re.search(r"\[policy\]\s*default = q_table", ini) and "environment.2048" not in ini, ini
    index = tmp_path / "my-index"
    assert list(index.rglob("agentos_env_my_env-0.1.0-py3-none-any.whl")), log
    project = json.loads((index / "simple" / "agentos-env-my-env" / "index.json").read_text())
    assert [f.get("yanked") for f in project["files"]] == ["broken reset"], project
