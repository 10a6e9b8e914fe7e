"""Every ```python block of the README and of ``docs/*.md`` is a whole script: run as written, as a file,
nothing added.

The blocks are found automatically (:func:`readme_blocks.every_block`; a name is the file and the
heading), so a new block that is a fragment (a top-level ``await``, a name it never defines, process
workers without a ``__main__`` guard) fails here. What a block needs is prepared the way its page says:
the agent folders it names (corridor, ``q_table`` and ``sarsa``, the Quick start's components), and a
real redis-server for a ``redis://`` exchange, on the URL's port, with the URL's user and password when
it has them. Each block must exit 0, print no traceback, and print what its page says it prints
(``EXPECTED``).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest
from readme_blocks import every_block, name_of

AGENTS = ("my_agent", "other_agent", "agent_a", "agent_b")
AGENT_INI = """[agentos]
name = {name}

[environment]
default = corridor

[policy]
default = q_table

[trainer]
default = sarsa
"""
# where each block runs (the page's sentence before it says so); else the folder holding the agents
CWD = {"docs/concepts.md ## `acr`": "my_agent"}
# what the page says each block prints (regular expressions, in order)
EXPECTED = {
    "docs/concepts.md ## `acr`": [r"RandomPolicy", r"\['2048'|'2048'", r"did you mean 'corridor'\?"],
    "docs/plugin-authors.md ## Writing a component (the convention)": [
        r"best_tile +max_tile\n", r"reached_2048 +max_tile >= 2048\n", r"reached_4096 +max_tile >= 4096\n",
        r"reached_8192 +max_tile >= 8192\n"],
    "docs/plugin-authors.md ### The conformance kit: `agentos.testing`": [r"\d+ passed"],
    "docs/learning.md ## Mastering 2048": [r"[\d,]+ steps/s on 4,?096 boards"],
    "docs/services.md # Agents as services": [r"action \d", r"'episodes': 20", r"run_dir|runs"],
    "docs/services.md # Agents as services #2": [r"\{.*\} \{.*\}"],
    "docs/experiments.md # Experiments": [r"sarsa_table corridor 4 seeds, test return -?\d",
                                          r"8 trials, 0 failed; plot: \S+\.png"],
}
# what they show on stderr: the progress of a long call, as the CLI shows it
EXPECTED_STDERR = {"docs/experiments.md # Experiments": [r"trials 8/8"]}
BLOCKS = every_block("python")


def _agent_folders(where: Path) -> None:
    for name in AGENTS:
        (where / name).mkdir()
        (where / name / "agent.ini").write_text(AGENT_INI.format(name=name))


class Redis:
    """A real redis-server on 127.0.0.1 at the port of ``url``, with the URL's user and password."""

    def __init__(self, url: str, folder: Path):
        parts = urllib.parse.urlsplit(url)
        self.port = parts.port or 6379
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                pytest.fail(f"port {self.port} (the README's exchange) is taken: stop what listens there")
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", str(folder)]
        if parts.password and parts.username:
            args += ["--user", "default", "off", "--user", parts.username, "on", f">{parts.password}",
                     "~*", "&*", "+@all"]
        elif parts.password:
            args += ["--requirepass", parts.password]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        self.close()
        pytest.fail("redis-server did not start")

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def run_block(body: str, folder: Path, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    script = folder / "block.py"
    script.write_text(body)  # exactly as written
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTOS_")}
    env["AGENTOS_CACHE_DIR"] = str(folder / "cache")
    env["MPLBACKEND"] = "Agg"
    return subprocess.run([sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_the_docs_have_python_blocks_and_each_has_its_promise():
    names = [name for name, _ in BLOCKS]
    assert len(names) >= 7, names
    assert sorted(EXPECTED) == sorted(names), "a python block without an entry in EXPECTED (or a stale entry)"


@pytest.mark.parametrize("name", [name for name, _ in BLOCKS])
def test_python_block_runs_as_written(name, tmp_path):
    body = dict(BLOCKS)[name]
    work = tmp_path / "work"
    work.mkdir()
    _agent_folders(work)
    redis = None
    urls = re.findall(r"redis://[^\"'\s]+", body)
    if urls:
        redis = Redis(urls[0], tmp_path)
    try:
        result = run_block(body, tmp_path, work / CWD.get(name, ""))
    finally:
        if redis is not None:
            redis.close()
    log = f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    assert result.returncode == 0, log
    assert "Traceback" not in result.stderr + result.stdout, log
    expected = ((result.stdout, EXPECTED.get(name, [r"\S"])), (result.stderr, EXPECTED_STDERR.get(name, [])))
    for output, patterns in expected:
        position = 0
        for pattern in patterns:
            match = re.compile(pattern).search(output, position)
            assert match, f"{name}: expected {pattern!r} in the output\n{log}"
            position = match.end()


def test_a_python_block_on_a_new_docs_page_is_found(tmp_path):
    """A page added to docs/ has its python blocks found (and so must have a promise); a block without a
    language on it is an illustration, not a script."""
    page = tmp_path / "new-page.md"
    found = every_block("python", {page: "# New page\n\n```python\nprint('hi')\n```\n\n```\nprint('x')\n```\n"})
    new = [name for name, _ in found if name.startswith(name_of(page))]
    assert new == [f"{name_of(page)} # New page"] and new[0] not in EXPECTED
    assert [name for name, _ in found if name not in new] == [name for name, _ in BLOCKS]


def test_a_fragment_fails_and_its_whole_script_twin_passes(tmp_path):
    """The class of mistake: a top-level ``async with`` and process workers without a guard fail as
    files; the same code as a whole script runs. (The test above would catch both.)"""
    fragment = "import asyncio\nasync with asyncio.timeout(1):\n    print('ok')\n"
    whole = "import asyncio\n\n\nasync def main():\n    async with asyncio.timeout(1):\n        print('ok')\n\n\n" \
            "asyncio.run(main())\n"
    assert run_block(fragment, tmp_path, tmp_path).returncode != 0
    assert run_block(whole, tmp_path, tmp_path).stdout == "ok\n"
