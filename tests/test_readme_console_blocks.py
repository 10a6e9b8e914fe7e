"""Every command block a user copies (```console, ```bash) is run as written by some test.

``RUN_BY`` names, for each such block, the test (or CI file) that runs it; a new command block
without an entry fails here, so it cannot go untested by accident. The cheap ones run here. Blocks
without a language are illustrations (placeholders: hosts, tokens, your own files), as the README
says at its Quick start.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from conftest import ROOT
from readme_blocks import all_blocks, script

HERE = "tests/test_readme_console_blocks.py"
RUN_BY = {
    "# AgentOS": "tests/test_readme_headline.py",
    "## Set up (fresh machine, Python 3.11+)": "noxfile.py",  # nox -s demo: the Quick start below, as written
    "## Set up (fresh machine, Python 3.11+) #2": ".ci/run",  # CI runs the test command
    "## Quick start (what `nox -s demo` runs, line by line)": "tests/registry/test_readme_blocks.py",
    "## Quick start (what `nox -s demo` runs, line by line) #2": "noxfile.py",
    "## Registry": "tests/authoring/test_readme_registry_block.py",
    "### From nothing to a published component: the workflow": "tests/authoring/test_publish_workflow.py",
    "### What `agentos new` makes": HERE,
    "## Agents as services": HERE,
}


def command_blocks() -> list[tuple[str, str, str]]:
    return [(name, language, body) for language in ("console", "bash") for name, body in all_blocks(language)]


def test_every_command_block_is_run_by_a_test():
    names = [name for name, _, _ in command_blocks()]
    missing = [name for name in names if name not in RUN_BY]
    assert not missing, f"command blocks that no test runs (add them to RUN_BY, or make them illustrations): {missing}"
    assert not set(RUN_BY) - set(names), f"stale entries: {set(RUN_BY) - set(names)}"
    for runner in set(RUN_BY.values()):
        assert (ROOT / runner).is_file(), runner


def _run(commands: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTOS_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["AGENTOS_CACHE_DIR"] = str(cwd / ".cache")
    return subprocess.run(["bash", "-e", "-x", "-c", commands], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_what_agentos_new_makes_runs_as_written(tmp_path):
    (name, language, body), = [b for b in command_blocks() if b[0] == "### What `agentos new` makes"]
    result = _run(script(body, language), tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    made = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert made == ["agentos-agent-my-agent", "agentos-env-my-env", "agentos-policy-my-policy",
                    "agentos-trainer-my-trainer", "my_agent"], made


def test_the_academy_redis_line_starts_a_server_the_exchange_reaches(tmp_path):
    """The README's redis-server line, run as written, starts a server that the python blocks' exchange URL
    logs in to, and that refuses a client that does not log in."""
    (name, language, body), = [b for b in command_blocks() if b[0] == "## Agents as services"]
    commands = script(body, language)
    assert commands.startswith("redis-server "), commands
    port = int(re.search(r"--port (\d+)", commands).group(1))
    urls = [u for _, b in all_blocks("python") for u in re.findall(r"redis://[^\"'\s]+", b)]
    local = [urllib.parse.urlsplit(u) for u in urls if "127.0.0.1" in u]
    assert local and all(u.port == port for u in local), urls
    auth = ["--user", local[0].username or "default", "--pass", local[0].password or "", "--no-auth-warning"]
    assert local[0].password, "the README's exchange URL must log in"
    result = _run(commands, tmp_path)
    try:
        assert result.returncode == 0, result.stderr
        ping = subprocess.run(["redis-cli", "-p", str(port), *auth, "ping"], capture_output=True, text=True, timeout=10)
        assert ping.stdout.strip() == "PONG", ping
        anonymous = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True, text=True, timeout=10)
        assert "NOAUTH" in anonymous.stdout + anonymous.stderr, anonymous
    finally:
        subprocess.run(["redis-cli", "-p", str(port), *auth, "shutdown", "nosave"], capture_output=True, timeout=10)


@pytest.mark.parametrize("text", ["```console\n$ agentos frobnicate\n```\n", "```bash\nagentos frobnicate\n```\n"])
def test_a_new_command_block_is_noticed(text):
    readme = (ROOT / "README.md").read_text() + "\n## Newly added\n\n"
    found = [name for lang in ("console", "bash") for name, _ in all_blocks(lang, readme + text)]
    assert "## Newly added" in found and "## Newly added" not in RUN_BY
    plain = [name for lang in ("console", "bash") for name, _ in all_blocks(lang, readme + "```\nx\n```\n")]
    assert "## Newly added" not in plain  # an illustration (no language) is not a command block
