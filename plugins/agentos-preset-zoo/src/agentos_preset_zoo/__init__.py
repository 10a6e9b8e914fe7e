"""rl-baselines3-zoo's tuned hyperparameters as AgentOS presets, one per (algorithm, task) pair.

The numbers live in ``zoo.json`` (plain data, written by ``tools/import_zoo_presets.py`` from rl_zoo3's own
``hyperparams/*.yml``); each preset's entry point names an attribute of this module, which reads that file
(no torch, no gymnasium). :data:`SKIPPED` lists the pairs left out, each with the reason.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

__all__ = ["SKIPPED", "SOURCE", "presets"]


@functools.cache
def _data() -> dict:
    return json.loads(resources.files(__name__).joinpath("zoo.json").read_text(encoding="utf-8"))


def presets() -> dict[str, dict]:
    """preset name -> the preset (``zoo`` holds rl-zoo's algorithm file, task, task family and n_timesteps)."""
    return _data()["presets"]


def __getattr__(name: str):
    if name == "SKIPPED":
        return _data()["skipped"]
    if name == "SOURCE":
        return _data()["source"]
    found = _data()["presets"].get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no preset {name!r}")
    return json.loads(json.dumps(found))  # a copy: callers may change theirs
