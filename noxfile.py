"""Sessions: ``nox -s demo`` (the main job), ``nox -s tests``, ``nox -s lint``, ``nox -s bench``.

torch is pinned to 2.13.0 first in every session that may pull it in: on these machines that is a
CPU build lying on disk, while an open range would download a CUDA build of several GB.
"""

from __future__ import annotations

import glob
import os

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

ROOT = os.path.dirname(os.path.abspath(__file__))
TORCH = "torch==2.13.0"
PLUGINS = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(ROOT, "plugins", "*", "pyproject.toml")))
# Test tools, and what the tests exercise beyond the plugins' own requirements: ruff (rendered
# templates must lint), stable-baselines3 (generated SB3 agents), tensorboard (its tracker).
TOOLS = ["pip>=24", "hatchling", "editables", "build", "pytest>=8", "cookiecutter>=2.5", "rich>=13", "matplotlib",
         "ruff", "stable-baselines3>=2.3", "tensorboard"]


def install_project(session: nox.Session) -> None:
    """agentos-core and every first-party plugin, editable, with torch pinned first."""
    session.install(TORCH)
    session.install(*TOOLS)
    session.install("--no-build-isolation", "-e", "agentos-core", *[arg for p in PLUGINS for arg in ("-e", p)])


@nox.session
def tests(session: nox.Session) -> None:
    """The whole test suite (tests/ and every plugin's tests/)."""
    install_project(session)
    session.run("pytest", "-q", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """Create an agent and run it with the first-party components installed as real packages."""
    install_project(session)
    workdir = session.create_tmp()
    agent_dir = os.path.join(workdir, "my_agent")
    if os.path.exists(agent_dir):
        import shutil

        shutil.rmtree(agent_dir)
    session.run("agentos", "init", agent_dir)
    session.chdir(agent_dir)
    session.run("agentos", "list")
    session.run("agentos", "run", "agent.ini", "--episodes", "5", "--seed", "0")
    session.run("python", "-c", "import acr; env = acr.environment['2048']; print(env.reset(seed=0))")


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", "agentos-core", "plugins", "tests", "bench", "noxfile.py")


@nox.session
def bench(session: nox.Session) -> None:
    """Speed figures for the README: startup, agent-loop overhead, 2048 speed."""
    install_project(session)
    session.install("gymnasium-2048")
    for script in ("bench_startup.py", "bench_loop.py", "bench_2048.py"):
        session.run("python", os.path.join("bench", script), *session.posargs)
