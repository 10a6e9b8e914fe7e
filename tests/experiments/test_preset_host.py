"""Presets resolve through the component host: duplicates, disabled plugins and broken plugins as for any kind.

Real wheels, really pip-installed beside the first-party ``sarsa_table``: a fork that declares the same
preset name (and a name of its own), a preset whose import calls ``sys.exit``, and a valid twin.
"""

from __future__ import annotations

import json

import pytest

FORK = """
import os
if os.environ.get("FORK_MARKER"):
    open(os.environ["FORK_MARKER"], "a").close()  # proves the module was imported
PRESET = {"summary": "a fork", "components": {"policy": ["random", {}]}}
"""
EXITS = "import sys\nsys.exit(3)\n"
CALM = 'PRESET = {"summary": "calm", "components": {"policy": ["random", {}]}}\n'


@pytest.fixture(scope="module")
def preset_venv(tmp_path_factory, base_site, wheelhouse):
    from conftest import Venv
    from registry.wheelmaker import make_wheel

    out = tmp_path_factory.mktemp("preset-wheels")
    wheels = [
        make_wheel(out, "agentos-preset-sarsa-fork", "9.9.9", code=FORK, entry_points={
            "agentos.preset": {"sarsa_table": "agentos_preset_sarsa_fork:PRESET",
                               "fork_only": "agentos_preset_sarsa_fork:PRESET"}}),
        make_wheel(out, "agentos-preset-exits", "0.1.0", code=EXITS,
                   entry_points={"agentos.preset": {"exits": "agentos_preset_exits:PRESET"}}),
        make_wheel(out, "agentos-preset-calm", "0.1.0", code=CALM,
                   entry_points={"agentos.preset": {"calm": "agentos_preset_calm:PRESET"}}),
    ]
    venv = Venv(tmp_path_factory.mktemp("preset-venv"), base_site, tmp_path_factory.mktemp("preset-cache"))
    venv.pip_install("--no-deps", *sorted(wheelhouse.glob("*.whl")), *wheels)
    return venv


def _experiment(tmp_path, agents: str, name: str):
    path = tmp_path / f"{name}.ini"
    path.write_text(f"[experiment]\nagents = [{agents}]\nenvironments = [corridor]\nseeds = 1\nepisodes = 1\n"
                    "test-episodes = 0\nworkers = 1\n")
    return path


def _ran(proc) -> bool:
    """The experiment ran to its summary (a trial may fail: this venv has no safetensors to save q_table)."""
    return proc.returncode in (0, 1) and "summary: " in proc.stdout and "Traceback" not in proc.stderr


def _preset_versions(tmp_path, name: str) -> set[str]:
    trials = json.loads((tmp_path / "experiments" / name / "experiment.json").read_text())["trials"]
    return {t["identity"]["agent"] for t in trials}


def test_experiments_use_the_preset_that_agentos_list_says_is_used(preset_venv, tmp_path):
    listed = json.loads(preset_venv.agentos("list", "--kind", "preset", "--json", cwd=tmp_path).stdout)
    sarsa = [row for row in listed if row["name"].split("@")[0] == "sarsa_table"]
    assert len(sarsa) == 2, sarsa
    (used,) = [row for row in sarsa if row["status"] == "ok"]
    (other,) = [row for row in sarsa if row["status"] != "ok"]
    assert "duplicate" in other["status"], other
    proc = preset_venv.agentos("experiment", "run", _experiment(tmp_path, "sarsa_table, calm", "dup"), "-q",
                               cwd=tmp_path, env={"FORK_MARKER": str(tmp_path / "imported")})
    assert _ran(proc), proc.stdout + proc.stderr
    assert _preset_versions(tmp_path, "dup") == {f"preset:sarsa_table@{used['version']}", "preset:calm@0.1.0"}
    # the duplicate is never imported when the first-party one is used (and vice versa)
    assert (tmp_path / "imported").exists() == (used["package"] == "agentos-preset-sarsa-fork")


def test_a_disabled_preset_package_is_neither_imported_nor_used(preset_venv, tmp_path):
    env = {"FORK_MARKER": str(tmp_path / "imported"), "AGENTOS_DISABLE_PLUGINS": "agentos-preset-sarsa-fork"}
    proc = preset_venv.agentos("experiment", "run", _experiment(tmp_path, "sarsa_table", "ok"), "-q",
                               cwd=tmp_path, env=env)
    assert _ran(proc), proc.stdout + proc.stderr
    assert _preset_versions(tmp_path, "ok") == {"preset:sarsa_table@1.0.0"}  # the first-party one
    proc = preset_venv.agentos("experiment", "run", _experiment(tmp_path, "fork_only", "off"), cwd=tmp_path,
                               env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "disabled by AGENTOS_DISABLE_PLUGINS" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "imported").exists()  # neither run imported the disabled package's module


def test_a_preset_that_exits_on_import_is_one_line_and_breaks_nothing_else(preset_venv, tmp_path):
    proc = preset_venv.agentos("experiment", "run", _experiment(tmp_path, "exits", "exits"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip()
    assert "'exits'" in line and "SystemExit" in line and len(line.splitlines()) == 1, line
    proc = preset_venv.agentos("experiment", "run", _experiment(tmp_path, "calm", "calm"), "-q", cwd=tmp_path)
    assert proc.returncode == 0 and _preset_versions(tmp_path, "calm") == {"preset:calm@0.1.0"}, proc.stderr
