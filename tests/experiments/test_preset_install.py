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
    # its components came with it (dependencies of the preset package); agent.ini names no policy of
    # its own any more (the starter's random), so the preset's q_table and sarsa are used
    config = AgentConfig.load(str(folder))
    config.set_default("policy", None)
    config.save()
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
