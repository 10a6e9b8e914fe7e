"""Installs and uninstalls that meet (issue 9 point 1) or fail (issue 8 point 12); requirements that
pin what the registry hosts (issue 8 point 13, issue 10 points 12-13)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agentos.registry import publish
from registry.hostile import raw_wheel, wheel_members
from registry.test_install import installed, one_line_error, snapshot


def _start(venv, folder, *args) -> subprocess.Popen:
    return subprocess.Popen(
        [str(venv.bin / "agentos"), *map(str, args)],
        cwd=folder, env=venv.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _finish(*procs) -> None:
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, (proc.args, out, err)


def test_two_installs_at_once_keep_both_sections(core_venv, registry_index, tmp_path):
    venv = core_venv("concurrent")
    for attempt in range(4):
        folder = tmp_path / f"agent{attempt}"
        assert venv.agentos("init", folder).returncode == 0
        first = _start(venv, folder, "install", "environment", "2048", "--index-url", registry_index)
        second = _start(venv, folder, "install", "policy", "q_table", "--index-url", registry_index)
        _finish(first, second)
        ini, reqs = (folder / "agent.ini").read_text(), (folder / "requirements.txt").read_text()
        assert "[environment.2048]" in ini and "[policy.q_table]" in ini, (attempt, ini)
        assert "agentos-env-2048 @ " in reqs and "agentos-policy-q-table @ " in reqs, (attempt, reqs)
    # an install and an uninstall at once: both effects remain
    for attempt in range(3):
        folder = tmp_path / f"agent{attempt}"
        first = _start(venv, folder, "uninstall", "policy", "q_table")
        second = _start(venv, folder, "install", "environment", "corridor", "--index-url", registry_index)
        _finish(first, second)
        ini, reqs = (folder / "agent.ini").read_text(), (folder / "requirements.txt").read_text()
        assert "[policy.q_table]" not in ini and "agentos-policy-q-table" not in reqs, (attempt, ini)
        assert "agentos-env-corridor @ " in reqs and "[environment.corridor]" in ini, (attempt, reqs)
        assert venv.agentos("install", "policy", "q_table", "--index-url", registry_index, cwd=folder).returncode == 0


def test_a_failed_pip_leaves_nothing_behind(core_venv, tmp_path):  # issue 8 point 12
    venv = core_venv("pip-fails")
    members = wheel_members("agentos-env-broken", "1.0")
    members["agentos_env_broken/zz/__init__.py"] = ""
    # pip fails half-way: it writes the top-level files, then refuses a .data folder that is no install scheme
    # (a file where a folder goes did the same, but the index now refuses such a wheel itself)
    members["agentos_env_broken-1.0.data/no_scheme/x.txt"] = ""
    info = "agentos_env_broken-1.0.dist-info"
    members[f"{info}/RECORD"] = "".join(f"{m},,\n" for m in members if not m.endswith("RECORD"))
    wheel = raw_wheel(tmp_path / "w" / "agentos_env_broken-1.0-py3-none-any.whl", members)
    publish([str(wheel)], str(tmp_path / "index"))
    folder = tmp_path / "agent"
    assert venv.agentos("init", folder).returncode == 0
    before = snapshot(folder)
    proc = venv.agentos("install", "environment", "broken", "--index-url", tmp_path / "index", cwd=folder)
    message = one_line_error(proc)
    assert "pip failed" in message and "the install was undone" in message, message
    assert snapshot(folder) == before and installed(venv, "agentos-env-broken") is None
    site = Path(venv.run("python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    assert not list(site.glob("agentos_env_broken*")), list(site.glob("agentos_env_broken*"))
    proc = venv.agentos("list", cwd=folder)
    assert "broken" not in proc.stdout


def test_requirements_pin_what_the_registry_hosts(core_venv, registry_index, tmp_path):  # issue 8.13, 10.13
    venv = core_venv("pins")
    env = {"AGENTOS_INDEX_URL": str(registry_index)}
    folder = tmp_path / "other_agent"
    assert venv.agentos("init", folder, env=env).returncode == 0
    ini, reqs = (folder / "agent.ini").read_text(), (folder / "requirements.txt").read_text()
    assert "[agent]\ndefault = other_agent" in ini and "[agent.other_agent]" in ini
    lines = [ln for ln in reqs.splitlines() if ln.strip()]
    assert lines and all(" @ " in ln and "#sha256=" in ln for ln in lines), lines  # agentos-core too
    assert any(ln.startswith("agentos-core @ ") for ln in lines)
    proc = venv.agentos("install", "environment", "2048", cwd=folder, env=env)
    assert proc.returncode == 0, proc.stderr
    proc = venv.run("python", "-m", "pip", "install", "--dry-run", "--no-index", "-r", folder / "requirements.txt")
    assert proc.returncode == 0, proc.stderr  # resolves as written, from the registry's files alone
    proc = venv.agentos("new", "agent", "made", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    made = (tmp_path / "made" / "requirements.txt").read_text()
    assert "agentos-core @ " in made and "#sha256=" in made and "agentos-core>=" not in made


def test_uninstall_never_names_a_default_that_is_not_installed(core_venv, registry_index, tmp_path):  # 10.12
    venv = core_venv("uninstall-default")
    env = {"AGENTOS_INDEX_URL": str(registry_index)}
    folder = tmp_path / "agent"
    assert venv.agentos("init", folder, "--no-install", env=env).returncode == 0  # random: named, not installed
    proc = venv.agentos("install", "policy", "q_table", "--default", cwd=folder, env=env)
    assert proc.returncode == 0, proc.stderr
    proc = venv.agentos("uninstall", "policy", "q_table", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    assert "now random" not in proc.stdout and "no default policy is left" in proc.stdout, proc.stdout
