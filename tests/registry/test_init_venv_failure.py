"""A failed ``agentos init --venv`` leaves nothing behind, so the same command can simply be retried.

Before, with no index configured (agentos-core from a wheel, nothing set), init created the agent
folder, exited 2, and the retry was refused ("agent.ini already exists").
"""

from __future__ import annotations


def _env(tmp_path, **extra) -> dict:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    return {"XDG_CONFIG_HOME": str(config), "HOME": str(tmp_path), "AGENTOS_INDEX_URL": "", **extra}


def test_init_venv_without_an_index_writes_nothing_and_the_retry_completes(core_venv, registry_index, tmp_path):
    venv = core_venv("init-retry")
    work = tmp_path / "work"
    work.mkdir()
    failed = venv.agentos("init", "my_agent", "--venv", cwd=work, env=_env(tmp_path))
    assert failed.returncode == 2, failed.stderr
    assert "no package index configured" in failed.stderr and "Traceback" not in failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1, failed.stderr
    assert not (work / "my_agent").exists()

    # an index without agentos-core: the failure comes after the folder was made; it is removed again
    empty = tmp_path / "empty-index"
    empty.mkdir()
    failed = venv.agentos("init", "my_agent", "--venv", cwd=work, env=_env(tmp_path, AGENTOS_INDEX_URL=str(empty)))
    assert failed.returncode != 0 and "Traceback" not in failed.stderr, failed.stderr
    assert not (work / "my_agent").exists()

    # into a folder of the user's: only what init added goes, the user's file stays
    mine = work / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    failed = venv.agentos("init", "mine", "--venv", cwd=work, env=_env(tmp_path, AGENTOS_INDEX_URL=str(empty)))
    assert failed.returncode != 0
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]

    # the valid twin: the same command with an index completes
    ok = venv.agentos("init", "my_agent", "--venv", cwd=work,
                      env=_env(tmp_path, AGENTOS_INDEX_URL=registry_index.as_uri()), timeout=600)
    assert ok.returncode == 0, ok.stderr
    assert (work / "my_agent" / "agent.ini").is_file() and (work / "my_agent" / ".venv").is_dir()
    assert "venv = .venv" in (work / "my_agent" / "agent.ini").read_text()
