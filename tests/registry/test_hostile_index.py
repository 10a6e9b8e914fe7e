"""Issue 8, points 1, 2 and 14: an index is untrusted input; publish builds from a path; the user's index."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from agentos.registry import IndexClient, publish
from agentos.registry._client import HashMismatchError, IndexError_
from conftest import write_package
from registry.hostile import project_page
from registry.wheelmaker import env_wheel

AGENTOS = os.path.join(os.path.dirname(sys.executable), "agentos")


def _files_under(folder: Path) -> set[str]:
    return {str(p) for p in folder.rglob("*") if p.is_file()} if folder.exists() else set()


@pytest.mark.parametrize("kind", ["absolute", "dotdot", "bad-hash", "wrong-hash"])
def test_names_and_hashes_from_an_http_index_never_write_outside_the_cache(
    tmp_path, http_server, monkeypatch, kind
):  # point 1
    cache, outside = tmp_path / "cache", tmp_path / "outside"
    monkeypatch.setenv("AGENTOS_CACHE_DIR", str(cache))
    wheel = env_wheel(tmp_path / "w", "evil", "1.0", code="import os\n")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    root = tmp_path / "index"
    (root / "files").mkdir(parents=True)
    (root / "files" / wheel.name).write_bytes(wheel.read_bytes())
    filename = {
        "absolute": str(outside / "agentos_env_evil-1.0-py3-none-any.whl"),
        "dotdot": "../../../../outside/agentos_env_evil-1.0-py3-none-any.whl",
    }.get(kind, wheel.name)
    sha = {"bad-hash": "../../outside/x", "wrong-hash": "0" * 64}.get(kind, digest)
    entry = {"filename": filename, "url": f"../../files/{wheel.name}", "hashes": {"sha256": sha}}
    project_page(root, "agentos-env-evil", [entry])
    server = http_server(root)
    client = IndexClient(server.url)
    (listed,) = client.project_files("agentos-env-evil")
    error = HashMismatchError if kind == "wrong-hash" else IndexError_
    with pytest.raises(error, match="invalid|does not match"):
        client.fetch_file(listed)
    assert not outside.exists()
    assert not any(p.endswith((".whl", ".part")) for p in _files_under(cache)), _files_under(cache)


def test_a_good_file_from_an_http_index_lands_in_the_cache(tmp_path, http_server, monkeypatch):  # point 1
    monkeypatch.setenv("AGENTOS_CACHE_DIR", str(tmp_path / "cache"))
    index = tmp_path / "index"
    publish([str(env_wheel(tmp_path / "w", "good", "1.0"))], str(index))
    client = IndexClient(http_server(index).url)
    path = client.fetch_file(client.project_files("agentos-env-good")[0])
    assert Path(path).is_relative_to(tmp_path / "cache") and Path(path).name == "agentos_env_good-1.0-py3-none-any.whl"


def test_publish_of_a_folder_name_builds_the_local_folder(tmp_path, monkeypatch):  # point 2
    folder = write_package(
        tmp_path,
        "agentos-env-mine",
        entry_points={"agentos.environment": {"mine": "agentos_env_mine:Mine"}},
        modules={"agentos_env_mine/__init__.py": "LOCAL = 'the local folder'\nclass Mine: pass\n"},
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple/")  # any name lookup would fail loudly
    (result,) = publish([folder.name], str(tmp_path / "index"))
    assert result["status"] == "published" and result["project"] == "agentos-env-mine"
    import zipfile

    stored = tmp_path / "index" / "files" / "agentos-env-mine" / result["filename"]
    with zipfile.ZipFile(stored) as zf:
        assert b"the local folder" in zf.read("agentos_env_mine/__init__.py")
    requires = [r.split(";")[0].replace(" ", "") for r in metadata.requires("agentos-core") or []]
    assert any(r.startswith("build") for r in requires), requires  # the build tool is a real dependency


def _agentos(*args, env: dict, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([AGENTOS, *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd)


def test_agentos_config_set_index_url(tmp_path, registry_index):  # point 14 (precedence)
    env = {k: v for k, v in os.environ.items() if k != "AGENTOS_INDEX_URL"}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    proc = _agentos("config", env=env)
    assert proc.returncode == 0 and "index-url: not set" in proc.stdout
    proc = _agentos("config", "set", "index-url", registry_index, env=env)
    assert proc.returncode == 0, proc.stderr
    stored = (tmp_path / "xdg" / "agentos" / "config.ini").read_text()
    assert f"index-url = {registry_index}" in stored
    assert str(registry_index) in _agentos("config", env=env).stdout
    from agentos.registry import resolve_index_url

    os.environ["XDG_CONFIG_HOME"] = env["XDG_CONFIG_HOME"]
    try:
        assert resolve_index_url() == registry_index.as_uri() + "/"  # before the embedded index/
        os.environ["AGENTOS_INDEX_URL"] = str(tmp_path)
        assert resolve_index_url() == tmp_path.as_uri() + "/"  # the environment comes first
        assert resolve_index_url("http://127.0.0.1:1/") == "http://127.0.0.1:1/"
    finally:
        os.environ.pop("XDG_CONFIG_HOME")
        os.environ.pop("AGENTOS_INDEX_URL", None)
    proc = _agentos("config", "set", "colour", "red", env=env)
    assert proc.returncode == 2 and "unknown setting 'colour'" in proc.stderr


def test_a_wheel_install_without_any_index_names_the_config_command(core_venv, registry_index, tmp_path):  # 14
    venv = core_venv("no-index")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "AGENTOS_INDEX_URL": ""}
    proc = venv.agentos("init", tmp_path / "agent", env=env)
    assert proc.returncode == 0, proc.stderr
    proc = venv.agentos("install", "environment", "2048", cwd=tmp_path / "agent", env=env)
    assert proc.returncode == 2 and "agentos config set index-url URL" in proc.stderr, proc.stderr
    assert venv.agentos("config", "set", "index-url", registry_index, env=env).returncode == 0
    proc = venv.agentos("install", "environment", "2048", cwd=tmp_path / "agent", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "agentos-env-2048 @ " in (tmp_path / "agent" / "requirements.txt").read_text()


def test_an_http_index_cannot_point_at_local_files(tmp_path, http_server):  # point 1
    wheel = env_wheel(tmp_path / "w", "local", "1.0")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    root = tmp_path / "index"
    project_page(
        root, "agentos-env-local", [{"filename": wheel.name, "url": wheel.as_uri(), "hashes": {"sha256": digest}}]
    )
    assert IndexClient(http_server(root).url).project_files("agentos-env-local") == []
    assert len(IndexClient(str(root)).project_files("agentos-env-local")) == 1  # a local index may
