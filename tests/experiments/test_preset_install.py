"""A preset is a package like any component: installed from an index, then used in agent.ini."""

from __future__ import annotations

import json
from pathlib import Path

from agentos.config import AgentConfig
from registry.conftest import core_deps_site, core_venv, registry_index  # noqa: F401  (fixtures)


def test_install_preset_from_an_index_and_train_with_it(core_venv, registry_index):  # noqa: F811
    venv = core_venv()
    folder = registry_index.parent / "preset_agent"
    assert venv.agentos("init", folder).returncode == 0
    env = {"AGENTOS_INDEX_URL": str(registry_index)}
    assert "environment, policy, trainer, agent or preset" in venv.agentos("install", "--help").stdout
    found = venv.agentos("search", "preset", env=env)
    assert found.returncode == 0 and "preset  sarsa_table" in found.stdout, found.stdout + found.stderr
    assert venv.agentos("install", "environment", "corridor", cwd=folder, env=env).returncode == 0
    proc = venv.agentos("install", "preset", "sarsa_table", cwd=folder, env=env)
    assert proc.returncode == 0, proc.stderr
    ini = (folder / "agent.ini").read_text()
    assert "[preset.sarsa_table]" in ini and "package = agentos-preset-sarsa-table" in ini
    # the first preset becomes the default, but the starter's own [policy] default = random still wins
    # over the preset's q_table: install says so, and changes no default it was not asked to
    assert "agent.ini's default policy random wins over the preset's q_table" in proc.stdout, proc.stdout
    assert AgentConfig.load(str(folder)).default("policy") == "random"
    # --default lets the preset decide: agent.ini's own policy default goes, the preset's q_table and sarsa
    # (which came with it, as dependencies of the preset package) are used
    proc = venv.agentos("install", "preset", "sarsa_table", "--default", cwd=folder, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "the preset's policy q_table replaces random as the default policy" in proc.stdout, proc.stdout
    config = AgentConfig.load(str(folder))
    assert config.default("policy") is None and config.default("preset") == "sarsa_table"
    assert config.component("policy", "random") is not None  # its section (and package) stay
    ini = (folder / "agent.ini").read_text()
    proc = venv.agentos("train", "60", "--seed", "0", "--quiet", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    proc = venv.agentos("run", "--episodes", "2", "--seed", "0", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = [line.split(": ", 1)[1] for line in proc.stdout.splitlines() if line.startswith("run ")]
    meta = json.loads((Path(run_dir) / "run.json").read_text())
    assert meta["request"]["trained_by"], meta  # the policy trained through the preset played
    (folder / "agent.ini").write_text(ini.replace("[preset.sarsa_table]\n", "[preset.sarsa_table]\nalpah = 0.3\n"))
    proc = venv.agentos("run", "--episodes", "1", cwd=folder)
    assert proc.returncode == 2 and "did you mean 'trainer.alpha'?" in proc.stderr, proc.stderr
