"""A real registry server: ``agentos index serve`` (uvicorn) in a subprocess on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from agentos.registry import publish
from registry.wheelmaker import env_wheel, make_wheel

AGENTOS = str(Path(sys.executable).parent / "agentos")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``agentos index serve ROOT`` on an ephemeral port; ``log`` is its output."""

    def __init__(self, root: Path, log: Path, *args: str, open_files: int | None = None):
        self.root = root
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        if not any(a.startswith("--verify-workers") for a in args):
            args = (*args, "--verify-workers", "0")  # tests of verification turn it on (tests/server/test_verifier.py)
        cmd = [AGENTOS, "index", "serve", str(root), "--port", str(self.port), *args]
        limit = None
        if open_files is not None:  # a small host: soft and hard limit on open files

            def limit():
                import resource

                resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

        self.proc = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT, preexec_fn=limit)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.url + "/simple/", timeout=2).read()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"server did not start: {log.read_text()}") from None
                time.sleep(0.1)

    def token(self, owner: str) -> str:
        cmd = [AGENTOS, "index", "token", "create", "--index", str(self.root)]
        out = subprocess.run([*cmd, "--owner", owner], capture_output=True, text=True, check=True)
        return out.stdout.strip()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def seeded_index(tmp_path) -> Path:
    """An index with one component and one library, published locally (owned by the maintainers)."""
    wheels = tmp_path / "seed-wheels"
    readme = (
        "# agentos-env-seed\n\nA corridor <script>window.hacked = 1</script>\n\n### Constructor arguments\n\n"
        "| Argument | Type | Default | Meaning |\n|---|---|---|---|\n| `length` | int | `5` | cells to the goal |\n"
    )
    paths = [
        env_wheel(wheels, "seed", "1.0", summary="The seed corridor", description=readme),
        make_wheel(
            wheels,
            "agentos-policy-picker",
            "1.0",
            {"agentos.policy": {"picker": "agentos_policy_picker:Thing"}},
            summary="Picks <b>actions</b>",
        ),
        make_wheel(wheels, "agentos-lib-seed", "1.0", summary="a seed library"),
    ]
    publish([str(p) for p in paths], str(tmp_path / "index"), library=True)
    return tmp_path / "index"


@pytest.fixture
def server(tmp_path, seeded_index):
    srv = Server(seeded_index, tmp_path / "server.log")
    yield srv
    srv.stop()


@pytest.fixture
def twine():
    def run(url: str, token: str, *files, check: bool = False) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "twine", "upload", "--non-interactive", "--disable-progress-bar"]
        cmd += ["--repository-url", f"{url}/legacy/", "-u", "__token__", "-p", token, *map(str, files)]
        env = {**os.environ, "TWINE_NON_INTERACTIVE": "1"}
        env.pop("TWINE_PASSWORD", None)
        return subprocess.run(cmd, capture_output=True, text=True, check=check, env=env, timeout=120)

    return run
