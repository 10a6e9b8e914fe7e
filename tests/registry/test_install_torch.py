"""torch from the right place (issue 32, item 6): an install keeps the venv's torch, and never brings one
unasked. Real pip and venvs; the venv's torch is the real CPU build (2.13.0+cpu) of the test venv;
pip's usual index is a stand-in served on 127.0.0.1 offering a newer "torch" whose requirement is a
"CUDA library" (small made-up wheels, as PyPI offers the CUDA build)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from agentos.registry import publish
from conftest import Venv, wheel_for
from registry.test_install import installed, one_line_error
from registry.wheelmaker import env_wheel, make_wheel

EXCLUDE_PREFIXES = ("agentos", "_agentos", "__editable__", "acr", "_acr")


@pytest.fixture(scope="module")
def torch_site(tmp_path_factory) -> str:
    """The test venv's site-packages (its torch 2.13.0+cpu, numpy, pip...) without AgentOS, as symlinks."""
    site = Path(sysconfig.get_paths()["purelib"])
    out = tmp_path_factory.mktemp("torch-site")
    for entry in site.iterdir():
        if not entry.name.lower().startswith(EXCLUDE_PREFIXES) and not entry.name.endswith(".pth"):
            os.symlink(entry, out / entry.name)
    return str(out)


@pytest.fixture(scope="module")
def indexes(tmp_path_factory) -> tuple[Path, Path]:
    """(our registry, the stand-in for PyPI) as folders."""
    wheels = tmp_path_factory.mktemp("torch-wheels")
    ours, pypi = tmp_path_factory.mktemp("ours") / "index", tmp_path_factory.mktemp("pypi") / "index"
    publish([str(make_wheel(wheels, "torch", "2.14.1", requires=["nvidia-cublas-cu13>=1"])),
             str(make_wheel(wheels, "nvidia-cublas-cu13", "1.0"))], str(pypi), library=True)
    publish([str(make_wheel(wheels, "agentos-dep-x", "1.0", summary="library x")),
             str(env_wheel(wheels, "needs-torch", "1.0", ["torch>=2.1", "agentos-dep-x>=1.0"])),
             str(env_wheel(wheels, "newer-torch", "1.0", ["torch>=2.14"]))], str(ours), library=True)
    return ours, pypi


@pytest.fixture
def pypi(indexes, http_server, tmp_path):
    """The stand-in served over HTTP, and the environment that makes it pip's only index."""
    server = http_server(indexes[1])
    (tmp_path / "no-links").mkdir()
    env = {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": f"{server.url}simple/",
           "PIP_EXTRA_INDEX_URL": f"{server.url}simple/", "PIP_FIND_LINKS": str(tmp_path / "no-links")}
    return server, env


def agent_in(venv: Venv, folder: Path) -> Path:
    proc = venv.agentos("init", folder, "--no-install")
    assert proc.returncode == 0, proc.stderr
    return folder


@pytest.fixture
def torch_venv(tmp_path, torch_site, wheelhouse) -> Venv:
    """A fresh venv whose torch is the real 2.13.0+cpu, with agentos-core."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", tmp_path / "venv"], check=True)
    venv = Venv(tmp_path / "venv", torch_site, tmp_path / "cache")
    venv.pip_install("--no-deps", wheel_for(wheelhouse, "agentos-core"))
    return venv


def test_an_install_keeps_the_venvs_torch(torch_venv, indexes, pypi, tmp_path):
    server, env = pypi
    folder = agent_in(torch_venv, tmp_path / "agent")
    assert installed(torch_venv, "torch") == "2.13.0+cpu"
    proc = torch_venv.agentos("install", "environment", "needs-torch", "--index-url", indexes[0], cwd=folder, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "pip dry run" in proc.stdout + proc.stderr  # agentos-dep-x was missing: pip resolved
    assert installed(torch_venv, "torch") == "2.13.0+cpu" and installed(torch_venv, "agentos-dep-x") == "1.0"
    assert installed(torch_venv, "nvidia-cublas-cu13") is None
    assert not [line for line in server.log if ".whl" in line]  # nothing downloaded from pip's index


def test_a_requirement_the_venvs_torch_cannot_meet_is_refused(torch_venv, indexes, pypi, tmp_path):
    server, env = pypi
    folder = agent_in(torch_venv, tmp_path / "agent")
    before = (folder / "agent.ini").read_text()
    proc = torch_venv.agentos("install", "environment", "newer-torch", "--index-url", indexes[0], cwd=folder, env=env)
    message = one_line_error(proc)
    assert "keeping torch 2.13.0+cpu" in message and "nothing was changed" in message
    assert installed(torch_venv, "torch") == "2.13.0+cpu" and installed(torch_venv, "agentos-env-newer-torch") is None
    assert (folder / "agent.ini").read_text() == before


def test_a_venv_without_torch_is_told_how_to_choose_its_build(core_venv, indexes, pypi, tmp_path):
    server, env = pypi
    venv = core_venv()
    folder = agent_in(venv, tmp_path / "agent")
    before = (folder / "agent.ini").read_text()
    proc = venv.agentos("install", "environment", "needs-torch", "--index-url", indexes[0], cwd=folder, env=env)
    message = one_line_error(proc)
    assert "needs torch, which this environment does not have" in message
    assert "torch 2.14.1 with 1 CUDA libraries" in message and "download.pytorch.org/whl/cpu" in message
    assert installed(venv, "torch") is None and (folder / "agent.ini").read_text() == before

    proc = venv.agentos("install", "environment", "needs-torch", "--any-torch", "--index-url", indexes[0],
                        cwd=folder, env=env)
    assert proc.returncode == 0, proc.stderr  # the user let pip choose: its torch and "CUDA library"
    assert installed(venv, "torch") == "2.14.1" and installed(venv, "nvidia-cublas-cu13") == "1.0"
    assert "[environment.needs-torch]" in (folder / "agent.ini").read_text()
