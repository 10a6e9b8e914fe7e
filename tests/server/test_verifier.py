"""Verified by default: ``agentos index serve`` re-runs every uploaded claim in the background.

The slow half plays real packages: a q_table trained with sarsa on corridor (the fixture of
tests/registry/test_index_verify.py), uploaded with twine to a real server, re-run in a fresh venv
with no maintainer command; a claim whose package cannot play becomes ``unverifiable`` with the
reason, and the server verifies the next upload. The fast half uses claims whose record no longer
matches the catalogue (``agentos index verify`` refuses them at once): the queue's bound, a restart
that queues ``pending`` releases again, and ``agentos index verify --all``'s exit codes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agentos.registry import publish
from agentos.registry._verify_queue import mark_pending
from conftest import wheel_for
from registry.results_maker import policy_wheel, record
from registry.test_index_verify import PLUGINS, _doctored, trained  # noqa: F401  (the module's fixture)
from server.conftest import Server

STEADY = [4.0, 5.0, 6.0, 5.0] * 3


def _statuses(index: Path, board: str) -> dict[str, str]:
    entries = json.loads((index / "leaderboards" / f"{board}.json").read_text())["entries"]
    return {e["component"]: e["status"] for e in entries}


def _catalogue_results(index: Path, project: str, version: str) -> dict:
    catalogue = json.loads((index / "catalogue.json").read_text())
    return catalogue["projects"][project]["releases"][version]["results"]


def _wait(check, seconds: float):
    """Poll ``check()`` until it returns something true; bounded."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def _board_status(server: Server, board: str, component: str) -> str | None:
    import urllib.request

    with urllib.request.urlopen(f"{server.url}/leaderboards/{board}.json", timeout=5) as response:
        entries = json.loads(response.read())["entries"]
    return next((e["status"] for e in entries if e["component"] == component), None)


def _fake_claims(index: Path, folder: Path, names: list[str], *, stale: bool) -> None:
    """Claims on the seed environment; ``stale``: their record files changed after publishing, so that
    ``agentos index verify`` refuses them at once (a claim that cannot be re-run)."""
    wheels = [policy_wheel(folder, n, "1.0", record(STEADY, environment="seed", policy=n)) for n in names]
    publish([str(w) for w in wheels], str(index))
    if stale:
        for n in names:
            path = index / _catalogue_results(index, f"agentos-policy-{n}", "1.0")["record"]
            path.write_text(path.read_text().replace('"episodes"', '"episodes" '))


def test_an_upload_is_verified_without_a_maintainer_and_a_failing_one_is_unverifiable(
    trained, wheelhouse, twine, tmp_path  # noqa: F811
):
    _, _, walker = trained
    index = tmp_path / "index"
    publish([str(wheel_for(wheelhouse, d)) for d in ["agentos-core", *PLUGINS]], str(index), library=True)
    with __import__("zipfile").ZipFile(walker) as zf:
        environment = json.loads(zf.read("agentos_policy_walker/results.json"))["environment"]
    broken = policy_wheel(  # its policy does not load in the fresh venv: the re-run fails
        tmp_path / "b", "broken", "1.0", {**record([-9.0] * 10, policy="broken"), "environment": environment},
        code="raise ImportError('no weights here')\n",
    )  # fmt: skip
    server = Server(index, tmp_path / "server.log", "--verify-workers", "1", "--verify-timeout", "600")
    try:
        token = server.token("dora")
        assert twine(server.url, token, broken).returncode == 0
        assert twine(server.url, token, walker).returncode == 0
        # both wait in order (one verification at a time): the queue is the catalogue's status
        assert _board_status(server, "corridor", "broken") in ("pending", "claimed")
        unverifiable = _wait(lambda: _board_status(server, "corridor", "broken") == "unverifiable", 300)
        assert unverifiable, server.log.read_text()[-3000:]
        check = _catalogue_results(index, "agentos-policy-broken", "1.0")["verification"]
        assert check["status"] == "unverifiable" and check["reason"], check
        verified = _wait(lambda: _board_status(server, "corridor", "walker") == "verified", 300)
        assert verified, server.log.read_text()[-3000:]  # the server still verifies the next upload
        assert _catalogue_results(index, "agentos-policy-walker", "1.0.0")["verification"]["status"] == "verified"
        page = (index / "leaderboards" / "corridor.html").read_text()
        assert '<span class="verified">verified</span>' in page and "unverifiable" in page
    finally:
        server.stop()


