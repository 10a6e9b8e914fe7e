"""The README's command blocks, run exactly as a user copies them (tests/readme_blocks.py picks them).

The Quick start's first block runs as written (bash -e, line by line) in a new folder, in a fresh
venv with agentos-core, against an index of this checkout's packages (``AGENTOS_INDEX_URL``, as the
embedded index/ is named outside a source checkout). Its second block (torch and DQN) is too slow
for the suite: ``nox -s demo`` runs both blocks from the same parser.
"""

from __future__ import annotations

import ast
import re
import subprocess

import pytest
from conftest import ROOT
from readme_blocks import QUICK_START, blocks, script, section


def test_the_demo_runs_the_readme_quick_start_and_nothing_else():
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    demo = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "demo")
    source = ast.get_source_segment((ROOT / "noxfile.py").read_text(), demo)
    assert "blocks(QUICK_START)" in source and "script(" in source
    assert '"agentos"' not in source and "'agentos'" not in source  # no command line of its own
    quick = blocks(QUICK_START)
    assert [language for language, _ in quick] == ["console", "console"]
    lines = [line for _, body in quick for line in script(body).splitlines()]
    assert lines[0].startswith("agentos init my_agent --venv && cd my_agent")
    trains = [line for line in lines if line.startswith("agentos train")]
    assert trains and all("--seed" in line for line in trains)  # what the README shows is what ran


def test_script_keeps_lines_as_written():
    text = "# T\n\n## S\n\n```console\n$ a 'b # c'  # d\nout\n$ e && cd f\n```\n\n## U\n```console\n$ g\n```\n"
    ((language, body),) = blocks("## S", text)
    assert script(body, language) == "a 'b # c'  # d\ne && cd f\n"
    assert "g" not in section("## S", text)


def test_section_reads_the_file_it_is_given_and_a_comment_in_a_block_is_no_heading(tmp_path):
    """The helpers read a docs page as they read the README; a ``# comment`` line inside a fenced block
    does not end its section (the twin: a real heading of the same level does)."""
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n## S\n\n```python\n# prints:\nprint(1)\n```\n\n```console\n$ x\n```\n\n"
                    "## T\n\n```console\n$ y\n```\n")
    assert [language for language, _ in blocks("## S", path=page)] == ["python", "console"]
    assert "$ y" not in section("## S", path=page) and blocks("## T", path=page) == [("console", "$ y\n")]
    with pytest.raises(LookupError, match="page.md"):
        section("## Quick start", path=page)


def test_quick_start_first_block_runs_as_written(core_venv, registry_index, tmp_path):
    language, body = blocks(QUICK_START)[0]
    commands = script(body, language)
    result = subprocess.run(
        ["bash", "-e", "-x", "-c", commands],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        env={**core_venv("readme").env, "AGENTOS_INDEX_URL": str(registry_index)},
    )
    log = result.stdout[-4000:] + result.stderr[-4000:]
    assert result.returncode == 0, log
    assert "Traceback" not in result.stderr, log
    assert "not installed yet" not in result.stderr, log  # init --venv installs them, so no note
    assert "finished: 1,000 episodes" in result.stdout, log
    assert re.search(r"policy trained by run \S+-train-", result.stdout), log
    runs = [line for line in result.stdout.splitlines() if re.match(r"\d{8}-\d{6}-(train|run)-", line)]
    assert len(runs) == 3 and all(" finished " in line for line in runs), log
