"""The sarsa_table preset loads without heavy imports and yields a valid agent.ini."""

from __future__ import annotations

from agentos.config import AgentConfig
from agentos.experiments import agent_ini_text, load_preset


def test_sarsa_table_loads_as_data_and_applies_to_its_environments():
    preset = load_preset("sarsa_table")
    assert preset.version == "1.0.0" and preset.package == "agentos-preset-sarsa-table"
    for environment in ['2048', 'corridor']:
        config = AgentConfig.from_text(agent_ini_text(preset, environment, {}))
        assert config.default("environment") == environment
        for kind, (component, _) in preset.components.items():
            assert config.default(kind) == component
