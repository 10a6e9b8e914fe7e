"""``agentos new``: every template rendered by the CLI (from a non-editable wheel) and by the
cookiecutter library, installed with real pip, and its generated tests run in a subprocess."""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentos import api
from agentos.errors import UsageError
from authoring._helpers import TEMPLATES, run_pytest
from conftest import wheel_for

#: name -> (``agentos new`` arguments, template, the cookiecutter context those arguments mean)
CASES = {
    "my_env": (["environment", "my_env"], "environment", {"name": "my_env"}),
    "my_policy": (["policy", "my_policy"], "policy", {"name": "my_policy"}),
    "my_trainer": (
        ["trainer", "my_trainer", "--description", "REINFORCE for everyone"],
        "trainer",
        {"name": "my_trainer", "description": "REINFORCE for everyone"},
    ),
    "my_agent": (["agent", "my_agent", "--package"], "agent-package", {"name": "my_agent"}),
    "sb3_agent": (
        ["agent", "sb3_agent", "--policy", "sb3_ppo", "--environment", "cartpole"],
        "agent",
        {
            "name": "sb3_agent",
            "flavour": "sb3",
            "algorithm": "PPO",
            "device": "auto",
            "environment": "CartPole-v1",
            "environment_source": "gymnasium",
        },
    ),
    "torch_agent": (
        ["agent", "torch_agent", "--policy", "torch", "--environment", "corridor", "--device", "cpu"],
        "agent",
        {
            "name": "torch_agent",
            "flavour": "torch",
            "algorithm": "PPO",
            "device": "cpu",
            "environment": "corridor",
            "environment_source": "component",
            "environment_package": "agentos-env-corridor",
        },
    ),
}
FOLDERS = {
    "my_env": "agentos-env-my-env",
    "my_policy": "agentos-policy-my-policy",
    "my_trainer": "agentos-trainer-my-trainer",
    "my_agent": "agentos-agent-my-agent",
    "sb3_agent": "sb3_agent",
    "torch_agent": "torch_agent",
}
PACKAGES = ["my_env", "my_policy", "my_trainer", "my_agent"]


@pytest.fixture(scope="session")
def authoring_venv(core_venv, wheelhouse):
    """The core venv plus the corridor, which the torch agent directory uses."""
    core_venv.pip_install("--no-deps", wheel_for(wheelhouse, "agentos-env-corridor"))
    return core_venv


@pytest.fixture(scope="session")
def rendered(tmp_path_factory, authoring_venv) -> dict[str, Path]:
    """Every case rendered with the ``agentos`` command of the venv (agentos-core from its wheel)."""
    out = tmp_path_factory.mktemp("rendered")
    folders = {}
    for name, (args, _, _) in CASES.items():
        result = authoring_venv.agentos("new", *args, cwd=out)
        assert result.returncode == 0, result.stderr
        assert f"in {FOLDERS[name]}/" in result.stdout
        folders[name] = out / FOLDERS[name]
    return folders


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_templates_come_from_the_installed_wheel(authoring_venv):
    code = "from agentos.authoring._new import templates_dir; print(templates_dir())"
    where = authoring_venv.run("python", "-c", code, check=True).stdout.strip()
    assert where.startswith(str(authoring_venv.path)) and where.endswith(os.path.join("agentos", "templates"))


@pytest.mark.parametrize("name", CASES)
def test_cookiecutter_library_renders_the_same(name, rendered, authoring_venv, tmp_path):
    """cookiecutter makes the same files as ``agentos new``; for agent directories, ``agentos new``
    then pins the registry-hosted requirements (as :func:`pin_hosted` does for any file)."""
    from cookiecutter.main import cookiecutter

    _, template, context = CASES[name]
    config = {"replay_dir": str(tmp_path / "replay"), "cookiecutters_dir": str(tmp_path / "cc")}
    out = Path(
        cookiecutter(
            str(TEMPLATES / template),
            no_input=True,
            extra_context=context,
            output_dir=str(tmp_path),
            default_config=config,
        )
    )
    assert out.name == FOLDERS[name]
    assert tree(out) == tree(rendered[name])
    requirements = out / "requirements.txt"
    if requirements.exists():
        assert "agentos-core @ " not in requirements.read_text()  # the template's own lines are plain
        pin = f"from agentos.registry._requirements import pin_hosted; pin_hosted({str(requirements)!r})"
        authoring_venv.run("python", "-c", pin, check=True, cwd=str(rendered[name]))
    match, mismatch, errors = filecmp.cmpfiles(out, rendered[name], tree(out), shallow=False)
    assert not mismatch and not errors


