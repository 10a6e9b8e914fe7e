"""rl-baselines3-zoo's tuned hyperparameters as AgentOS presets, one per (algorithm, task) pair.

One entry point, ``zoo``: a family of presets (``zoo_sac_pendulum_v1``, ``zoo_ppo_lunarlander_v3``...). The
numbers live in ``zoo.json`` (plain data, written by ``tools/import_zoo_presets.py`` from rl_zoo3's own
``hyperparams/*.yml``); reading them imports nothing heavy. :data:`SKIPPED` lists the pairs left out, each
with the reason; ``python -m agentos_preset_zoo`` lists the presets.
"""

from __future__ import annotations

import json
from importlib import resources

__all__ = ["PRESET", "SKIPPED", "SOURCE", "presets"]

_DATA = json.loads(resources.files(__name__).joinpath("zoo.json").read_text(encoding="utf-8"))
SOURCE: dict = _DATA["source"]
SKIPPED: list = _DATA["skipped"]
PRESET = {
    "summary": f"rl-baselines3-zoo's tuned hyperparameters (rl_zoo3 {SOURCE['version']}), "
               "one preset per (algorithm, task): zoo_<algorithm>_<task>",
    "listing": "python -m agentos_preset_zoo lists them",
    "variants": _DATA["presets"],
}


def presets() -> dict[str, dict]:
    """preset name (``zoo_sac_pendulum_v1``) -> the preset (``zoo``: rl-zoo's algorithm file, task, family,
    n_timesteps)."""
    return {f"zoo_{name}": json.loads(json.dumps(preset)) for name, preset in _DATA["presets"].items()}
