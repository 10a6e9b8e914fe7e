"""``agentos index rebuild`` of an unchanged index changes nothing: not a byte, not a file's identity.

The committed ``index/`` is what a rebuild of itself writes (so a maintainer's rebuild shows no diff),
and a rebuild rewrites no file whose content it would not change.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from ..conftest import ROOT


def _snapshot(root) -> dict[str, tuple[bytes, int, int]]:
    out = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if name != ".lock":
                st = os.stat(path)
                out[os.path.relpath(path, root)] = (open(path, "rb").read(), st.st_ino, st.st_mtime_ns)
    return out


def _rebuild(index) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "agentos", "index", "rebuild", "--index", str(index)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_rebuilding_the_committed_index_changes_nothing(tmp_path):
    index = tmp_path / "index"
    shutil.copytree(ROOT / "index", index)
    before = _snapshot(index)
    result = _rebuild(index)
    assert result.returncode == 0, result.stderr
    after = _snapshot(index)
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    assert changed == [], changed  # same bytes, same inode, same mtime: nothing was rewritten

    (index / "catalogue.json").write_text((index / "catalogue.json").read_text().replace('"format": 1', '"format":1'))
    assert _rebuild(index).returncode == 0  # hostile twin: a stale catalogue is rewritten...
    repaired = _snapshot(index)
    assert repaired["catalogue.json"][0] == before["catalogue.json"][0]  # ...to the very bytes
    assert all(repaired[p] == after[p] for p in after if p != "catalogue.json")
