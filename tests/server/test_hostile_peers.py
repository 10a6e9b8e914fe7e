"""Hostile servers met by our clients: an index that never ends or trickles (issue 18, point 15),
and an upload URL that redirects or does not confirm (point 16). Each beside a valid twin."""

from __future__ import annotations

import json
import socketserver
import subprocess
import threading
import time

import pytest
from agentos.registry import _client
from agentos.registry._client import IndexError_, search
from registry.wheelmaker import env_wheel
from server.conftest import AGENTOS

CATALOGUE = json.dumps(
    {"components": [{"kind": "environment", "name": "seed", "package": "agentos-env-seed", "description": "a seed"}]}
).encode()


class _Hostile(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class _Handler(socketserver.StreamRequestHandler):
    """Answers by the first path segment; records every request it gets."""

    def handle(self):
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.request.recv(65536)
            if not chunk:
                return
            head += chunk
        self.server.seen.append(head.decode("latin-1"))
        head, _, body = head.partition(b"\r\n\r\n")
        length = next(
            (int(line[15:]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
        )
        while len(body) < length:  # the whole upload is read, as a real server would
            chunk = self.request.recv(65536)
            if not chunk:
                return
            body += chunk
        path = head.split(b" ", 2)[1].decode()
        mode = path.strip("/").split("/")[0]
        write = self.request.sendall
        stop = time.monotonic() + 15  # an old client that waits for ever fails the test, not the machine
        try:
            if mode == "good":
                write(
                    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                    % (len(CATALOGUE), CATALOGUE)
                )
            elif mode == "endless":  # a catalogue.json that never ends (no length, no end)
                write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n[")
                block = b"0," * 32768
                for _ in range(50 * 1024 * 1024 // len(block)):
                    write(block)
            elif mode == "trickle":  # one byte at a time, forever
                write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n")
                while time.monotonic() < stop:
                    write(b" ")
                    time.sleep(0.3)
            elif mode == "slowhead":  # even the status line trickles
                for byte in b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * 1000:
                    if time.monotonic() > stop:
                        break
                    write(bytes([byte]))
                    time.sleep(0.3)
            elif mode == "redirect":  # the upload goes elsewhere: another origin records what it gets
                target = f"http://127.0.0.1:{self.server.other}/legacy/"
                write(f"HTTP/1.1 302 Found\r\nLocation: {target}\r\nContent-Length: 0\r\n\r\n".encode())
            else:  # a 200 that is not the registry's confirmation
                write(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
        except OSError:
            pass


@pytest.fixture
def hostile():
    servers = []
    for _ in range(2):
        srv = _Hostile(("127.0.0.1", 0), _Handler)
        srv.seen = []
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
    servers[0].other = servers[1].server_address[1]
    yield servers
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def test_an_index_that_never_ends_or_trickles_is_given_up(hostile, monkeypatch):
    monkeypatch.setattr(_client, "MAX_PAGE", 1 << 20, raising=False)
    monkeypatch.setattr(_client, "PAGE_DEADLINE", 2, raising=False)
    base = f"http://127.0.0.1:{hostile[0].server_address[1]}"
    assert [r["name"] for r in search(index_url=f"{base}/good/")] == ["seed"]  # the valid twin
    for mode, words in (("endless", "larger than 1 MiB"), ("trickle", "longer than 2 s"), ("slowhead", "longer")):
        start = time.monotonic()
        with pytest.raises(IndexError_) as caught:
            search(index_url=f"{base}/{mode}/")
        took = time.monotonic() - start
        assert words in str(caught.value) and "\n" not in str(caught.value), (mode, str(caught.value))
        assert took < 6, (mode, took)


def test_publish_to_never_follows_a_redirect_nor_trusts_a_bare_200(hostile, server, tmp_path):
    token = server.token("erin")
    wheel = env_wheel(tmp_path / "w", "direct", "1.0")
    ok = subprocess.run(
        [AGENTOS, "publish", str(wheel), "--to", server.url, "--token", token], capture_output=True, text=True
    )
    assert ok.returncode == 0 and "uploaded" in ok.stdout, ok.stderr  # the valid twin
    port = hostile[0].server_address[1]
    for mode, words in (("redirect", "redirect to http"), ("plain", "did not confirm")):
        out = subprocess.run(
            [AGENTOS, "publish", str(wheel), "--to", f"http://127.0.0.1:{port}/{mode}", "--token", token],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode != 0 and "uploaded" not in out.stdout, (mode, out.stdout)
        assert words in out.stderr and out.stderr.strip().count("\n") == 0 and "Traceback" not in out.stderr
    assert hostile[1].seen == []  # the other origin never saw a request, let alone the token