@pytest.mark.parametrize("name", CASES)
def test_rendered_code_passes_ruff(name, rendered):
    for args in (["check", "--no-cache"], ["format", "--check", "--no-cache"]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *args, "."], cwd=rendered[name], capture_output=True, text=True
        )
        assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", PACKAGES)
def test_generated_package_installs_and_its_tests_pass(name, rendered, authoring_venv):
    kind = CASES[name][0][0]
    authoring_venv.pip_install("--no-build-isolation", rendered[name])  # real pip, real dependencies
    listed = authoring_venv.agentos("list", "--kind", kind, "--json", check=True)
    assert {"name": name, "package": FOLDERS[name], "status": "ok"}.items() <= next(
        row for row in json.loads(listed.stdout) if row["name"] == name
    ).items()
    result = run_pytest(authoring_venv, rendered[name])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "failed" not in result.stdout


@pytest.mark.parametrize("name", ["sb3_agent", "torch_agent"])
def test_generated_agent_directory_tests_pass_and_it_runs(name, rendered, authoring_venv):
    result = run_pytest(authoring_venv, rendered[name])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    run = authoring_venv.agentos("run", "agent.ini", "--episodes", "2", "--seed", "0", cwd=rendered[name])
    assert run.returncode == 0 and "2 episodes" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize(
    "name",
    ["", "my policy", "-policy", "policy-", "pol/icy", "pöl", "agentos-policy-x", "agentos_env_y"],
)
def test_invalid_names_are_refused(name, tmp_path):
    with pytest.raises(UsageError):
        api.new("policy", name, output_dir=str(tmp_path))
    assert not any(tmp_path.iterdir())


def test_existing_folder_is_never_overwritten(tmp_path):
    existing = tmp_path / "agentos-env-taken"
    existing.mkdir()
    (existing / "mine.txt").write_text("keep me")
    with pytest.raises(UsageError, match="already exists"):
        api.new("env", "taken", output_dir=str(tmp_path))
    with pytest.raises(UsageError, match="already exists"):
        api.new("environment", "Taken", output_dir=str(tmp_path))  # the same distribution
    assert [p.name for p in existing.iterdir()] == ["mine.txt"]


def test_bad_options_are_clear_errors(tmp_path):
    cases = {
        ("policy", "p"): ({"environment": "corridor"}, "for agent directories"),
        ("agent", "a"): ({"policy": "q_tablee"}, "unknown --policy"),
        ("agent", "b"): ({"environment": "no_such_env"}, "unknown environment"),
        ("agent", "c"): ({"device": "gpu"}, "invalid device"),
        ("widget", "w"): ({}, "unknown kind"),
        ("policy", "d"): ({"description": 'a "quoted" text'}, "without quotes"),
    }
    for (kind, name), (options, message) in cases.items():
        with pytest.raises(UsageError, match=message):
            api.new(kind, name, output_dir=str(tmp_path), **options)
    assert not any(tmp_path.iterdir())


def test_cli_errors_are_one_line(tmp_path):
    agentos = Path(sys.executable).with_name("agentos")
    (tmp_path / "agentos-policy-x").mkdir()
    for args in (["policy", "bad name"], ["policy", "x"]):
        result = subprocess.run([agentos, "new", *args], cwd=tmp_path, capture_output=True, text=True)
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("agentos: error: ")


def test_new_does_not_slow_down_the_cli():
    code = "import sys, agentos.cli as c; c.build_parser(); print(sorted({'cookiecutter', 'jinja2'} & {*sys.modules}))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_wheel_built_from_the_sdist_carries_the_templates(tmp_path):
    import zipfile

    from conftest import CORE_DIR

    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", tmp_path, CORE_DIR],
        check=True,
        capture_output=True,
        text=True,
    )  # python -m build makes the sdist, then the wheel from it
    (wheel,) = tmp_path.glob("agentos_core-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for template in ("environment", "policy", "trainer", "agent-package", "agent"):
        assert f"agentos/templates/{template}/cookiecutter.json" in names
