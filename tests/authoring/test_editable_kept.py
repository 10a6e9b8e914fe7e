"""Installing a published component over the author's editable install keeps the editable one, says
so in one note, and still records the published release; without the editable install it installs."""

from __future__ import annotations

from agentos.registry import publish
from conftest import build_wheel, write_package

IS_EDITABLE = (
    "import json, importlib.metadata as m; d = m.distribution('agentos-policy-keep'); "
    "print(d.version, json.loads(d.read_text('direct_url.json') or '{}').get('dir_info', {}).get('editable', False))"
)


def _component(root, version: str):
    return write_package(
        root / version,
        "agentos-policy-keep",
        version=version,
        entry_points={"agentos.policy": {"keep": "agentos_policy_keep:Keep"}},
        modules={"agentos_policy_keep/__init__.py": "class Keep:\n    def decide(self, obs):\n        return 0\n"},
    )


def test_install_keeps_the_authors_editable_install(fresh_venv, tmp_path):
    venv = fresh_venv("editable-author")
    index = tmp_path / "index"
    publish([str(build_wheel(_component(tmp_path / "pub", "0.2.0"), tmp_path))], str(index))
    venv.pip_install("--no-build-isolation", "--no-deps", "-e", _component(tmp_path / "work", "0.3.0.dev0"))
    assert venv.agentos("init", "a", "--no-install", cwd=tmp_path).returncode == 0

    result = venv.agentos("install", "policy", "keep", "--index-url", index, "--agent", "a", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    notes = [line for line in (result.stdout + result.stderr).splitlines() if "kept your editable install" in line]
    assert len(notes) == 1 and "agentos-policy-keep 0.3.0.dev0" in notes[0] and "0.2.0" in notes[0], result.stdout
    assert venv.run("python", "-c", IS_EDITABLE, cwd=tmp_path).stdout.split() == ["0.3.0.dev0", "True"]
    ini = (tmp_path / "a" / "agent.ini").read_text()
    assert "[policy.keep]" in ini and "version = 0.2.0" in ini
    assert "agentos_policy_keep-0.2.0-py3-none-any.whl#sha256=" in (tmp_path / "a" / "requirements.txt").read_text()

    venv.run("python", "-m", "pip", "uninstall", "-y", "agentos-policy-keep", check=True)  # the note's advice
    again = venv.agentos("install", "policy", "keep", "--index-url", index, "--agent", "a", cwd=tmp_path)
    assert again.returncode == 0 and "editable" not in again.stdout + again.stderr, again.stdout + again.stderr
    assert venv.run("python", "-c", IS_EDITABLE, cwd=tmp_path).stdout.split() == ["0.2.0", "False"]
