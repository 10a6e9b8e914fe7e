"""The README's test command sets up what the tests need; CI runs exactly it, the pinned linter and the docs build.

``nox -s tests`` installs the system programs the tests start (redis-server, Chromium) through
``tests/system_packages.py``; ``.ci/run`` may then add no set-up of its own, or a fresh machine
that follows the README would miss what CI quietly installs.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys

from .conftest import ROOT
from .readme_blocks import blocks

SET_UP = "## Set up (fresh machine, Python 3.11+)"
SCRIPT = (ROOT / "tests" / "system_packages.py").read_text()


def _commands(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_ci_runs_the_readme_test_command_lint_and_docs_and_sets_up_nothing_else():
    readme = [c for _, body in blocks(SET_UP) for c in _commands(body)]
    test_command = next(c for c in readme if c.endswith("nox -s tests"))
    assert test_command == "python3 -m pip install nox && python3 -m nox -s tests"
    ci = [c for c in _commands((ROOT / ".ci" / "run").read_text()) if not c.startswith(("set ", "cd "))]
    assert ci == [test_command, "python3 -m nox -s lint", "python3 -m nox -s docs"], ci  # no apt-get, no pip of its own
    assert not re.search(r"apt-get|apt |pip install", "\n".join(ci[1:]))


def test_nox_tests_session_provisions_before_pytest_and_ruff_is_pinned():
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    session = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "tests")
    source = ast.unparse(session)
    assert source.index("system_packages.main()") < source.index("'pytest'")
    ruff = next(
        n.value.value
        for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "RUFF" and isinstance(n.value, ast.Constant)
    )
    assert re.fullmatch(r"ruff==\d+\.\d+\.\d+", ruff)
    lint = ast.unparse(next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "lint"))
    installed = lint.split("session.install(", 1)[1].split(")")[0]  # the pinned constants, never a bare name
    assert "RUFF" in installed and "'ruff'" not in installed and "'import-linter'" not in installed
    pin = next(n.value.value for n in tree.body if isinstance(n, ast.Assign)
               and getattr(n.targets[0], "id", "") == "IMPORT_LINTER" and isinstance(n.value, ast.Constant))
    assert re.fullmatch(r"import-linter==\d+\.\d+(\.\d+)?", pin) and "IMPORT_LINTER" in installed


def _system_packages(*args: str, user: int | None = None) -> subprocess.CompletedProcess:
    """tests/system_packages.py as a real process (fed on stdin, so another user needs no access to the tree)."""
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user is not None else []
    return subprocess.run(
        [*prefix, sys.executable, "-", *args], input=SCRIPT, capture_output=True, text=True, timeout=60
    )


def test_missing_system_program_as_non_root_is_one_line_naming_the_packages():
    absent = _system_packages("/usr/bin/no-such-redis-server=redis-server", "/usr/bin/env=coreutils", user=65534)
    assert absent.returncode == 1 and absent.stdout == ""
    (line,) = absent.stderr.splitlines()
    assert "redis-server" in line and "apt-get install -y redis-server" in line and "coreutils" not in line
    present = _system_packages("/usr/bin/env=coreutils", user=65534)  # valid twin: nothing to install
    assert (present.returncode, present.stdout, present.stderr) == (0, "", "")
    as_root = _system_packages("/usr/bin/env=coreutils")  # and as root, nothing is installed either
    assert (as_root.returncode, as_root.stdout, as_root.stderr) == (0, "", "")
