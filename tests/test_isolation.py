"""Broken plugins are real packages too: they are listed with their error and never break the host."""

from __future__ import annotations

import json

import pytest

BROKEN = {
    # an entry point whose module fails when imported
    "agentos-policy-crashing": {
        "entry_points": {"agentos.policy": {"crashing": "agentos_policy_crashing:Policy"}},
        "modules": {"agentos_policy_crashing/__init__.py": "raise RuntimeError('boom at import')\n"},
    },
    # an entry point naming a module that the package does not ship
    "agentos-env-missing": {
        "entry_points": {"agentos.environment": {"missing": "no_such_module_xyz:Env"}},
        "modules": {"agentos_env_missing/__init__.py": ""},
    },
    # an entry point naming an attribute that does not exist
    "agentos-policy-wrongattr": {
        "entry_points": {"agentos.policy": {"wrongattr": "agentos_policy_wrongattr:Nope"}},
        "modules": {"agentos_policy_wrongattr/__init__.py": "X = 1\n"},
    },
    # a malformed entry point value
    "agentos-trainer-malformed": {
        "entry_points": {"agentos.trainer": {"malformed": "not a valid:: value"}},
        "modules": {"agentos_trainer_malformed/__init__.py": ""},
    },
}


@pytest.fixture(scope="module")
def broken_venv(tmp_path_factory, base_site, wheelhouse):
    from conftest import Venv, build_wheel, write_package

    root = tmp_path_factory.mktemp("broken-src")
    out = tmp_path_factory.mktemp("broken-wheels")
    wheels = [build_wheel(write_package(root, dist, **spec), out) for dist, spec in BROKEN.items()]
    venv = Venv(tmp_path_factory.mktemp("broken-venv"), base_site, tmp_path_factory.mktemp("broken-cache"))
    venv.pip_install("--no-deps", *sorted(wheelhouse.glob("*.whl")), *wheels)
    return venv


def rows(venv, cwd, *args, env=None):
    result = venv.agentos("list", "--json", *args, cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    return {r["name"]: r for r in json.loads(result.stdout)}


def test_list_reports_each_broken_plugin_and_still_lists_the_good_ones(broken_venv, tmp_path):
    found = rows(broken_venv, tmp_path)
    assert found["corridor"]["status"] == "ok" and found["random"]["status"] == "ok"
    assert "module 'no_such_module_xyz' not found" in found["missing"]["status"]
    assert "malformed entry point" in found["malformed"]["status"]
    checked = rows(broken_venv, tmp_path, "--check")
    assert "RuntimeError: boom at import" in checked["crashing"]["status"]
    assert "AttributeError" in checked["wrongattr"]["status"]
    assert checked["2048"]["status"] == "ok"


def test_a_load_error_is_remembered_by_list(broken_venv, tmp_path):
    env = {"AGENTOS_CACHE_DIR": str(tmp_path / "cache")}
    assert rows(broken_venv, tmp_path, env=env)["crashing"]["status"] == "ok"  # unknown until imported
    code = "import acr\ntry:\n    acr.policy.crashing\nexcept Exception as e:\n    print(type(e).__name__)\n"
    assert broken_venv.run("python", "-c", code, cwd=tmp_path, env=env).stdout.strip() == "ComponentLoadError"
    assert "boom at import" in rows(broken_venv, tmp_path, env=env)["crashing"]["status"]


def test_good_agents_run_beside_broken_plugins(broken_venv, tmp_path):
    broken_venv.agentos("init", "a", cwd=tmp_path)
    result = broken_venv.agentos("run", "-n", "2", cwd=tmp_path / "a")
    assert result.returncode == 0, result.stderr


def test_using_a_broken_component_is_a_one_line_error(broken_venv, tmp_path):
    broken_venv.agentos("init", "a", cwd=tmp_path)
    ini = tmp_path / "a" / "agent.ini"
    ini.write_text(ini.read_text().replace("default = random", "default = crashing"))
    result = broken_venv.agentos("run", "-n", "1", cwd=tmp_path / "a")
    assert result.returncode == 1
    assert (
        "policy 'crashing' (agentos-policy-crashing 0.1.0) failed to load: RuntimeError: boom at import"
        in result.stderr
    )
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_plugins_can_be_disabled_by_environment_variable(broken_venv, tmp_path):
    env = {"AGENTOS_DISABLE_PLUGINS": "agentos-policy-crashing, environment.2048"}
    found = rows(broken_venv, tmp_path, "--check", env=env)
    assert found["crashing"]["status"] == "disabled"
    assert found["2048"]["status"] == "disabled"
    assert found["corridor"]["status"] == "ok"
    code = "import acr\ntry:\n    acr.environment['2048']\nexcept Exception as e:\n    print(e)\n"
    out = broken_venv.run("python", "-c", code, cwd=tmp_path, env=env).stdout
    assert "disabled by AGENTOS_DISABLE_PLUGINS" in out
