"""The sandbox against packages written to cheat or escape, each beside an honest twin.

Every policy here is a real wheel installed with real pip (``--target``) and played by
:func:`agentos.sandbox.play_job`: the environment (corridor), the seeds and the recorder in this
process, the policy in bubblewrap. The package's code patches gymnasium and the recorder, reads a
secret under the maintainer's HOME, opens a socket to a server the test runs, leaves a daemon
behind, loops forever, or answers actions outside the space; none of it changes the record or
escapes, and a misbehaving policy ends as :class:`~agentos.sandbox.PolicyFailed` with its reason.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest
from agentos.sandbox import PolicyFailed, play_job, sandbox_problem
from registry.results_maker import policy_wheel

HONEST = """
from agentos import Policy

class Thing(Policy):
    def decide(self, observation):
        return 1
"""

PATCHER = """
import gymnasium, agentos.results._record as rec
_step = gymnasium.Env.step
gymnasium.Env.step = lambda self, a: (lambda o, r, t, u, i: (o, r + 1000.0, t, u, i))(*_step(self, a))
_make = rec.make_record
def make_record(*args, **kw):
    out = _make(*args, **kw)
    out["iqm"] = out["mean"] = 1e9
    return out
rec.make_record = make_record
""" + HONEST

SNOOP = """
import os, socket
try:
    SECRET = open({secret!r}).read()
except OSError:
    SECRET = None
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"leak")
    LEAKED = True
except OSError:
    LEAKED = False
if SECRET is not None or LEAKED:
    raise SystemExit("escaped: " + str(SECRET))
""" + HONEST

DAEMON = """
import os, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)  # {mark}"])
    os._exit(0)
""" + HONEST

HOG = HONEST.replace("return 1", "while True:\n            pass")
LIAR = HONEST.replace("return 1", "return 7")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap is Linux's")


def _dev_paths() -> list[str]:
    """The folders this interpreter imports from outside its venv and Python (editable checkouts)."""
    mine = (os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix))
    return [p for p in map(os.path.realpath, filter(os.path.isdir, sys.path)) if not p.startswith(mine)]


def _play(tmp_path, name: str, code: str, *, wall: float = 60.0, episodes: int = 12, concurrency: int = 4,
          sandboxed: bool = True) -> dict:
    wheel = policy_wheel(tmp_path / "wheels", name, "1.0", None, code=code)
    target = tmp_path / f"site-{name}"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check"]
    subprocess.run([*pip, "--target", str(target), str(wheel)], check=True)
    job = {
        "environment": "corridor",
        "policy": {"name": name, "package": f"agentos-policy-{name}", "version": "1.0"},
        "seeds": list(range(500, 500 + episodes)),
        "policy_python": sys.executable,
        "policy_venv": sys.prefix,
        "pythonpath": [str(target), *_dev_paths()],
        "concurrency": concurrency,
        "limits": {"wall": wall, "cpu": 60},
        "sandboxed": sandboxed,
    }
    return play_job(job)


@pytest.fixture(scope="module", autouse=True)
def _bwrap():
    assert sandbox_problem() is None, sandbox_problem()  # tests/system_packages.py installs bubblewrap


def test_an_honest_policy_plays_and_the_results_do_not_depend_on_concurrency(tmp_path):
    one = _play(tmp_path, "honest", HONEST, concurrency=1)
    many = _play(tmp_path, "honest", HONEST, concurrency=8)
    assert one["returns"] == many["returns"] and one["seeds"] == list(range(500, 512))
    assert one["policy"] == {"name": "honest", "package": "agentos-policy-honest", "version": "1.0"}


def test_patching_gymnasium_and_the_recorder_changes_nothing(tmp_path):
    honest = _play(tmp_path, "honest", HONEST)
    patched = _play(tmp_path, "patcher", PATCHER)
    assert patched["returns"] == honest["returns"] and patched["iqm"] == honest["iqm"] < 1000


def test_the_maintainers_home_and_the_network_are_out_of_reach(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    secret = home / "token.txt"
    secret.write_text("s3cret-token")
    monkeypatch.setenv("HOME", str(home))
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.5)
    port = server.getsockname()[1]
    assert open(secret).read() == "s3cret-token"  # readable here, by this process
    record = _play(tmp_path, "snoop", SNOOP.format(secret=str(secret), port=port))
    assert record["episodes"] == 12  # the import found neither the secret nor the socket
    with pytest.raises(TimeoutError):
        server.accept()
    server.close()


def _running(mark: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if mark.encode() in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def test_a_daemon_the_package_leaves_behind_dies_with_the_sandbox(tmp_path):
    mark = f"agentos-daemon-{os.getpid()}-{time.time_ns()}"
    record = _play(tmp_path, "daemon", DAEMON.format(mark=mark))
    assert record["episodes"] == 12
    deadline = time.monotonic() + 5
    while _running(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _running(mark) == []


def test_a_policy_that_never_answers_is_stopped_at_the_wall_deadline(tmp_path):
    started = time.monotonic()
    with pytest.raises(PolicyFailed, match="ran out of wall time"):
        _play(tmp_path, "hog", HOG, wall=8.0)
    assert time.monotonic() - started < 30


def test_an_action_outside_the_space_is_refused(tmp_path):
    with pytest.raises(PolicyFailed, match="outside Discrete"):
        _play(tmp_path, "liar", LIAR)


def test_unsandboxed_the_policy_still_only_chooses_actions_from_its_own_process(tmp_path):
    """--unsandboxed (no bwrap): no confinement, but the patches stay in the policy's process all the same."""
    patched = _play(tmp_path, "patcher", PATCHER, sandboxed=False)
    assert patched["returns"] == _play(tmp_path, "honest", HONEST)["returns"]


def test_a_policy_whose_weights_do_not_load_fails_with_its_own_last_line(tmp_path):
    broken = 'raise RuntimeError("weights.safetensors: header is corrupt")\n' + HONEST
    with pytest.raises(PolicyFailed, match="the policy's process failed: .*header is corrupt"):
        _play(tmp_path, "broken", broken)
