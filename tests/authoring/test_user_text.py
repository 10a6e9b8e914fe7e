"""User text is data: values given to ``agentos new`` are written literally, never run as template code.

cookiecutter renders every context value as a Jinja template (and the output path too); these
run the real CLI with hostile descriptions, authors and output folders.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

AGENTOS = Path(sys.executable).with_name("agentos")


def new(*args, cwd):
    return subprocess.run([AGENTOS, "new", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def payload(marker: Path) -> str:
    return "{{ cycler.__init__.__globals__.os.popen('touch " + str(marker) + "').read() }}"


@pytest.mark.parametrize("text", ["{{ 7*7 }}", "{% raw", "{% raw %} x {% endraw %} {# c", "{%- if 1 %}y{% endif %}"])
def test_a_description_is_written_literally(tmp_path, text):
    result = new("policy", "my_policy", "--description", text, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    package = tmp_path / "agentos-policy-my-policy"
    assert f'description = "{text}"' in (package / "pyproject.toml").read_text()
    assert (package / "README.md").read_text().splitlines()[2].startswith(f"{text}: the AgentOS policy")
    assert (package / "src" / "agentos_policy_my_policy" / "__init__.py").read_text().startswith(f'"""{text}.')


def test_template_code_in_user_values_never_runs(tmp_path):
    marks = [tmp_path / f"ran-{i}" for i in range(3)]
    out = tmp_path / "{{ 7*7 }}"
    result = new(
        "trainer", "t", "--description", payload(marks[0]), "--author", payload(marks[1]), "-o", out, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    pyproject = (out / "agentos-trainer-t" / "pyproject.toml").read_text()
    assert payload(marks[0]) in pyproject and payload(marks[1]) in pyproject
    agent = new("agent", "a", "--description", payload(marks[2]), "--environment", "CartPole-v1", cwd=tmp_path)
    assert agent.returncode == 0, agent.stderr
    assert (tmp_path / "a" / "agent.ini").read_text().startswith(f"# a: {payload(marks[2])}.")
    assert not [m for m in marks if m.exists()]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "{{ 7*7 }}"]
