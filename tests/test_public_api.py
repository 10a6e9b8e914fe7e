"""Plugins use only public API: no first-party distribution imports another one's private modules.

Every module of agentos-core and of each plugin (its package and its tests) is read with ``ast``;
an absolute import whose path has a ``_name`` part inside a package of *another* first-party
distribution (``from agentos.core._paths import ...``, ``from agentos_env_2048 import _kernels``)
fails the test. A package's own private modules are its business. Templates are Jinja text, so
their Python files are scanned line by line for the same forms.
"""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def distributions() -> dict[str, tuple[pathlib.Path, set[str]]]:
    """Each first-party distribution's folder and its top-level import packages."""
    found = {}
    for folder in [ROOT / "agentos-core", *sorted((ROOT / "plugins").iterdir())]:
        src = folder / "src"
        if src.is_dir():
            found[folder.name] = (folder, {p.name for p in src.iterdir() if (p / "__init__.py").is_file()})
    return found


def _private_part(module: str, names: list[str]) -> str | None:
    """The private module (or name) that an absolute import of ``module`` (importing ``names``) reaches."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[: i + 1])
    for name in names:
        if name.startswith("_") and not name.startswith("__"):
            return f"{module}.{name}"
    return None


def private_imports(source: str, own: set[str], first_party: set[str]) -> list[str]:
    """``line: module`` for each import in ``source`` of a private part of another first-party package."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            targets = [(node.module, [alias.name for alias in node.names])]
        else:
            continue  # relative imports stay inside their own package
        for module, names in targets:
            top = module.split(".")[0]
            if top in first_party and top not in own:
                private = _private_part(module, names)
                if private:
                    found.append(f"{node.lineno}: {private}")
    return found


IMPORT_TEXT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\s+([\w\s,()]+)|import\s+([\w.]+))", re.M)


def private_imports_in_text(text: str, first_party: set[str]) -> list[str]:
    """The same check for a template (Jinja, not Python until rendered): a generated package owns
    no first-party package, so every first-party private import is refused."""
    found = []
    for match in IMPORT_TEXT.finditer(text):
        module = match.group(1) or match.group(3)
        names = [n.strip() for n in (match.group(2) or "").replace("(", " ").replace(")", " ").split(",")]
        if module.split(".")[0] in first_party:
            private = _private_part(module, [n.split()[0] for n in names if n])
            if private:
                found.append(private)
    return found


def test_no_distribution_imports_another_ones_private_modules():
    dists = distributions()
    first_party = set().union(*(packages for _, packages in dists.values()))
    assert {"agentos", "acr", "agentos_env_2048", "agentos_policy_ntuple", "agentos_academy"} <= first_party
    problems, checked = [], 0
    for folder, own in dists.values():
        for path in sorted([*(folder / "src").rglob("*.py"), *(folder / "tests").rglob("*.py")]):
            checked += 1
            for problem in private_imports(path.read_text(encoding="utf-8"), own, first_party):
                problems.append(f"{path.relative_to(ROOT)}:{problem}")
    for path in sorted((ROOT / "templates").rglob("*.py")):
        checked += 1
        problems += [f"{path.relative_to(ROOT)}: {p}" for p in private_imports_in_text(path.read_text(), first_party)]
    assert checked > 150
    assert not problems, "private modules of another distribution (use the public API):\n" + "\n".join(problems)


#: A private first-party module named in a string (``importlib.import_module("agentos._x")``, code run by
#: ``python -c``): the AST check sees only import statements.
PRIVATE_IN_TEXT = re.compile(r"\b(?:agentos|acr|agentos_[a-z0-9_]+)(?:\.[a-z0-9_]+)*\._[a-z]\w*")


def private_names_in_strings(source: str) -> list[str]:
    """``line: name`` for each string constant of ``source`` that names a first-party private module."""
    found = [(node.lineno, match) for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             for match in PRIVATE_IN_TEXT.findall(node.value)]
    return [f"{line}: {match}" for line, match in sorted(found)]


def test_benchmarks_use_public_names_only():
    """A bench script belongs to no distribution: a private name it imports (at the top, inside a function,
    or in a string it imports or runs) may change in any release and silently break the figure it made."""
    first_party = set().union(*(packages for _, packages in distributions().values()))
    problems, scripts = [], sorted((ROOT / "bench").glob("*.py"))
    for path in scripts:
        source = path.read_text(encoding="utf-8")
        problems += [f"{path.name}:{p}" for p in private_imports(source, set(), first_party)]
        problems += [f"{path.name}:{p}" for p in private_names_in_strings(source)]
    assert len(scripts) > 20
    assert not problems, "bench scripts use private names (make them public, documented):\n" + "\n".join(problems)


