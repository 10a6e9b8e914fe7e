"""The publish workflow of the plugin author's guide (docs/plugin-authors.md), run as written:
new -> test -> publish -> init -> install -> run.

Nothing is installed beforehand but agentos-core: ``agentos init`` installs the starter components
(corridor, random) from the default index, here an index of this checkout's wheels named by
``AGENTOS_INDEX_URL`` (as the embedded index/ is named when agentos-core is not an editable install).
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from authoring._helpers import DOCS
from conftest import wheel_for

SECTION = "### From nothing to a published component: the workflow"


def workflow_commands() -> str:
    """The first bash block after the workflow heading of the plugin author's guide."""
    text = DOCS.read_text()
    block = re.search(r"```bash\n(.*?)```", text[text.index(SECTION) :], re.S)
    assert block, "no bash block in the workflow section"
    return block.group(1)


@pytest.fixture(scope="module")
def starter_index(tmp_path_factory, wheelhouse):
    """An index holding agentos-core and the starter components, published from this checkout."""
    from agentos.registry import publish

    root = tmp_path_factory.mktemp("starter") / "index"
    wheels = [wheel_for(wheelhouse, d) for d in ("agentos-core", "agentos-env-corridor", "agentos-policy-random")]
    publish([str(w) for w in wheels], str(root), library=True)
    return root


@pytest.fixture
def author_venv(fresh_venv):
    venv = fresh_venv("author")
    # pytest comes from the shared dev site, so `pip install -e ".[test]"` finds it installed and writes
    # no bin/pytest script; this one makes the block's `pytest` the venv's, as in a real venv.
    shim = venv.bin / "pytest"
    shim.write_text(f'#!/bin/sh\nexec "{venv.python}" -m pytest "$@"\n')
    shim.chmod(0o755)
    return venv


def test_documented_workflow_runs_end_to_end(author_venv, fresh_venv, wheelhouse, starter_index, tmp_path):
    script = workflow_commands()
    assert "agentos new policy my_policy" in script and "agentos publish" in script
    # PIP_NO_BUILD_ISOLATION=0 builds with the visible hatchling/editables (no download).
    result = subprocess.run(
        ["bash", "-e", "-x", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        env={
            **author_venv.env,
            "PIP_NO_BUILD_ISOLATION": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "AGENTOS_INDEX_URL": str(starter_index),
        },
    )
    log = result.stdout[-4000:] + result.stderr[-4000:]
    assert result.returncode == 0, log
    assert re.search(r"\d+ passed", result.stdout), log  # the generated tests ran and passed
    assert "my_policy" in result.stdout and "3 episodes" in result.stdout, log
    assert "installed environment corridor" in result.stdout and "not installed" not in result.stderr, log
    index = tmp_path / "my-index"
    assert list(index.rglob("agentos_policy_my_policy-0.1.0-py3-none-any.whl")), log
    ini = (tmp_path / "other_agent" / "agent.ini").read_text()
    assert "[policy.my_policy]" in ini and re.search(r"\[policy\]\s*default = my_policy", ini), ini

    # A fresh venv that never saw the source: install the published wheel into a new agent and run it.
    consumer = fresh_venv("consumer")
    consumer.pip_install("--no-deps", wheel_for(wheelhouse, "agentos-env-corridor"))
    assert consumer.agentos("init", "fresh", "--no-install", cwd=tmp_path).returncode == 0
    install = consumer.agentos(
        "install", "policy", "my_policy", "--index-url", index, "--default", "--agent", "fresh", cwd=tmp_path
    )
    assert install.returncode == 0, install.stdout + install.stderr
    listed = json.loads(consumer.agentos("list", "--kind", "policy", "--json", cwd=tmp_path / "fresh").stdout)
    row = next(r for r in listed if r["name"] == "my_policy")
    assert row["package"] == "agentos-policy-my-policy" and row["version"] == "0.1.0" and row["status"] == "ok"
    run = consumer.agentos("run", "--episodes", "2", "--seed", "1", cwd=tmp_path / "fresh")
    assert run.returncode == 0 and "2 episodes" in run.stdout, run.stdout + run.stderr
