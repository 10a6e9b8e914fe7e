"""Issue 18, points 1 and 5: the names an index may serve, and a publish that writes all or nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agentos.registry import LocalIndex, PublishError, check_index, publish, rebuild_index
from agentos.registry._client import IndexClient
from agentos.registry._resolve import find_project
from registry.test_install import agent, installed, one_line_error  # noqa: F401 (the fixture)
from registry.wheelmaker import env_wheel, make_wheel


def _poisoned_index(tmp_path: Path) -> Path:
    """An index as an old server left it: a token holder uploaded ``tabulate 99.0`` (no library record),
    beside a real library of the maintainers (``agentos-lib-ok``, published with --library)."""
    wheels = tmp_path / "wheels"
    index = tmp_path / "index"
    publish([str(make_wheel(wheels, "agentos-lib-ok", "1.0", summary="our library"))], str(index), library=True)
    evil = make_wheel(wheels, "tabulate", "99.0", code="import os\n", summary="not the real tabulate")
    publish([str(evil)], str(index), library=True)
    catalogue = json.loads((index / "catalogue.json").read_text())
    catalogue["projects"]["tabulate"].pop("library", None)  # what an upload through the old server recorded
    (index / "catalogue.json").write_text(json.dumps(catalogue))
    return index


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file() and ".lock" not in p.name}


def test_install_files_and_install_pin_only_names_the_index_owns(tmp_path):  # point 1
    index = _poisoned_index(tmp_path)
    uses = env_wheel(tmp_path / "w2", "uses", "1.0", ["tabulate", "agentos-lib-ok>=1"])
    publish([str(uses)], str(index))
    text = (index / "install" / "agentos-env-uses.txt").read_text()
    assert "agentos-lib-ok @ ${AGENTOS_INDEX_URL}/files/agentos-lib-ok/" in text  # the valid twin: pinned
    assert "tabulate" not in text.split("# Usage")[1]  # the third-party name comes from PyPI
    _, _, hosted = find_project(IndexClient(index.as_uri()), "environment", "uses")
    assert "agentos-lib-ok" in hosted and "agentos-env-uses" in hosted and "tabulate" not in hosted
    assert any("tabulate: served, but this index serves only" in p for p in check_index(str(index)))
    rebuild_index(str(index))  # what the maintainers run after upgrading: the old upload is no longer offered
    assert not (index / "install" / "tabulate.txt").exists() and not (index / "simple" / "tabulate").exists()
    assert check_index(str(index)) == []


def test_rebuild_never_lists_a_third_party_file_lying_in_the_folder(tmp_path):  # point 1
    index = tmp_path / "index"
    wheels = tmp_path / "wheels"
    publish([str(make_wheel(wheels, "agentos-lib-ok", "1.0"))], str(index), library=True)
    publish([str(env_wheel(wheels, "uses", "1.0", ["tabulate", "agentos-lib-ok"]))], str(index))
    dropped = index / "files" / "tabulate"
    dropped.mkdir()
    shutil.copy(make_wheel(wheels, "tabulate", "99.0"), dropped)  # copied in by hand
    result = rebuild_index(str(index))
    assert any(line.startswith("tabulate: not served") for line in result["skipped"]), result
    assert not (index / "simple" / "tabulate").exists()
    assert "tabulate" not in (index / "simple" / "index.json").read_text()
    assert "agentos-lib-ok" in (index / "simple" / "index.json").read_text()  # the library kept its record
    assert "tabulate" not in (index / "install" / "agentos-env-uses.txt").read_text().split("# Usage")[1]
    assert check_index(str(index)) == []


def test_a_third_party_name_is_refused_without_library(tmp_path):  # point 1: locally, one line
    import subprocess
    import sys

    wheel = make_wheel(tmp_path / "w", "tabulate", "99.0")
    agentos = str(Path(sys.executable).parent / "agentos")
    proc = subprocess.run(
        [agentos, "publish", str(wheel), "--index", str(tmp_path / "i")], capture_output=True, text=True
    )
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "--library" in proc.stderr, proc.stderr
    twin = env_wheel(tmp_path / "w", "fine", "1.0")
    proc = subprocess.run(
        [agentos, "publish", str(twin), "--index", str(tmp_path / "i")], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_install_never_takes_a_third_party_name_from_the_index(agent, tmp_path):  # noqa: F811  point 1, real pip
    venv, folder = agent
    index = _poisoned_index(tmp_path)
    publish([str(env_wheel(tmp_path / "w2", "greedy", "1.0", ["tabulate>=99"]))], str(index))
    publish([str(env_wheel(tmp_path / "w2", "modest", "1.0", ["agentos-lib-ok>=1"]))], str(index))
    proc = venv.agentos("install", "environment", "greedy", "--index-url", index, cwd=folder)
    assert "tabulate would come from the registry" in one_line_error(proc)
    assert installed(venv, "tabulate") != "99.0" and installed(venv, "agentos-env-greedy") is None
    proc = venv.agentos("install", "environment", "modest", "--index-url", index, cwd=folder)  # the valid twin
    assert proc.returncode == 0, proc.stderr
    assert installed(venv, "agentos-lib-ok") == "1.0"
    assert "agentos-lib-ok @ " in (folder / "requirements.txt").read_text()


@pytest.mark.parametrize("marker", ['python_version ~= "1"', 'python_version >= "3" and os_name === "x"'])
def test_a_bad_marker_is_refused_before_anything_is_written(tmp_path, marker):  # point 5
    wheels, index = tmp_path / "w", tmp_path / "index"
    publish([str(env_wheel(wheels, "dep", "1.0"))], str(index))
    before = _snapshot(index)
    bad = env_wheel(wheels, "bad", "1.0", [f"agentos-env-dep; {marker}"])
    with pytest.raises(PublishError, match="invalid marker in Requires-Dist") as info:
        publish([str(bad)], str(index))
    assert "\n" not in str(info.value)
    assert _snapshot(index) == before  # nothing written
    assert rebuild_index(str(index))["skipped"] == [] and check_index(str(index)) == []
    twin = env_wheel(tmp_path / "w2", "bad", "1.0", ['agentos-env-dep; python_version >= "3"'])
    assert publish([str(twin)], str(index))[0]["status"] == "published"
    assert "agentos-env-dep @ " in (index / "install" / "agentos-env-bad.txt").read_text()
    assert check_index(str(index)) == []


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/numpy-9.0-py3-none-any.whl", "file:///tmp/agentos_core.whl"])
def test_a_direct_reference_requirement_is_refused_beside_its_named_twin(tmp_path, url):  # point 1
    """``numpy @ http://...`` would make every installer fetch that URL, unpinned and over plain HTTP."""
    wheels, index = tmp_path / "w", tmp_path / "index"
    publish([str(env_wheel(wheels, "seed", "1.0"))], str(index))
    before = _snapshot(index)
    bad = env_wheel(wheels, "urldep", "1.0", [f"numpy @ {url}"])
    with pytest.raises(PublishError, match="direct reference") as info:
        publish([str(bad)], str(index))
    assert "\n" not in str(info.value) and _snapshot(index) == before
    twin = env_wheel(tmp_path / "w2", "urldep", "1.0", ["numpy>=1.24"])
    assert publish([str(twin)], str(index))[0]["status"] == "published"
    assert "numpy @" not in (index / "install" / "agentos-env-urldep.txt").read_text()  # PyPI's, by name


def test_rebuild_is_not_broken_by_one_bad_file(tmp_path):  # point 5
    wheels, index = tmp_path / "w", tmp_path / "index"
    publish(
        [str(env_wheel(wheels, "dep", "1.0")), str(env_wheel(wheels, "ok", "1.0", ["agentos-env-dep"]))], str(index)
    )
    bad = env_wheel(wheels, "bad", "1.0", ['agentos-env-dep; python_version ~= "1"'])
    (index / "files" / "agentos-env-bad").mkdir()
    shutil.copy(bad, index / "files" / "agentos-env-bad")  # as a crashed old publish left it
    result = rebuild_index(str(index))
    assert result["projects"] == 2 and any(s.startswith(bad.name) for s in result["skipped"]), result
    assert check_index(str(index)) == []
    assert LocalIndex(str(index)).load_catalogue()["projects"].keys() == {"agentos-env-dep", "agentos-env-ok"}