def test_the_string_check_finds_private_modules_and_passes_their_public_twins():
    hostile = 'importlib.import_module("agentos_trainer_td._td")\ncode = "from agentos.results._weights import x"\n'
    assert private_names_in_strings(hostile) == ["1: agentos_trainer_td._td", "2: agentos.results._weights"]
    valid = 'importlib.import_module("agentos_trainer_td.kernels")\ncode = "from agentos.results import quantize"\n'
    assert private_names_in_strings(valid) == []


FIRST_PARTY = {"agentos", "acr", "agentos_env_2048", "agentos_policy_ntuple"}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from agentos.core._paths import agent_ini_path\n", ["1: agentos.core._paths"]),
        ("import agentos.learning._records as records\n", ["1: agentos.learning._records"]),
        ("from agentos_env_2048 import _kernels as k\n", ["1: agentos_env_2048._kernels"]),
        ("def f():\n    from agentos_env_2048._jit import njit\n", ["2: agentos_env_2048._jit"]),
        # the valid twins: public names, a package's own private modules, relative and third-party imports
        ("from agentos.plugin_api import agent_ini_path, RunRecord\n", []),
        ("from agentos_env_2048.kernels import move, njit\nimport agentos.experiments\n", []),
        ("from agentos_policy_ntuple._network import value\nfrom ._policy import NTuplePolicy\n", []),
        ("from agentos import __version__\nfrom numpy import _NoValue\n", []),
    ],
)
def test_the_check_refuses_private_imports_and_accepts_their_public_twins(source, expected):
    assert private_imports(source, {"agentos_policy_ntuple"}, FIRST_PARTY) == expected


def test_the_template_check_reads_jinja_text():
    hostile = ("import os\nfrom agentos.core._paths import (agent_ini_path)\n"
               "from {{ cookiecutter.module_name }} import x\n")
    assert private_imports_in_text(hostile, FIRST_PARTY) == ["agentos.core._paths"]
    valid = "from agentos import Policy\nfrom agentos.testing import PolicyConformance, ReferenceEnv\n"
    assert private_imports_in_text(valid, FIRST_PARTY) == []


def test_the_public_modules_export_what_they_list_and_stay_light():
    code = """
import sys
import agentos.plugin_api as api
from agentos.experiments import JobQueueExecutor, job_script
from agentos.tuning import tune, read_search, best_trials, export_agent_ini, plot_study
light = sorted(m for m in ("numba", "torch", "gymnasium", "dask", "dask_jobqueue", "academy", "optuna", "matplotlib")
               if m in sys.modules)
from agentos.plugin_api import RunRecord, agent_ini_path, find_agent_ini, AGENT_INI_ENV
from agentos.experiments import DaskExecutor, ProcessPool, process_pool, agent_ini_text, load_preset
import agentos_env_2048.kernels as kernels
import agentos_policy_ntuple.network as network
import agentos_trainer_td.kernels as td_kernels
import agentos_academy, agentos.results, agentos.registry
import agentos.tuning as tuning
for module in (api, kernels, network, td_kernels, agentos_academy, agentos.results, agentos.registry, tuning):
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing, (module.__name__, missing)
board = kernels.board_from_cells([[1, 1, 0, 0], [0] * 4, [0] * 4, [0] * 4])
after, points = kernels.move(board, 3, kernels.move_tables())
assert kernels.cells_from_board(after)[0].tolist() == [2, 0, 0, 0] and int(points) == 4
layout = network.make_layout(network.DEFAULT_TUPLES)
import numpy as np
net = network.network(np.zeros(layout.size, np.float32), layout)
network.add(after, 1.5, net)  # every weight the board reads (8 symmetries x 4 tuples) moves by 1.5 per read
read = np.empty(8 * len(network.DEFAULT_TUPLES), np.int64)
network.weight_indices(after, net, read)
counts = np.unique(read, return_counts=True)[1]
assert abs(network.value(after, net) - 1.5 * float((counts ** 2).sum())) < 1e-3
print(light)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_import_contracts_cover_every_first_party_package():
    """A new plugin joins .importlinter (root packages, distributions, acyclic ancestors), so that
    `nox -s lint` checks it too."""
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    dists = distributions()
    packages = sorted(set().union(*(own for _, own in dists.values())))
    assert sorted(config["importlinter"]["root_packages"].split()) == packages
    assert sorted(config["importlinter:contract:acyclic"]["ancestors"].split()) == packages
    lines = config["importlinter:contract:public-api"]["distributions"].splitlines()
    listed = sorted(sorted(line.split()) for line in lines if line.strip())
    assert listed == sorted(sorted(own) for _, own in dists.values())
