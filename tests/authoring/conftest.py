"""Fixtures of the authoring tests: a venv that sees the dev environment's libraries, not its agentos.

Rendered packages need torch, stable-baselines3, pytest and hatchling. Installing those from PyPI
into every test venv would take minutes (and torch from PyPI is the CUDA build), so the test venvs
see the dev venv's site-packages through a folder of symlinks that leaves out everything of AgentOS
(agentos-core, acr and every plugin): those come from real wheels, installed with real pip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import Venv, purelib, wheel_for

_SKIP_PREFIXES = ("agentos", "_agentos", "__editable__", "acr", "pip", "_distutils_hack", "__pycache__")


def _skipped(entry: str) -> bool:
    return entry.lower().startswith(_SKIP_PREFIXES) or entry.endswith(".pth")


@pytest.fixture(scope="session")
def dev_site(tmp_path_factory) -> str:
    """A folder of symlinks to the dev venv's third-party packages (torch, sb3, pytest, hatchling...)."""
    site = tmp_path_factory.mktemp("dev-site")
    source = Path(purelib())
    for entry in os.listdir(source):
        if not _skipped(entry):
            (site / entry).symlink_to(source / entry)
    return str(site)


@pytest.fixture(scope="session")
def core_venv(tmp_path_factory, dev_site, wheelhouse) -> Venv:
    """A real venv with agentos-core installed from its (non-editable) wheel; nothing else of AgentOS."""
    venv = Venv(tmp_path_factory.mktemp("authoring-venv"), dev_site, tmp_path_factory.mktemp("authoring-cache"))
    venv.pip_install("--no-deps", wheel_for(wheelhouse, "agentos-core"))
    return venv


@pytest.fixture
def fresh_venv(tmp_path_factory, dev_site, wheelhouse):
    """Factory of new real venvs with agentos-core installed from its wheel."""

    def make(name: str = "venv") -> Venv:
        venv = Venv(tmp_path_factory.mktemp(name), dev_site, tmp_path_factory.mktemp(f"{name}-cache"))
        venv.pip_install("--no-deps", wheel_for(wheelhouse, "agentos-core"))
        return venv

    return make