def test_verify_all_on_a_static_index_has_distinct_exit_codes(trained, wheelhouse, tmp_path):  # noqa: F811
    _, home, walker = trained
    index = tmp_path / "index"
    publish([str(wheel_for(wheelhouse, d)) for d in ["agentos-core", *PLUGINS]], str(index), library=True)
    publish([str(_doctored(walker, tmp_path / "d", "1.0.1", 8.0))], str(index))

    def verify_all(*args, project=()):
        cmd = [sys.executable, "-m", "agentos", "index", "verify", *project, "--all", "--index", str(index), *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=home)

    flagged = verify_all()
    assert flagged.returncode == 1, flagged.stderr
    assert flagged.stdout.startswith("flagged: agentos-policy-walker 1.0.1: the claim is above")
    assert _statuses(index, "corridor") == {"walker": "flagged"}
    nothing = verify_all()
    assert nothing.returncode == 0 and nothing.stdout.startswith("nothing to verify"), nothing.stderr

    _fake_claims(index, tmp_path / "w", ["stale"], stale=True)
    failed = verify_all()
    assert failed.returncode == 3, failed.stderr
    assert failed.stdout.startswith("unverifiable: agentos-policy-stale 1.0: ")
    assert "does not match the catalogue" in failed.stdout
    assert _statuses(index, "seed") == {"stale": "unverifiable"}
    for args, project, message in [((), ("walker",), "name no project"), (("--episodes", "9"), (), "as published")]:
        refused = verify_all(*args, project=project)
        assert refused.returncode == 2 and message in refused.stderr and "Traceback" not in refused.stderr
    again = subprocess.run(  # --again without --all: a usage error, nothing run
        [sys.executable, "-m", "agentos", "index", "verify", "--again", "--index", str(index)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert again.returncode == 2 and "--again goes with --all" in again.stderr


def test_the_queue_does_not_grow_past_its_bound(seeded_index, tmp_path):
    _fake_claims(seeded_index, tmp_path / "w", ["a", "b", "c", "d"], stale=False)
    first = mark_pending(str(seeded_index), max_pending=2)
    assert len(first) == 2
    assert mark_pending(str(seeded_index), max_pending=2) == first  # the same two, deduplicated
    statuses = _statuses(seeded_index, "seed")
    assert sorted(statuses.values()) == ["claimed", "claimed", "pending", "pending"]
    assert len(mark_pending(str(seeded_index), max_pending=10, per_owner=3)) == 3  # one owner: 3 at most
    assert len(mark_pending(str(seeded_index), max_pending=10)) == 4  # room: the rest are queued


def test_a_restart_queues_pending_releases_again_and_serves_meanwhile(seeded_index, tmp_path):
    _fake_claims(seeded_index, tmp_path / "w", ["early", "later"], stale=True)
    mark_pending(str(seeded_index), max_pending=1)  # a server stopped with early pending, later waiting
    assert _statuses(seeded_index, "seed") == {"early": "pending", "later": "claimed"}
    server = Server(seeded_index, tmp_path / "server.log", "--verify-workers", "1", "--verify-timeout", "60")
    try:
        done = _wait(lambda: set(_statuses(seeded_index, "seed").values()) == {"unverifiable"}, 60)
        assert done, server.log.read_text()[-3000:]
        reason = _catalogue_results(seeded_index, "agentos-policy-early", "1.0")["verification"]["reason"]
        assert "does not match the catalogue" in reason
        assert _board_status(server, "seed", "later") == "unverifiable"  # served from the regenerated pages
    finally:
        server.stop()


@pytest.mark.parametrize(("args", "message"), [
    (("--verify-workers", "-1"), "--verify-workers takes 0 (off) to 64"),
    (("--verify-timeout", "0"), "--verify-timeout takes a positive number"),
    (("--verify-queue", "0"), "--verify-queue takes 1 to 100000"),
])  # fmt: skip
def test_bad_verify_options_are_one_line(seeded_index, args, message):
    cmd = [sys.executable, "-m", "agentos", "index", "serve", str(seeded_index), "--port", "1", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and message in out.stderr and len(out.stderr.strip().splitlines()) == 1


@pytest.fixture
def tarpit(monkeypatch):
    """pip's index is a socket that accepts connections and never answers: a verification hangs in pip."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{sock.getsockname()[1]}/simple/")
    monkeypatch.setenv("PIP_DEFAULT_TIMEOUT", "600")
    yield
    sock.close()


def _verifications(project: str) -> list[int]:
    """Pids of processes running a verification of ``project`` (read from /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"{project}==1.0".encode() in words:
            pids.append(int(entry.name))
    return pids


def _hanging_claim(index: Path, folder: Path, wheelhouse: Path) -> None:
    publish([str(wheel_for(wheelhouse, "agentos-core"))], str(index), library=True)
    _fake_claims(index, folder, ["slow"], stale=False)


def test_a_hanging_verification_is_killed_and_unverifiable(seeded_index, wheelhouse, tarpit, tmp_path):
    _hanging_claim(seeded_index, tmp_path / "w", wheelhouse)
    server = Server(seeded_index, tmp_path / "server.log", "--verify-workers", "1", "--verify-timeout", "3")
    try:
        done = _wait(lambda: _board_status(server, "seed", "slow") == "unverifiable", 60)
        assert done, server.log.read_text()[-3000:]
        reason = _catalogue_results(seeded_index, "agentos-policy-slow", "1.0")["verification"]["reason"]
        assert "longer than 3 s" in reason
        assert _verifications("agentos-policy-slow") == []  # the whole process group was killed
        assert _board_status(server, "seed", "picker") is None  # and the server still serves
    finally:
        server.stop()


def test_stopping_the_server_kills_the_verification_and_leaves_it_pending(
    seeded_index, wheelhouse, tarpit, tmp_path
):
    _hanging_claim(seeded_index, tmp_path / "w", wheelhouse)
    server = Server(seeded_index, tmp_path / "server.log", "--verify-workers", "1", "--verify-timeout", "600")
    running = _wait(lambda: _verifications("agentos-policy-slow"), 30)
    assert running and _statuses(seeded_index, "seed") == {"slow": "pending"}
    started = time.monotonic()
    server.stop()
    assert server.proc.returncode == 0 and time.monotonic() - started < 10  # a clean exit, not the kill
    assert _wait(lambda: _verifications("agentos-policy-slow") == [], 5)
    assert _statuses(seeded_index, "seed") == {"slow": "pending"}  # queued again at the next start
