"""Issue 20 (publish side): one release cannot inflate the shared files, exhaust memory with members,
or install a second distribution's metadata past the ownership check."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import string
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agentos.registry import PublishError, check_index, publish, rebuild_index, search
from registry.hostile import crowded_wheel, project_page, raw_wheel, wheel_members
from registry.wheelmaker import make_wheel

AGENTOS = str(Path(sys.executable).parent / "agentos")


def _letters(n: int) -> str:
    return "".join(random.Random(n).choices(string.ascii_letters, k=n))


def maximal_release(folder: Path, name: str, version: str) -> Path:
    """A component release at every per-field limit: the most it may add to catalogue.json.

    The summary is astral characters (12 bytes each in catalogue.json, as json escapes them), the
    requirements double quotes (2 bytes each)."""
    requires = [f"d{i}>=1; platform_release != '".ljust(255, '"') + "'" for i in range(64)]  # '"' is 2 bytes in JSON
    kinds = {"agentos.environment": {name: f"agentos_env_{name}:Thing"}}
    kinds["agentos.environment"].update({f"{name}{i}": "m." + "x" * 196 for i in range(1, 4)})
    kinds["console_scripts"] = {f"s{i}" + "y" * 190: "m." + "z" * 196 for i in range(60)}
    return make_wheel(
        folder,
        f"agentos-env-{name}",
        version,
        kinds,
        requires,
        summary="\U0001f600" * 512,
        requires_python=">=3.8" + ",!=3.0.1" * 31,
        description="d" * (1 << 20),
    )


def test_a_huge_summary_is_refused_and_a_maximal_release_adds_little(tmp_path):  # point 1
    index = tmp_path / "index"
    hostile = make_wheel(
        tmp_path / "h", "agentos-env-big", "1.0", {"agentos.environment": {"big": "m:T"}}, summary=_letters(1 << 20)
    )
    assert hostile.stat().st_size < 1 << 20 + 1 << 19  # random letters: no zip-bomb ratio
    with pytest.raises(PublishError, match=r"Summary must be one line of at most 512 characters") as err:
        publish([str(hostile)], str(index))
    assert "\n" not in str(err.value)
    refusals = {
        "65 Requires-Dist entries (at most 64)": {"requires": [f"d{i}" for i in range(65)]},
        "Requires-Dist of 257 characters (at most 256, ASCII)": {"requires": ["d>=1; os_name != '" + "x" * 238 + "'"]},
        "long description (Description) of 1048577 bytes (at most 1 MiB)": {"description": "d" * ((1 << 20) + 1)},
    }
    for message, kw in refusals.items():
        wheel = make_wheel(tmp_path / "r", "agentos-env-big", "1.0", {"agentos.environment": {"big": "m:T"}}, **kw)
        with pytest.raises(PublishError, match=message.replace("(", r"\(").replace(")", r"\)")):
            publish([str(wheel)], str(index))
    many = {"agentos.environment": {"big": "m:T", **{f"b{i}": "m:T" for i in range(4)}}}
    with pytest.raises(PublishError, match=r"5 component entry points \(at most 4\)"):
        publish([str(make_wheel(tmp_path / "c", "agentos-env-big", "1.0", many))], str(index))
    assert not (index / "files").exists()
    # the valid twin, at every limit: accepted; the long description only on its own page
    publish([str(maximal_release(tmp_path / "m", "big", "1.0"))], str(index))
    before = (index / "catalogue.json").stat().st_size
    publish([str(maximal_release(tmp_path / "m", "big", "1.1"))], str(index))
    growth = (index / "catalogue.json").stat().st_size - before
    html = (index / "index.html").read_text()
    assert "d" * 1000 not in (index / "catalogue.json").read_text() and "d" * 1000 not in html
    assert "d" * 1000 in (index / "components" / "environment" / "big.html").read_text()
    assert growth < 160_000, growth  # the old reader added 7.8 MB per release
    print(f"\ncatalogue.json grows {growth} bytes per maximal release ({before} bytes after the first)")
    with pytest.raises(PublishError, match=r"a Requires-Dist of 17 characters \(at most 256, ASCII\)"):
        publish([str(make_wheel(tmp_path / "a", "agentos-env-big", "1.2", requires=["d; os_name != 'é'"]))], str(index))
    (row,) = [r for r in search("environment", "big", str(index)) if r["name"] == "big"]
    assert row["version"] == "1.1" and len(row["description"]) == 512


def test_a_wheel_of_too_many_members_is_refused_before_zipfile_reads_it(tmp_path):  # point 2
    index = tmp_path / "index"
    hostile = crowded_wheel(tmp_path / "h" / "agentos_env_crowd-1.0-py3-none-any.whl", "agentos-env-crowd", 20_000)
    with pytest.raises(PublishError, match=r"members, a central directory of \d+ bytes \(at most 20000 members"):
        publish([str(hostile)], str(index))
    # a record that claims 10 members while its directory holds 30,000: the directory's size stops it
    liar = crowded_wheel(
        tmp_path / "l" / "agentos_env_crowd-1.0-py3-none-any.whl",
        "agentos-env-crowd",
        30_000,
        path_length=120,
        claimed=10,
    )
    started = time.perf_counter()
    proc = subprocess.run([AGENTOS, "publish", liar, "--index", index], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "10 members, a central directory of" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and time.perf_counter() - started < 10
    assert not (index / "files").exists()
    twin = crowded_wheel(tmp_path / "t" / "agentos_env_crowd-1.0-py3-none-any.whl", "agentos-env-crowd", 2_000)
    assert publish([str(twin)], str(index))[0]["status"] == "published"


@pytest.mark.parametrize(
    "member",
    [
        "agentos_env_dd-1.0.data/purelib/zz_fake-1.0.dist-info/entry_points.txt",
        "agentos_env_dd-1.0.data/platlib/zz_fake.egg-info/entry_points.txt",
        "agentos_env_dd/zz_fake-1.0.DIST-INFO/entry_points.txt",
        "zz_fake.egg-info",
    ],
)
def test_a_second_distribution_inside_a_wheel_is_refused(tmp_path, member):  # point 3
    fake = "[agentos.environment]\n2048 = evil:E\n"
    members = wheel_members("agentos-env-dd", "1.0")
    hostile = raw_wheel(tmp_path / "h" / "agentos_env_dd-1.0-py3-none-any.whl", {**members, member: fake})
    with pytest.raises(PublishError, match="would install a second distribution's metadata"):
        publish([str(hostile)], str(tmp_path / "index"))
    twin_members = {**members, "agentos_env_dd-1.0.data/purelib/zz_fake/entry_points.txt": fake}
    twin = raw_wheel(tmp_path / "t" / "agentos_env_dd-1.0-py3-none-any.whl", twin_members)
    assert publish([str(twin)], str(tmp_path / "index"))[0]["status"] == "published"
    catalogue = json.loads((tmp_path / "index" / "catalogue.json").read_text())
    assert [c["name"] for c in catalogue["components"]] == ["dd"]


def test_rebuild_drops_a_release_published_before_the_limits(tmp_path):  # points 1-3, an upgraded index
    index = tmp_path / "index"
    publish(
        [str(make_wheel(tmp_path / "t", "agentos-env-ok", "1.0", {"agentos.environment": {"ok": "m:T"}}))], str(index)
    )
    old = make_wheel(
        tmp_path / "h", "agentos-env-big", "1.0", {"agentos.environment": {"big": "m:T"}}, summary="x" * 600
    )
    (index / "files" / "agentos-env-big").mkdir(parents=True)
    shutil.copy(old, index / "files" / "agentos-env-big" / old.name)  # as an older publish stored it
    project_page(
        index,
        "agentos-env-big",
        [
            {
                "filename": old.name,
                "url": f"../../files/agentos-env-big/{old.name}",
                "hashes": {"sha256": hashlib.sha256(old.read_bytes()).hexdigest()},
            }
        ],
    )
    result = rebuild_index(str(index))
    assert any("Summary must be one line of at most 512 characters" in line for line in result["skipped"]), result
    assert not (index / "simple" / "agentos-env-big").exists() and check_index(str(index)) == []
    assert [r["project"] for r in search("environment", None, str(index))] == ["agentos-env-ok"]
