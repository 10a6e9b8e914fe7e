"""Sessions: ``nox -s demo`` (the main job), ``nox -s tests``, ``nox -s lint``, ``nox -s docs``, ``nox -s bench``.

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
# The linter is pinned: a newer ruff adds rules, and `nox -s lint` must give the same verdict on every
# machine and every day (bump it deliberately, fixing what the new version finds).
RUFF = "ruff==0.17.6"
# The documentation site's tools, pinned for the same reason: `mkdocs build --strict` turns every warning
# into an error, and a new release may warn about what the old one accepted.
DOCS = ["mkdocs==1.6.1", "mkdocs-material==9.8.1", "mkdocstrings==1.0.8", "mkdocstrings-python==2.0.11",
        "griffe==2.4.1", "mkdocs-autorefs==1.4.5"]

# import-linter checks the import contracts in .importlinter (public API, core's layers, no circles);
# pinned for the same reason. It reads the packages' sources (SOURCES), so it needs none of their deps.
IMPORT_LINTER = "import-linter==2.16"
PLUGINS = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(ROOT, "plugins", "*", "pyproject.toml")))
#: Where lint-imports finds agentos, acr, every plugin's package and the custom contract (tools/).
SOURCES = [os.path.join(ROOT, "agentos-core", "src"), *(os.path.join(p, "src") for p in PLUGINS),
           os.path.join(ROOT, "tools")]
# Test tools, and what the tests exercise beyond the plugins' own requirements: ruff (rendered
# templates must lint), stable-baselines3 (generated SB3 agents), tensorboard (its tracker).
TOOLS = [
    "pip>=24",
    "hatchling",
    "editables",
    "build",
    "pytest>=8",
    "pytest-xdist>=3.5",  # the suite runs on every core (-n auto): most of it waits on pip, venvs and servers
    "pytest-timeout>=2.3",  # a test that hangs fails alone (--timeout) instead of stalling the whole run
    "dask[distributed]>=2024.1",  # agentos experiment --scheduler (the agentos-core[dask] extra)
    "dask-jobqueue>=0.8",  # agentos experiment --cluster slurm (the agentos-core[cluster] extra)
    "optuna>=4.0",  # agentos tune (the agentos-core[tune] extra)
    "psycopg2-binary",  # agentos tune --storage postgresql+psycopg2://... (the shared-study test)
    "cookiecutter>=2.5",
    "rich>=13",
    "matplotlib",
    "imageio>=2.28",  # agentos run --record (the agentos-core[replay] extra): the replay tests decode GIFs
    "imageio-ffmpeg",  # and --record FILE.mp4 (the video encoder)
    RUFF,
    "pyyaml",  # reads rl_zoo3's hyperparameter files (ORACLES below)
    "stable-baselines3>=2.3",
    "tensorboard",
    # the registry server's tests: its extra, real twine, a real browser driver, an async HTTP client
    "starlette>=0.37",
    "uvicorn[standard]>=0.29",
    "python-multipart>=0.0.9",
    "twine>=5",
    "playwright>=1.40",
    "httpx>=0.27",
    # agentos.stats is tested against rliable's own numbers; rliable needs arch<8, which fails to import
    # with pandas 3
    "rliable",
    "pandas<3",
    "pettingzoo[classic]>=1.24",  # the arena's tests: tic-tac-toe and connect four (local env.py components)
    # agentos-tracker-mlflow's tests: a real `mlflow server` (the plugin itself needs mlflow-skinny only)
    "mlflow>=2.10",
    # agentos-env-gymnasium's box2d, mujoco and atari extras (its tests step LunarLander, HalfCheetah, Pong)
    "box2d==2.3.10",
    "mujoco>=3.0",
    "ale-py>=0.9",
    "opencv-python-headless>=4.5",
]
#: test oracles read as files only (never imported), installed without their dependencies: rl_zoo3's
#: hyperparams/*.yml are the zoo presets' facts (plugins/agentos-preset-zoo/tests/test_zoo_presets.py)
ORACLES = ["rl_zoo3==2.9.2"]


#: How ``nox -s tests`` runs pytest: a worker per core (at most 4), each test file on one worker (its module
#: fixtures made once), no test longer than 10 minutes (a hang is one failure, named, not a stalled run), and
#: the 20 slowest listed at the end (the whole run must stay under 25 minutes in CI).
PYTEST_RUN = ["--numprocesses", "auto", "--maxprocesses", "4", "--dist", "loadfile", "--timeout", "600",
              "--durations", "20"]


def install_project(session: nox.Session) -> None:
    """agentos-core and every first-party plugin, editable, with torch pinned first."""
    session.install(TORCH)
    session.install(*TOOLS)
    session.install("--no-deps", *ORACLES)
    session.install("--no-build-isolation", "-e", "./agentos-core", *[arg for p in PLUGINS for arg in ("-e", p)])


@nox.session
def tests(session: nox.Session) -> None:
    """The whole test suite (tests/ and every plugin's tests/), after installing what it needs: the
    project in this session's venv, and redis-server and Chromium with apt-get when they are missing."""
    import sys

    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import system_packages

    if system_packages.main() != 0:
        session.error("the tests need the system programs named above")
    install_project(session)
    session.run("pytest", "-q", *PYTEST_RUN, *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """The README's Quick start, every block run as written (bash -e) in a new folder: an agent with
    its own venv installs, trains, switches to DQN, runs. The README is the one source of these lines."""
    import shutil
    import sys

    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from readme_blocks import QUICK_START, blocks, script

    session.install("--no-build-isolation", "hatchling", "editables")
    session.install("--no-build-isolation", "-e", "./agentos-core")
    folder = os.path.abspath(os.path.join(session.create_tmp(), "demo"))
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    session.chdir(folder)
    commands = "".join(script(body, language) for language, body in blocks(QUICK_START))
    session.run("bash", "-e", "-x", "-c", commands, external=True)


@nox.session
def publish(session: nox.Session) -> None:
    """Publish agentos-core and every plugin into index/ (unchanged files are no-ops; versions are immutable)."""
    session.install("--no-build-isolation", "hatchling", "editables", "build")
    session.install("--no-build-isolation", "-e", "./agentos-core")
    session.run("agentos", "publish", "--library", "agentos-core", *PLUGINS)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff and import-linter (both pinned): style over every Python file of the project, and the import
    contracts of .importlinter over the sources (no package is installed); `.ci/run` runs it too."""
    session.install(RUFF, IMPORT_LINTER)
    session.run("ruff", "check", "agentos-core", "plugins", "tests", "bench", "tools", "noxfile.py", "mkdocs_hooks.py")
    session.run("lint-imports", "--no-cache", "--no-logo", env={"PYTHONPATH": os.pathsep.join(SOURCES)})


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site (mkdocs.yml, docs/) into site/, strictly: any warning (a broken link, a
    missing page, an API name that does not resolve) fails. The API reference is read from the source
    (griffe, static analysis), so nothing of the project is installed or imported."""
    session.install(*DOCS, RUFF)  # ruff: mkdocstrings formats the signatures with it
    session.run("mkdocs", "build", "--strict", "--site-dir", os.path.join(ROOT, "site"), *session.posargs,
                env={"NO_MKDOCS_2_WARNING": "1"})


#: The speed benchmarks (`nox -s bench`), each with its arguments; tests/test_bench_smoke.py runs every script in
#: bench/ at a smoke size, and checks that each is listed here or in LEARNING_BENCHES.
SPEED_BENCHES = [
    ["bench_startup.py"],
    ["bench_loop.py"],
    ["bench_multiagent_loop.py"],
    ["bench_2048.py"],
    ["bench_ntuple_speed.py"],
    ["bench_ntuple_vs_cpp.py"],
    ["bench_ntuple_options.py"],
    ["bench_registry.py"],
    ["bench_server.py"],
    ["bench_results.py"],
    ["bench_first_results.py"],
    ["bench_train_overhead.py"],
    ["bench_experiments.py", "scaling"],
    ["bench_experiments.py", "overhead"],
    ["bench_tracking.py"],
    ["bench_academy.py"],
    ["bench_hybrid.py"],
    ["bench_sandbox.py"],
    ["bench_verify_upload.py"],
    ["bench_slurm.py", "--start-slurm"],
    ["bench_sb3_speed.py"],
]
#: The learning results (`nox -s bench_learning`, tens of minutes to hours on 2 cores); bench_ntuple_hour tests
#: a run of `agentos train` (--run RUN); bench_results_runs and bench_zoo_results train into a folder: run by hand.
LEARNING_BENCHES = [
    ["bench_corridor_sarsa.py"],
    ["bench_cartpole_sb3.py"],
    ["bench_2048_learning.py"],
    ["bench_ntuple_learning.py"],
    ["bench_ntuple_recipes.py"],
    ["bench_arena.py"],
    ["bench_selfplay.py", "tictactoe"],
    ["bench_pbt.py"],
    ["bench_tune.py", "tune", "--json", "bench/tune_cartpole_ppo.json"],
]
BY_HAND = ["bench_ntuple_hour.py", "bench_results_runs.py", "bench_reproduce_cartpole_ppo.py", "bench_zoo_results.py"]


def run_benches(session: nox.Session, benches: list[list[str]]) -> None:
    """The project and the benches' system programs (redis-server), then each script as listed."""
    import sys

    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import system_packages

    if system_packages.main() != 0:
        session.error("the benches need the system programs named above")
    install_project(session)
    session.install("gymnasium-2048")
    for script, *args in benches:
        session.run("python", os.path.join("bench", script), *args, *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Speed figures for the README and docs/benchmarks.md: every script of SPEED_BENCHES."""
    run_benches(session, SPEED_BENCHES)


@nox.session
def bench_learning(session: nox.Session) -> None:
    """Learning results for the README (tens of minutes to hours on 2 cores): every script of LEARNING_BENCHES."""
    run_benches(session, LEARNING_BENCHES)
