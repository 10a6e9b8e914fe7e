"""Slow and idle clients do not lock others out (issue 18, point 9).

The hostile clients are raw sockets from 127.0.0.2 (another client address on the loopback); the
valid twins come from 127.0.0.1. The server runs with a small host's limit on open files (200).
"""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import time

from registry.wheelmaker import env_wheel
from server.conftest import AGENTOS, Server

ATTACKER = "127.0.0.2"


def _connect(port: int, source: str = ATTACKER) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _closed_within(sock: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing ``sock``, or None if it stays open for ``seconds``."""
    sock.settimeout(seconds)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return data


def _deleted_temp_files(pid: int) -> list[str]:
    """Temporary files the server holds open (spooled upload bodies are unlinked files)."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.endswith("(deleted)"):
            found.append(target)
    return found


def test_idle_connections_stalled_bodies_and_anonymous_uploads(seeded_index, tmp_path):
    srv = Server(
        seeded_index,
        tmp_path / "server.log",
        *("--header-timeout", "2", "--body-timeout", "1", "--upload-timeout", "4"),
        *("--max-client-connections", "20"),
        open_files=200,
    )
    idle: list[socket.socket] = []
    try:
        token = srv.token("dana")
        # 300 connections that never finish their headers, from one client address
        for _ in range(300):
            sock = _connect(srv.port)
            sock.sendall(b"GET /simple/ HTTP/1.1\r\nHost: x\r\n")
            idle.append(sock)

        # a normal upload from another client while they are open
        wheel = env_wheel(tmp_path / "w", "amid", "1.0")
        start = time.monotonic()
        out = subprocess.run(
            [AGENTOS, "publish", str(wheel), "--to", srv.url, "--token", token],
            capture_output=True,
            text=True,
            timeout=60,
        )
        took = time.monotonic() - start
        print(f"upload with 300 idle connections open: {took:.2f} s")
        assert out.returncode == 0, out.stderr
        assert (seeded_index / "files" / "agentos-env-amid" / wheel.name).exists()
        assert took < 20

        # the connections over the per-client limit were answered 503 and closed at once;
        # the others are closed when their header time is up
        answers = [_closed_within(sock, 0.05) for sock in idle]
        busy = [a for a in answers if a is not None]
        assert len(busy) >= 280 and all(a.startswith(b"HTTP/1.1 503") for a in busy)
        waiting = [sock for sock, a in zip(idle, answers, strict=True) if a is None]
        assert all(_closed_within(sock, 4) is not None for sock in waiting)

        # valid twin: headers sent in two pieces within the header time are answered
        sock = _connect(srv.port)
        sock.sendall(b"GET /simple/ HTTP/1.1\r\n")
        time.sleep(0.5)
        sock.sendall(b"Host: x\r\nConnection: close\r\n\r\n")
        assert _closed_within(sock, 5).startswith(b"HTTP/1.1 200")
        sock.close()

        auth = base64.b64encode(f"__token__:{token}".encode()).decode()
        second = env_wheel(tmp_path / "w2", "stall", "1.0").read_bytes()
        part = (
            b'--b\r\nContent-Disposition: form-data; name=":action"\r\n\r\nfile_upload\r\n'
            b'--b\r\nContent-Disposition: form-data; name="content"; filename="agentos_env_stall-1.0-py3-none-any.whl"'
            b"\r\n\r\n"
        )
        filler = os.urandom(3 << 20)  # past Starlette's 1 MiB in-memory spool
        head = (
            "POST /legacy/ HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
            f"Content-Length: {len(part) + len(second) + len(filler) + 20}\r\n"
        )
        # a body that stalls half-way: 408 once it has been idle for the body timeout
        sock = _connect(srv.port)
        sock.sendall(f"{head}Authorization: Basic {auth}\r\n\r\n".encode() + part + filler)
        start = time.monotonic()
        answer = _closed_within(sock, 10)
        assert answer is not None and answer.startswith(b"HTTP/1.1 408") and time.monotonic() - start < 5
        sock.close()
        # a body that trickles (a byte every 0.3 s never idles 1 s): 408 once the upload time is up
        sock = _connect(srv.port)
        sock.sendall(f"{head}Authorization: Basic {auth}\r\n\r\n".encode() + part)
        start = time.monotonic()
        sock.settimeout(0.3)
        answer = b""
        while time.monotonic() - start < 10 and not answer:
            try:
                sock.sendall(b"x")
                answer = sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                break
        assert answer.startswith(b"HTTP/1.1 408") and time.monotonic() - start < 6
        sock.close()

        # an anonymous upload (no token in the header, a wrong one in the form) is refused as the
        # file part begins: nothing of it is stored, even while the client keeps the connection
        sock = _connect(srv.port)
        anonymous = b'--b\r\nContent-Disposition: form-data; name="token"\r\n\r\nagentos-wrong\r\n' + part
        sock.sendall(head.encode() + b"\r\n" + anonymous + filler)
        sock.settimeout(5)
        answer = sock.recv(4096)  # while the connection stays open (the client has more to send)
        assert answer.startswith(b"HTTP/1.1 403"), answer[:100]
        assert _deleted_temp_files(srv.proc.pid) == []
        assert not list((seeded_index / ".incoming").glob("*/*"))
        sock.close()
        assert not (seeded_index / "files" / "agentos-env-stall").exists()
    finally:
        for sock in idle:
            sock.close()
        srv.stop()


def test_many_addresses_meet_the_open_file_budget_with_a_503_then_recover(seeded_index, tmp_path):
    # 100 open files: 36 connections in all (64 are kept for the index's files and uploads)
    srv = Server(seeded_index, tmp_path / "server.log", "--header-timeout", "2", open_files=100)
    socks: list[socket.socket] = []
    try:
        for i in range(60):  # idle connections from 30 addresses: each under its own limit
            sock = _connect(srv.port, f"127.0.1.{i % 30 + 1}")
            sock.sendall(b"GET / HTTP/1.1\r\n")
            socks.append(sock)
        answers = [_closed_within(sock, 0.05) for sock in socks]
        refused = [a for a in answers if a is not None]
        assert 20 <= len(refused) <= 30 and all(a.startswith(b"HTTP/1.1 503") for a in refused), len(refused)
        time.sleep(2.5)  # their header time is up: the server has closed the idle ones
        assert all(_closed_within(sock, 1) is not None for sock in socks)
        sock = _connect(srv.port, "127.0.0.1")  # the valid twin: served again
        sock.sendall(b"GET /simple/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert _closed_within(sock, 5).startswith(b"HTTP/1.1 200")
        sock.close()
    finally:
        for sock in socks:
            sock.close()
        srv.stop()
