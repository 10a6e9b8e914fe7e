"""A plugin cannot take the host down: real broken packages, installed with pip into a real venv.

Their imports raise ``SystemExit`` or ``GeneratorExit`` (BaseException, not Exception), or print
to stdout; the host records each as that plugin's error and keeps machine-readable output clean.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from .conftest import wheel_for

BROKEN = {
    "agentos-env-exits": ("agentos.environment", "exits", "agentos_env_exits", "raise SystemExit(3)\n"),
    "agentos-env-quits": ("agentos.environment", "quits", "agentos_env_quits", "raise GeneratorExit('bye')\n"),
    "agentos-policy-chatty": (
        "agentos.policy",
        "chatty",
        "agentos_policy_chatty",
        "import os, sys\nprint('hello from chatty')\nsys.stdout.write('{not json\\n')\n"
        "os.write(1, b'raw fd write\\n')\nos.system('echo from a shell')\n\nclass Chatty:\n    pass\n",
    ),
    "agentos-tracker-dies": ("agentos.plugins", "dies", "agentos_tracker_dies", "raise SystemExit('tracker gone')\n"),
}


@pytest.fixture(scope="module")
def venv(tmp_path_factory, base_site, wheelhouse):
    from .conftest import Venv, build_wheel, write_package

    root = tmp_path_factory.mktemp("broken-src")
    out = tmp_path_factory.mktemp("broken-wheels")
    wheels = []
    for dist, (group, name, module, code) in BROKEN.items():
        obj = "Chatty" if name == "chatty" else ("Env" if group != "agentos.plugins" else "")
        value = f"{module}:{obj}" if obj else module
        project = write_package(
            root, dist, entry_points={group: {name: value}}, modules={f"{module}/__init__.py": code}
        )
        wheels.append(build_wheel(project, out))
    venv = Venv(tmp_path_factory.mktemp("boundary"), base_site, tmp_path_factory.mktemp("boundary-cache"))
    core = wheel_for(wheelhouse, "agentos-core")
    plugins = [wheel_for(wheelhouse, d) for d in ("agentos-env-corridor", "agentos-policy-random")]
    venv.pip_install("--no-deps", core, *plugins, *wheels)
    return venv


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("agentos: error:")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_list_check_json_records_base_exceptions_and_stays_clean(venv, tmp_path):
    result = venv.agentos("list", "--check", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = {r["name"]: r["status"] for r in json.loads(result.stdout)}  # stdout is pure JSON
    assert rows["exits"].startswith("error: SystemExit: 3"), rows
    assert rows["quits"].startswith("error: GeneratorExit: bye"), rows
    assert rows["chatty"] == rows["corridor"] == rows["random"] == "ok"
    for printed in ("hello from chatty", "{not json", "raw fd write", "from a shell"):
        assert printed in result.stderr and printed not in result.stdout
    table = venv.agentos("list", "--check", cwd=tmp_path)
    assert table.returncode == 0 and "SystemExit: 3" in table.stdout and "corridor" in table.stdout


def test_run_with_a_component_that_exits_is_one_line(venv, tmp_path):
    (tmp_path / "agent.ini").write_text(
        "[environment]\ndefault = exits\n[policy]\ndefault = random\n"
        "[environment.exits]\npackage = agentos-env-exits\n[policy.random]\npackage = agentos-policy-random\n"
    )
    result = venv.agentos("run", "--episodes", "1", cwd=tmp_path)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "environment 'exits' (agentos-env-exits 0.1.0) failed to load: SystemExit: 3" in _one_line(result.stderr)


def test_acr_turns_a_base_exception_into_a_lookup_of_that_plugin_only(venv, tmp_path):
    code = """
        import acr
        from agentos.errors import ComponentLoadError
        for name in ("exits", "quits"):
            try:
                acr.environment[name]
            except ComponentLoadError as exc:
                print("refused", name, exc)
        print("still here", type(acr.environment.corridor).__name__)
    """
    result = venv.run("python", "-c", textwrap.dedent(code), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "refused exits" in result.stdout and "SystemExit: 3" in result.stdout
    assert "refused quits" in result.stdout and "GeneratorExit: bye" in result.stdout
    assert "still here" in result.stdout


def test_a_hook_plugin_that_exits_does_not_stop_a_run(venv, tmp_path):
    assert venv.agentos("init", "a", cwd=tmp_path).returncode == 0
    result = venv.agentos("run", "--episodes", "2", "--seed", "0", cwd=tmp_path / "a")
    assert result.returncode == 0, result.stderr
    assert "finished: 2 episodes" in result.stdout
