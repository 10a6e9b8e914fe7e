"""Preset families, with the first-party one (``zoo``, agentos-preset-zoo): its presets resolve by name in
agent.ini, in the registry and in `agentos install preset NAME --default`, which also makes the preset's
environment agent.ini's."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentos.api import publish
from agentos.config import AgentConfig
from agentos.errors import UsageError
from agentos.experiments import load_preset
from agentos.registry._client import IndexClient
from agentos.registry._install import _preset_decides
from agentos.registry._resolve import find_project

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "agentos-preset-zoo"


def test_a_preset_of_the_family_loads_by_its_full_name():
    preset = load_preset("zoo_sac_pendulum_v1")
    assert preset.name == "zoo_sac_pendulum_v1" and preset.environment == "gymnasium"
    assert load_preset("ZOO-SAC-Pendulum-v1").components == preset.components  # names as people write them


@pytest.mark.parametrize("name, message", [
    ("zoo", "a family of 136 presets; name one"),  # the family itself is not a preset: it names one
    ("zoo_sac_pendulum", "did you mean 'zoo_sac_pendulum_v1'?"),
    ("zoo_sac_cartpole_v1", "no 'zoo_sac_cartpole_v1'"),  # SAC acts in Box spaces: rl-zoo has no such pair
    ("ppo_zoo_extra", "ppo_zoo is not a family"),
])
def test_names_outside_the_family_are_one_line_errors(name, message):
    with pytest.raises(UsageError, match=message) as error:
        load_preset(name)
    assert "\n" not in str(error.value) and len(str(error.value)) < 400


def test_the_registry_finds_the_family_and_install_default_switches_the_environment(tmp_path):
    publish([str(PACKAGE)], str(tmp_path / "index"))
    client = IndexClient((tmp_path / "index").as_uri())
    project, name, _ = find_project(client, "preset", "zoo_sac_pendulum_v1")
    assert (project, name) == ("agentos-preset-zoo", "zoo_sac_pendulum_v1")
    with pytest.raises(UsageError, match="no preset named 'zo_sac_pendulum_v1'"):
        find_project(client, "preset", "zo_sac_pendulum_v1")
    (tmp_path / "agent.ini").write_text("[environment]\ndefault = corridor\n\n[policy]\ndefault = random\n")
    config = AgentConfig.load(str(tmp_path / "agent.ini"))
    notes = _preset_decides(config, "zoo_sac_pendulum_v1", explicit=False)  # without --default: said, not done
    assert config.default("environment") == "corridor" and any("--default switches" in n for n in notes)
    notes = _preset_decides(config, "zoo_sac_pendulum_v1", explicit=True)
    assert config.default("environment") == "gymnasium" and config.default("policy") is None
    assert "the preset's environment gymnasium replaces corridor as the default environment" in notes


def test_a_run_of_a_family_preset_is_evaluated_and_a_missing_component_only_when_it_was_there(tmp_path):
    """The lock names the family's package for a zoo preset, and a component agent.ini declares but that was
    missing when the run trained (``agentos init --no-install`` leaves the starter's sections) is no change;
    one that was installed then and is gone now still is."""
    import json
    import os
    import subprocess
    import sys

    (tmp_path / "agent.ini").write_text(
        "[preset]\ndefault = zoo_ppo_cartpole_v1\n\n[preset.zoo_ppo_cartpole_v1]\npackage = agentos-preset-zoo\n\n"
        "[environment]\ndefault = gymnasium\n\n"
        "[environment.nowhere]\npackage = agentos-env-nowhere\n")
    env = {**os.environ, "PYGAME_HIDE_SUPPORT_PROMPT": "1"}

    def agentos(*args):
        return subprocess.run([sys.executable, "-m", "agentos", *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=300)

    trained = agentos("train", "agent.ini", "64", "--steps", "--seed", "0", "--quiet")
    assert trained.returncode == 0, trained.stderr
    (run,) = (tmp_path / "runs").iterdir()
    lock = json.loads((run / "lock.json").read_text())
    entries = {(c["kind"], c["name"]): c for c in lock["components"]}
    assert entries["preset", "zoo_ppo_cartpole_v1"]["package"] == "agentos-preset-zoo"
    assert entries["environment", "nowhere"]["install"] == "missing"
    done = agentos("evaluate", "--run", run.name, "--episodes", "1", "--json")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["returns"]) == 1
    # the twin: a component the run had (by the lock) that is not installed now is refused, in one line
    gone = {"kind": "environment", "name": "nowhere", "package": "agentos-env-nowhere", "version": "1.0.0",
            "sha256": "0" * 64, "install": "wheel"}
    lock["components"] = [gone if (c["kind"], c["name"]) == ("environment", "nowhere") else c
                          for c in lock["components"]]
    (run / "lock.json").write_text(json.dumps(lock))
    refused = agentos("evaluate", "--run", run.name, "--episodes", "1")
    assert refused.returncode != 0 and "environment nowhere (agentos-env-nowhere) is not installed" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_family_preset_counts_as_installed_and_reinstalling_the_default_says_nothing_odd(tmp_path):
    import threading

    from agentos.registry._install import _record, is_installed

    assert is_installed("preset", "zoo_sac_pendulum_v1") and is_installed("preset", "ZOO-SAC-Pendulum-v1")
    assert not is_installed("preset", "zoo_sac_nowhere_v9") and not is_installed("preset", "nothing_at_all")
    ini = tmp_path / "agent.ini"
    ini.write_text("[preset]\ndefault = zoo_sac_pendulum_v1\n\n"
                   "[preset.zoo_sac_pendulum_v1]\npackage = agentos-preset-zoo\n")

    class Art:
        name, project, version, sha256 = "agentos-preset-zoo", "agentos-preset-zoo", "1.1.0", "0" * 64

    entry = {"filename": "x.whl", "url": "https://example.invalid/x.whl"}
    result = _record(str(ini), "preset", "zoo_sac_pendulum_v1", Art, entry, True, {}, False,
                     threading.Event(), lambda: "")
    assert not any("not installed" in note for note in result["notes"]), result["notes"]


def test_an_agent_ini_of_a_preset_alone_takes_the_environment_the_preset_is_for(tmp_path):
    """A folder whose agent.ini names only a preset gets the preset's environment; a preset for no one
    environment still asks for one, in one line."""
    from agentos.core._presets import expand_preset
    from agentos.errors import ConfigError

    ini = tmp_path / "agent.ini"
    ini.write_text("[preset]\ndefault = zoo_sac_pendulum_v1\n")
    config = expand_preset(AgentConfig.load(str(ini)))
    assert config.default("environment") == "gymnasium" and config.default("policy") == "sb3"
    ini.write_text("[environment]\ndefault = corridor\n\n[preset]\ndefault = zoo_sac_pendulum_v1\n")
    assert expand_preset(AgentConfig.load(str(ini))).default("environment") == "corridor"  # agent.ini's wins
    ini.write_text("[preset]\ndefault = random\n")
    with pytest.raises(ConfigError, match=r"needs an environment \(\[environment\] default = NAME\)"):
        expand_preset(AgentConfig.load(str(ini)))
