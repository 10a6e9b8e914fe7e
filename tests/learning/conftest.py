"""Fixtures for the learning tests: a real venv with our wheels and the dev machine's torch stack.

Torch, stable-baselines3, rich, matplotlib and tensorboard are far too big to install per test
session, so the learning venv sees them through a ``.pth`` file pointing at a folder of symlinks to
the running interpreter's site-packages -- minus every AgentOS distribution, which the venv gets
from freshly built wheels with real pip.
"""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import pytest
from conftest import Venv
from learning._helpers import CORRIDOR_SARSA, GAME_2048_SARSA, make_agent

EXCLUDE_PREFIXES = ("agentos", "_agentos", "__editable__", "acr", "_acr")


@pytest.fixture(scope="session")
def learning_site(tmp_path_factory) -> str:
    site = Path(sysconfig.get_paths()["purelib"])
    out = tmp_path_factory.mktemp("learning-site")
    for entry in site.iterdir():
        name = entry.name.lower()
        if name.startswith(EXCLUDE_PREFIXES) or name.endswith(".pth"):
            continue
        os.symlink(entry, out / entry.name)
    return str(out)


@pytest.fixture(scope="session")
def learning_venv(tmp_path_factory, learning_site, wheelhouse) -> Venv:
    """agentos-core and every first-party plugin, installed from wheels with real pip."""
    venv = Venv(tmp_path_factory.mktemp("learning-venv"), learning_site, tmp_path_factory.mktemp("learning-cache"))
    venv.pip_install("--no-deps", *sorted(wheelhouse.glob("*.whl")))
    return venv


@pytest.fixture
def corridor_agent(tmp_path) -> Path:
    return make_agent(tmp_path, CORRIDOR_SARSA)


@pytest.fixture
def agent_2048(tmp_path) -> Path:
    return make_agent(tmp_path, GAME_2048_SARSA)
