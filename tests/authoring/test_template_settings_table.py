"""A package made by ``agentos new`` documents its settings as the table the registry's pages read.

The component page takes the settings from the first Markdown table of the long description whose
first header cell is ``Argument``, ``Setting`` or ``Parameter`` (``registry._site.settings_table``);
an ini block alone gave "no settings table". The table must name every constructor keyword.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from agentos import api
from agentos.registry._site import settings_table

KINDS = {"environment": "my_env", "policy": "my_policy", "trainer": "my_trainer", "agent": "my_agent"}
NOT_SETTINGS = {"self", "observation_space", "action_space", "environment", "policy", "trainer"}


def _constructor_keywords(package: Path) -> set[str]:
    names = set()
    for source in package.glob("src/*/*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name == "__init__":
                names |= {a.arg for a in node.args.args + node.args.kwonlyargs} - NOT_SETTINGS
    return names


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_generated_readme_has_the_settings_table_of_the_constructor(kind, tmp_path):
    options = {"package": True} if kind == "agent" else {}
    result = api.new(kind, KINDS[kind], output_dir=str(tmp_path), **options)
    package = Path(result["directory"])
    rows = settings_table((package / "README.md").read_text())
    assert rows, f"{package.name}: no settings table in its README"
    header, *body = rows
    assert header[0] in ("Argument", "Setting", "Parameter")
    assert {row[0] for row in body} == _constructor_keywords(package)


def test_an_ini_block_alone_is_not_a_settings_table():  # what the templates wrote before
    ini_only = "Settings:\n\n```ini\n[policy.x]\nhidden_size = 64\n```\n"
    assert settings_table(ini_only) == []
    assert settings_table(ini_only + "\n| Setting | Default |\n|---|---|\n| `hidden_size` | `64` |\n") == [
        ["Setting", "Default"], ["hidden_size", "64"]]
