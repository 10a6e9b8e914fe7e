"""Issue 18 against a real ``agentos index serve``: names (1), all-or-nothing uploads (5), owners after a
crash and the maintainer's owner and token commands (6), and bounded parsing outside the lock (7)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

from agentos.registry import check_index
from agentos.registry._lock import folder_lock
from registry.hostile import raw_wheel, wheel_members
from registry.wheelmaker import env_wheel, make_wheel
from server.conftest import AGENTOS, Server


def _refusal(result: subprocess.CompletedProcess, code: str) -> str:
    out = result.stdout + result.stderr
    assert result.returncode != 0 and code in out, out
    return out


def _post(url: str, token: str, path) -> tuple[int, str]:
    """The upload API without twine, to read the one-line answer."""
    import httpx

    data = {":action": "file_upload", "protocol_version": "1"}
    with open(path, "rb") as f:
        files = {"content": (path.name, f, "application/octet-stream")}
        reply = httpx.post(f"{url}/legacy/", data=data, files=files, auth=("__token__", token), timeout=60)
    return reply.status_code, reply.text


def _agentos(*args) -> subprocess.CompletedProcess:
    return subprocess.run([AGENTOS, *map(str, args)], capture_output=True, text=True, timeout=60)


def test_a_third_party_name_is_403_and_a_bad_marker_400(server, twine, tmp_path):  # points 1 and 5
    token = server.token("mallory")
    evil = make_wheel(tmp_path / "w", "tabulate", "99.0", summary="not the real tabulate")
    _refusal(twine(server.url, token, evil), "403")
    status, text = _post(server.url, token, evil)
    assert status == 403 and text.count("\n") == 1, text
    assert "tabulate: this index serves only components named agentos-<kind>-<name>" in text
    assert (
        not (server.root / "files" / "tabulate").exists()
        and "tabulate" not in (server.root / "catalogue.json").read_text()
    )
    bad = env_wheel(tmp_path / "b", "claimed", "1.0", ['agentos-env-seed; python_version ~= "1"'])
    before = sorted(str(p) for p in server.root.rglob("*") if ".access" not in p.name and ".lock" not in p.name)
    _refusal(twine(server.url, token, bad), "400")
    status, text = _post(server.url, token, bad)
    assert status == 400 and text.count("\n") == 1 and "invalid marker in Requires-Dist" in text, text
    after = sorted(str(p) for p in server.root.rglob("*") if ".access" not in p.name and ".lock" not in p.name)
    assert [p for p in after if ".staging" not in p and ".incoming" not in p] == [
        p for p in before if ".staging" not in p and ".incoming" not in p
    ]
    # the name is not locked: another owner's valid twin is published, and the index still rebuilds
    twin = env_wheel(tmp_path / "t", "claimed", "1.0", ['agentos-env-seed; python_version >= "3"'])
    done = twine(server.url, server.token("alice"), twin)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _agentos("index", "rebuild", "--index", server.root).returncode == 0
    assert check_index(str(server.root)) == []


_CRASH = """
import os, sys
import agentos.registry._site as site
site.write_project_pages = lambda *a, **k: os.kill(os.getpid(), 9)  # killed after the files, before the commit
from agentos.registry import publish_files
publish_files([sys.argv[1]], sys.argv[2], owner="alice")
"""


def test_a_crashed_upload_is_completed_by_its_owner_and_owners_can_be_reassigned(seeded_index, tmp_path, twine):  # 6
    root = seeded_index
    alice_token = _agentos("index", "token", "create", "--index", root, "--owner", "alice").stdout.strip()
    bob_token = _agentos("index", "token", "create", "--index", root, "--owner", "bob").stdout.strip()
    wheel = env_wheel(tmp_path / "w", "crashed", "1.0")
    crash = subprocess.run([sys.executable, "-c", _CRASH, wheel, root], capture_output=True, text=True, timeout=60)
    assert crash.returncode == -9, crash.stderr
    assert (root / "files" / "agentos-env-crashed" / wheel.name).exists()  # half-published
    assert "agentos-env-crashed" not in json.loads((root / "catalogue.json").read_text())["projects"]
    shown = _agentos("index", "owner", "--index", root).stdout
    assert "agentos-env-crashed  alice (unfinished upload" in shown and "agentos-env-seed  (maintainers)" in shown

    server = Server(root, tmp_path / "server.log")
    try:
        _refusal(twine(server.url, bob_token, wheel), "403")  # the name is not bob's to take
        done = twine(server.url, alice_token, wheel)  # the same file by the same owner completes it
        assert done.returncode == 0, done.stdout + done.stderr
        catalogue = json.loads((root / "catalogue.json").read_text())
        assert catalogue["projects"]["agentos-env-crashed"]["owner"] == "alice"
        assert check_index(str(root)) == []
        repeat = twine(server.url, alice_token, wheel)  # now it is a plain repeat: a no-op, as a local publish
        assert repeat.returncode == 0 and check_index(str(root)) == [], repeat.stdout + repeat.stderr

        moved = _agentos("index", "owner", "agentos-env-crashed", "--set", "bob", "--index", root)
        assert moved.returncode == 0 and "agentos-env-crashed  bob" in moved.stdout, moved.stderr
        _refusal(twine(server.url, alice_token, env_wheel(tmp_path / "a", "crashed", "1.1")), "403")
        done = twine(server.url, bob_token, env_wheel(tmp_path / "b", "crashed", "1.2"))
        assert done.returncode == 0, done.stdout + done.stderr

        listed = _agentos("index", "token", "list", "--index", root).stdout.splitlines()
        ids = {line.split()[1]: line.split()[0] for line in listed}
        assert set(ids) == {"alice", "bob"} and alice_token not in "".join(listed)
        assert _agentos("index", "token", "revoke", ids["bob"], "--index", root).returncode == 0
        _refusal(twine(server.url, bob_token, env_wheel(tmp_path / "c", "crashed", "1.3")), "403")
        done = twine(server.url, alice_token, env_wheel(tmp_path / "d", "other", "1.0"))  # alice's token still works
        assert done.returncode == 0, done.stdout + done.stderr
    finally:
        server.stop()
    bad = _agentos("index", "owner", "agentos-env-crashed", "--set", "no such owner!", "--index", root)
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_thirty_thousand_headers_are_refused_quickly_without_the_index_lock(server, twine, tmp_path):  # point 7
    token = server.token("mallory")
    members = wheel_members("agentos-env-headers", "1.0", "".join(f"X-H{i}: v\n" for i in range(30_000)))
    hostile = raw_wheel(tmp_path / "h" / "agentos_env_headers-1.0-py3-none-any.whl", members, compress=True)
    held = threading.Event()
    release = threading.Event()

    def hold():  # another publisher holds the index lock for the whole upload
        with folder_lock(str(server.root)):
            held.set()
            release.wait(60)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    try:
        started = time.perf_counter()
        status, text = _post(server.url, token, hostile)
        elapsed = time.perf_counter() - started
    finally:
        release.set()
        holder.join()
    assert status == 400 and "too many headers" in text, text
    assert elapsed < 5, elapsed  # the old server took 75-92 s
    print(f"\nupload of the 30,000-header wheel ({hostile.stat().st_size} bytes) refused in {elapsed:.2f} s")
    twin = env_wheel(tmp_path / "t", "headers", "1.0")
    done = twine(server.url, token, twin)
    assert done.returncode == 0, done.stdout + done.stderr
