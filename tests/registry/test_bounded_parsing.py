"""Issue 18, points 7 and 8: parsing is bounded in time (metadata headers) and memory (tar headers)."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from agentos.registry import PublishError, publish, search
from registry.hostile import raw_wheel, wheel_members

AGENTOS = str(Path(sys.executable).parent / "agentos")
_PKG_INFO = b"Metadata-Version: 2.1\nName: agentos-env-tarred\nVersion: 1.0\nSummary: an sdist\n"
_PYPROJECT = b'[project.entry-points."agentos.environment"]\ntarred = "agentos_env_tarred:Env"\n'


def _headers_wheel(folder: Path, name: str, extra: str) -> Path:
    members = wheel_members(name, "1.0", metadata_extra=extra)
    return raw_wheel(folder / f"{name.replace('-', '_')}-1.0-py3-none-any.whl", members, compress=True)


def test_thirty_thousand_headers_are_refused_at_once(tmp_path):  # point 7
    hostile = _headers_wheel(tmp_path / "h", "agentos-env-headers", "".join(f"X-H{i}: v\n" for i in range(30_000)))
    assert hostile.stat().st_size < 400_000
    started = time.perf_counter()
    with pytest.raises(PublishError, match="too many headers"):
        publish([str(hostile)], str(tmp_path / "index"))
    assert time.perf_counter() - started < 3  # the old parser took 75-92 s
    assert not (tmp_path / "index" / "files").exists()
    # the valid twin: a long but ordinary header block (1,500 classifiers, 50 requirements) is accepted
    extra = "".join(f"Classifier: Topic :: T{i}\n" for i in range(1500))
    extra += "".join(f"Requires-Dist: dep{i}>=1\n" for i in range(50))
    twin = _headers_wheel(tmp_path / "t", "agentos-env-headers", extra)
    assert publish([str(twin)], str(tmp_path / "index"))[0]["status"] == "published"


def _long_name_sdist(path: Path, name_bytes: int, padding: int) -> Path:
    """An sdist whose tar holds ``padding`` random bytes, then a GNU long-name header of ``name_bytes``
    (streamed: nothing of that size is ever held or written uncompressed)."""
    top = "agentos_env_tarred-1.0"
    with gzip.open(path, "wb", compresslevel=1) as out:

        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.write(info.tobuf(format=tarfile.GNU_FORMAT))
            out.write(data + b"\0" * (-len(data) % 512))

        add(f"{top}/PKG-INFO", _PKG_INFO)
        add(f"{top}/pyproject.toml", _PYPROJECT)
        add(f"{top}/junk.bin", os.urandom(padding))
        longname = tarfile.TarInfo("././@LongLink")
        longname.type, longname.size = tarfile.GNUTYPE_LONGNAME, name_bytes
        out.write(longname.tobuf(format=tarfile.GNU_FORMAT))
        block = b"a" * (1 << 20)
        for _ in range(name_bytes >> 20):
            out.write(block)
        out.write(b"a" * (name_bytes & ((1 << 20) - 1)) + b"\0" * (-name_bytes % 512))
        out.write(tarfile.TarInfo("x").tobuf(format=tarfile.GNU_FORMAT))
        out.write(b"\0" * 1024)
    return path


def _peak_mib(*cmd) -> tuple[subprocess.CompletedProcess, int]:
    proc = subprocess.run(["/usr/bin/time", "-v", *map(str, cmd)], capture_output=True, text=True, timeout=300)
    line = next(ln for ln in proc.stderr.splitlines() if "Maximum resident set size" in ln)
    return proc, int(line.split(":")[1]) // 1024


def test_a_600_mib_long_name_is_refused_in_bounded_memory(tmp_path):  # point 8
    sdist = _long_name_sdist(tmp_path / "agentos_env_tarred-1.0.tar.gz", 600 << 20, 2 << 20)
    size = sdist.stat().st_size  # about 4.9 MB; 200x that (the gzip cap) is above 600 MiB: the cap does not stop it
    assert size < 6 << 20 and 200 * size > 620 << 20, size
    started = time.perf_counter()
    proc, peak = _peak_mib(AGENTOS, "publish", sdist, "--index", tmp_path / "index")
    elapsed = time.perf_counter() - started
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("agentos:")]
    assert proc.returncode != 0 and len(errors) == 1 and "GNU long name" in errors[0], proc.stderr
    assert peak < 150, peak  # the old reader held the whole name: about 1.9 GB
    print(f"\npeak memory of agentos publish (600 MiB long name, {size} bytes): {peak} MiB, {elapsed:.2f} s")
    # the valid twin: an ordinary long member name (GNU header of 300 bytes) is accepted
    twin = tmp_path / "twin" / "agentos_env_tarred-1.0.tar.gz"
    twin.parent.mkdir()
    with tarfile.open(twin, "w:gz", format=tarfile.GNU_FORMAT) as tf:
        for name, data in {"PKG-INFO": _PKG_INFO, "pyproject.toml": _PYPROJECT, "d/" * 150 + "f.py": b""}.items():
            info = tarfile.TarInfo(f"agentos_env_tarred-1.0/{name}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    publish([str(twin)], str(tmp_path / "index"))
    (hit,) = search("environment", "tarred", (tmp_path / "index").as_uri())
    assert hit["version"] == "1.0"


@pytest.mark.parametrize("size", [100_000, 2_000])
def test_pax_headers_are_capped(tmp_path, size):  # point 8: pax headers, like long names
    sdist = tmp_path / "agentos_env_tarred-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for name, data in {"PKG-INFO": _PKG_INFO, "pyproject.toml": _PYPROJECT}.items():
            info = tarfile.TarInfo(f"agentos_env_tarred-1.0/{name}")
            info.size = len(data)
            info.pax_headers = {"comment": "c" * size}
            tf.addfile(info, io.BytesIO(data))
    if size > 64 << 10:
        with pytest.raises(PublishError, match="pax header of"):
            publish([str(sdist)], str(tmp_path / "index"))
    else:  # the valid twin
        assert publish([str(sdist)], str(tmp_path / "index"))[0]["status"] == "published"
