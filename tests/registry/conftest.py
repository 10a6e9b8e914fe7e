"""Fixtures for the registry tests: real indexes (folders and a real HTTP server) and fresh venvs.

* ``registry_index``: an index folder built by ``agentos.registry.publish`` from the wheels of
  agentos-core and every plugin in ``plugins/`` (the ``wheelhouse`` of tests/conftest.py).
* ``synthetic_index``: small made-up packages for conflicts, yanking and dependency confusion.
* ``http_index``: a threaded ``http.server`` on 127.0.0.1 serving ``registry_index`` (with PEP 691
  content negotiation, like a real index); its access log is ``http_index.log``.
* ``core_venv()``: a fresh venv with agentos-core installed (third-party requirements come from
  the shared base venv, so a venv costs about a second).
"""

from __future__ import annotations

import http.server
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from agentos.registry import publish
from conftest import Venv, wheel_for
from registry.wheelmaker import env_wheel, make_wheel


@pytest.fixture(scope="session")
def registry_index(tmp_path_factory, wheelhouse) -> Path:
    """The real index: agentos-core and every plugin of plugins/, published with the real code."""
    root = tmp_path_factory.mktemp("registry") / "index"
    publish([str(p) for p in sorted(wheelhouse.glob("*.whl"))], str(root), library=True)
    return root


@pytest.fixture(scope="session")
def synthetic_index(tmp_path_factory) -> Path:
    """agentos-dep-x 1.0/2.0 (libraries); environments a (dep-x==1.0), b (dep-x==2.0), c (dep-x>=1.0)."""
    wheels = tmp_path_factory.mktemp("synthetic-wheels")
    root = tmp_path_factory.mktemp("synthetic") / "index"
    paths = [
        make_wheel(wheels, "agentos-dep-x", "1.0", summary="library x"),
        make_wheel(wheels, "agentos-dep-x", "2.0", summary="library x"),
        env_wheel(wheels, "a", "1.0", ["agentos-dep-x==1.0"]),
        env_wheel(wheels, "a", "1.1", ["agentos-dep-x==1.0"]),
        env_wheel(wheels, "b", "1.0", ["agentos-dep-x==2.0"]),
        env_wheel(wheels, "c", "1.0", ["agentos-dep-x>=1.0"]),
    ]
    publish([str(p) for p in paths], str(root), library=True)
    return root


class _Handler(http.server.SimpleHTTPRequestHandler):
    log: list[str]

    def send_head(self):
        # PEP 691 content negotiation for the simple pages: index.json when JSON is preferred.
        path = self.translate_path(self.path)
        accept = self.headers.get("Accept", "")
        if Path(path).is_dir() and "application/vnd.pypi.simple.v1+json" in accept and self.path.endswith("/"):
            json_page = Path(path) / "index.json"
            if json_page.exists():
                data = json_page.read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                import io

                return io.BytesIO(data)
        return super().send_head()

    def log_message(self, format, *args):
        self.log.append(f"{self.command} {self.path} {args[1] if len(args) > 1 else ''}")


class HttpIndex:
    def __init__(self, root: Path):
        handler = type("Handler", (_Handler,), {"log": []})
        self.log = handler.log
        self.server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), lambda *a, **kw: handler(*a, directory=str(root), **kw)
        )
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="session")
def http_index(registry_index):
    server = HttpIndex(registry_index)
    yield server
    server.close()


@pytest.fixture
def http_server():
    """Factory: serve any folder over HTTP on 127.0.0.1 for the test's duration."""
    servers = []

    def serve(root: Path) -> HttpIndex:
        servers.append(HttpIndex(root))
        return servers[-1]

    yield serve
    for server in servers:
        server.close()


@pytest.fixture(scope="session")
def http_synthetic(synthetic_index):
    server = HttpIndex(synthetic_index)
    yield server
    server.close()


def _purelib(venv: Venv) -> str:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return subprocess.run([venv.python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="session")
def core_deps_site(tmp_path_factory, base_site, wheelhouse) -> str:
    """site-packages holding whatever agentos-core requires beyond the shared base venv."""
    deps = Venv(tmp_path_factory.mktemp("core-deps"), base_site, tmp_path_factory.mktemp("core-deps-cache"))
    deps.pip_install(wheel_for(wheelhouse, "agentos-core"))
    deps.run("python", "-m", "pip", "uninstall", "-y", "-q", "agentos-core", check=True)
    return _purelib(deps)


@pytest.fixture
def core_venv(tmp_path_factory, base_site, core_deps_site, wheelhouse):
    """Factory: a fresh venv (pip comes from the base venv) with agentos-core installed."""

    def make(name: str = "agent-venv") -> Venv:
        path = tmp_path_factory.mktemp(name)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", path], check=True)
        venv = Venv(path, base_site, tmp_path_factory.mktemp(f"{name}-cache"))
        Path(_purelib(venv), "_agentos_test_base.pth").write_text(f"{base_site}\n{core_deps_site}\n")
        venv.pip_install("--no-deps", wheel_for(wheelhouse, "agentos-core"))
        return venv

    return make


@pytest.fixture
def index_copy(tmp_path, registry_index) -> Path:
    """A private copy of the real index, to tamper with or publish into."""
    dest = tmp_path / "index-copy"
    shutil.copytree(registry_index, dest)
    return dest
