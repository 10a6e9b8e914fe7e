"""Issue 8, points 3-11: hostile packages and crashes never corrupt an index (publish side)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import zipfile

import pytest
from agentos.registry import LocalIndex, PublishError, publish, search
from registry.hostile import raw_wheel, wheel_members
from registry.wheelmaker import env_wheel, make_wheel


def test_a_component_name_has_one_owner(tmp_path):  # point 3
    index = tmp_path / "index"
    publish([str(env_wheel(tmp_path / "w", "corridor", "1.0"))], str(index))
    squatter = make_wheel(
        tmp_path / "w",
        "agentos-env-aaa",
        "1.0",
        {"agentos.environment": {"aaa": "agentos_env_aaa:Thing", "Corridor": "agentos_env_aaa:Thing"}},
    )
    with pytest.raises(PublishError, match="'Corridor' belongs to agentos-env-corridor"):
        publish([str(squatter)], str(index))
    assert [r["project"] for r in search("environment", None, str(index))] == ["agentos-env-corridor"]
    assert not (index / "files" / "agentos-env-aaa").exists() and LocalIndex(str(index)).check() == []


def test_a_published_version_keeps_its_core_metadata(tmp_path):  # point 4
    index = tmp_path / "index"
    publish([str(env_wheel(tmp_path / "a", "x", "1.0", summary="the real one"))], str(index))
    evil = env_wheel(tmp_path / "b", "x", "1.0", summary="takeover", tag="py311-none-any", code="import os\n")
    with pytest.raises(PublishError, match="already published with other core metadata"):
        publish([str(evil)], str(index))
    evil_long = env_wheel(tmp_path / "c", "x", "1.0.0", requires=["evil>=1"], summary="the real one")
    with pytest.raises(PublishError, match="1.0 is already published"):  # 1.0.0 is 1.0
        publish([str(evil_long)], str(index))
    same = env_wheel(tmp_path / "d", "x", "1.0", summary="the real one", tag="py311-none-any")
    assert publish([str(same)], str(index))[0]["status"] == "published"  # same release, another tag: fine
    (row,) = search("environment", "x", str(index))
    assert row["description"] == "the real one" and row["versions"] == ["1.0"]


@pytest.mark.parametrize(
    "case, members, message",
    [
        ("no-record", wheel_members("agentos-env-nr", "1.0", record=False), "no agentos_env_nr-1.0.dist-info/RECORD"),
        ("dotdot", {**wheel_members("agentos-env-dd", "1.0"), "../../evil.pth": "import os"}, "unsafe member path"),
        ("absolute", {**wheel_members("agentos-env-ab", "1.0"), "/tmp/evil.pth": "x"}, "unsafe member path"),
    ],
)
def test_malformed_wheels_are_refused(tmp_path, case, members, message):  # point 5
    name = {"no-record": "nr", "dotdot": "dd", "absolute": "ab"}[case]
    wheel = raw_wheel(tmp_path / f"agentos_env_{name}-1.0-py3-none-any.whl", members)
    with pytest.raises(PublishError, match=message):
        publish([str(wheel)], str(tmp_path / "index"))
    assert not (tmp_path / "index" / "files").exists()


@pytest.mark.parametrize("bad", ["any%23", "any#x", "any x", "any?x"])
def test_file_names_outside_the_grammar_are_refused(tmp_path, bad):  # point 5
    good = env_wheel(tmp_path / "w", "g", "1.0")
    renamed = tmp_path / f"agentos_env_g-1.0-py3-none-{bad}.whl"
    shutil.copy(good, renamed)
    with pytest.raises(PublishError, match="not a valid wheel or sdist file name"):
        publish([str(renamed)], str(tmp_path / "index"))


def _zip_bomb(path, size: int):
    """METADATA with a ``size``-byte description (compresses ~1000x), written in chunks."""
    members = wheel_members("agentos-env-bomb", "1.0", metadata_extra="Summary: bomb\n")
    meta = "agentos_env_bomb-1.0.dist-info/METADATA"
    head = members.pop(meta)
    wheel = raw_wheel(path / "agentos_env_bomb-1.0-py3-none-any.whl", members, compress=True)
    with zipfile.ZipFile(wheel, "a", zipfile.ZIP_DEFLATED) as zf, zf.open(meta, "w", force_zip64=True) as f:
        f.write(head.encode() + b"\n")
        for _ in range(size >> 20):
            f.write(b"A" * (1 << 20))
    return wheel


def test_a_zip_bomb_is_refused_in_bounded_memory(tmp_path):  # point 6
    wheel = _zip_bomb(tmp_path, 200 << 20)
    assert wheel.stat().st_size < 1 << 20  # 0.2 MB on disk, 200 MiB of METADATA
    # VmHWM: this process's own peak (getrusage's ru_maxrss keeps the parent's peak across exec)
    code = (
        "import sys\n"
        "from agentos.registry import publish, PublishError\n"
        "try:\n    publish([sys.argv[1]], sys.argv[2])\nexcept PublishError as e:\n    print(e)\n"
        "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM:')][0]\n"
        "print(int(hwm.split()[1]) // 1024)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, wheel, tmp_path / "index"], capture_output=True, text=True)
    message, peak_mib = proc.stdout.splitlines()
    assert "a zip bomb" in message, proc.stderr
    assert int(peak_mib) < 150, peak_mib  # the old reader took 1.7 GB
    assert not (tmp_path / "index" / "files").exists()


def test_metadata_larger_than_the_cap_is_refused_even_when_it_compresses_poorly(tmp_path):  # point 6
    members = wheel_members("agentos-env-big", "1.0")
    meta = "agentos_env_big-1.0.dist-info/METADATA"
    members[meta] = members[meta] + "\n" + os.urandom(3 << 20).hex()  # 6 MiB of hex: ratio ~2
    wheel = raw_wheel(tmp_path / "agentos_env_big-1.0-py3-none-any.whl", members, compress=True)
    with pytest.raises(PublishError, match="METADATA is larger than 4 MiB"):
        publish([str(wheel)], str(tmp_path / "index"))


def test_non_ascii_metadata_publishes_and_reads_back(tmp_path, http_server):  # point 7
    index = tmp_path / "index"
    publish([str(env_wheel(tmp_path / "w", "cafe", "1.0", summary="Café — 2048 ✓"))], str(index))
    server = http_server(index)
    (row,) = search("environment", "cafe", server.url)
    assert row["description"] == "Café — 2048 ✓"
    metadata = (index / "files" / "agentos-env-cafe" / "agentos_env_cafe-1.0-py3-none-any.whl.metadata").read_bytes()
    assert "Café — 2048 ✓".encode() in metadata


def test_control_characters_never_reach_the_terminal(tmp_path):  # point 8
    index = tmp_path / "index"
    summary = "fine\x1b]0;pwned\x07\x1b[2J\x1b[1A\rfake row\x9b31m"
    publish([str(env_wheel(tmp_path / "w", "esc", "1.0", summary=summary))], str(index))
    agentos = os.path.join(os.path.dirname(sys.executable), "agentos")
    proc = subprocess.run([agentos, "search", "esc", "--index-url", str(index)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "esc" in proc.stdout and "fine" in proc.stdout
    assert not any(c in proc.stdout for c in "\x1b\x07\r\x9b"), repr(proc.stdout)


def test_publish_repairs_what_a_crash_left_and_check_sees_it(tmp_path):  # point 9
    index = tmp_path / "index"
    wheels = [str(env_wheel(tmp_path / "w", f"p{i}", "1.0")) for i in range(3)]
    publish(wheels[:1], str(index))
    catalogue = (index / "catalogue.json").read_text()
    root_pages = {p: (index / "simple" / p).read_text() for p in ("index.html", "index.json")}
    publish(wheels[1:], str(index))
    # what a kill -9 between the project pages and the catalogue leaves (the pages of p1, p2 are new)
    (index / "catalogue.json").write_text(catalogue)
    for name, text in root_pages.items():
        (index / "simple" / name).write_text(text)
    problems = LocalIndex(str(index)).check()
    assert any("agentos-env-p1: has a project page but is not in catalogue.json" in p for p in problems), problems
    assert any("agentos-env-p2: missing from the root page" in p for p in problems), problems
    statuses = {r["project"]: r["status"] for r in publish(wheels, str(index))}
    assert statuses == {"agentos-env-p0": "unchanged", "agentos-env-p1": "repaired", "agentos-env-p2": "repaired"}
    assert LocalIndex(str(index)).check() == []
    assert {r["name"] for r in search("environment", None, str(index))} == {"p0", "p1", "p2"}
    assert "agentos-env-p2" in (index / "simple" / "index.html").read_text()


def test_a_killed_publish_heals_on_the_next_publish(tmp_path):  # point 9, with a real kill -9
    index = tmp_path / "index"
    wheels = [str(env_wheel(tmp_path / "w", f"k{i}", "1.0")) for i in range(40)]
    code = "import sys\nfrom agentos.registry import publish\nfor w in sys.argv[2:]:\n    publish([w], sys.argv[1])\n"
    proc = subprocess.Popen([sys.executable, "-c", code, index, *wheels])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (index / "files").is_dir():
        time.sleep(0.01)
    time.sleep(0.2)
    proc.kill()
    proc.wait()
    publish(wheels, str(index))
    assert LocalIndex(str(index)).check() == []
    assert len(search("environment", None, str(index))) == 40


def _rewrite(wheel, code: str):
    """Same file name, other bytes (as a tampered or raced file would be)."""
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info, code if info.filename.endswith("__init__.py") else data)
    os.replace(tmp, wheel)


def test_rebuild_never_blesses_a_tampered_file(tmp_path):  # point 10
    index = tmp_path / "index"
    publish([str(env_wheel(tmp_path / "w", "t", "1.0"))], str(index))
    stored = index / "files" / "agentos-env-t" / "agentos_env_t-1.0-py3-none-any.whl"
    page = (index / "simple" / "agentos-env-t" / "index.json").read_text()
    _rewrite(stored, "import os; os.system('evil')\n")
    with pytest.raises(PublishError, match="agentos_env_t-1.0-py3-none-any.whl no longer matches"):
        LocalIndex(str(index)).rebuild()
    assert (index / "simple" / "agentos-env-t" / "index.json").read_text() == page
    result = LocalIndex(str(index)).rebuild(accept_changes=True)
    assert result["changed"] == ["agentos_env_t-1.0-py3-none-any.whl"] and LocalIndex(str(index)).check() == []


def test_the_stored_file_is_the_hashed_file(tmp_path):  # point 11
    index = tmp_path / "index"
    wheel = env_wheel(tmp_path / "w", "race", "1.0")
    target = LocalIndex(str(index))
    errors = []
    with target.locked():  # the publisher reads its file, then waits here
        thread = threading.Thread(target=lambda: _publish_into(wheel, index, errors))
        thread.start()
        time.sleep(1.0)
        _rewrite(wheel, "changed = True\n")  # the file changes while the publisher waits for the lock
    thread.join(60)
    assert errors == []
    entry = json.loads((index / "simple" / "agentos-env-race" / "index.json").read_text())["files"][0]
    stored = index / "files" / "agentos-env-race" / entry["filename"]
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == entry["hashes"]["sha256"]
    assert LocalIndex(str(index)).check() == []


def _publish_into(wheel, index, errors):
    try:
        publish([str(wheel)], str(index))
    except Exception as exc:  # reported by the test
        errors.append(exc)


class _Zeros:
    """``size`` zero bytes as a file object (tarfile reads a member's data from it)."""

    def __init__(self, size: int):
        self.left = size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        self.left -= n
        return bytes(n)


def _sdist(path, name: str, members: dict[str, bytes], zeros: int = 0):
    import io
    import tarfile

    top = f"{name}-1.0"
    sdist = path / f"{top}.tar.gz"
    with tarfile.open(sdist, "w:gz") as tf:
        if zeros:
            info = tarfile.TarInfo(f"{top}/data.bin")
            info.size = zeros
            tf.addfile(info, _Zeros(zeros))
        for member, data in members.items():
            info = tarfile.TarInfo(f"{top}/{member}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return sdist


_PKG_INFO = b"Metadata-Version: 2.1\nName: agentos-env-tarred\nVersion: 1.0\nSummary: an sdist\n"
_PYPROJECT = b'[project.entry-points."agentos.environment"]\ntarred = "agentos_env_tarred:Env"\n'


def test_an_sdist_publishes_with_its_entry_points(tmp_path):
    sdist = _sdist(tmp_path, "agentos_env_tarred", {"PKG-INFO": _PKG_INFO, "pyproject.toml": _PYPROJECT})
    publish([str(sdist)], str(tmp_path / "index"))
    (hit,) = search("environment", "tarred", (tmp_path / "index").as_uri())
    assert hit["name"] == "tarred" and hit["version"] == "1.0", hit


def test_a_gzip_bomb_sdist_is_refused_before_it_inflates(tmp_path):
    members = {"PKG-INFO": _PKG_INFO, "pyproject.toml": _PYPROJECT}
    sdist = _sdist(tmp_path, "agentos_env_tarred", members, zeros=256 << 20)
    assert sdist.stat().st_size < 1 << 20  # 0.25 MB on disk, 256 MiB inflated
    started = time.perf_counter()
    with pytest.raises(PublishError, match="a gzip bomb"):
        publish([str(sdist)], str(tmp_path / "index"))
    assert time.perf_counter() - started < 5  # stopped at the cap, not after inflating it all
    assert not (tmp_path / "index" / "files").exists()
