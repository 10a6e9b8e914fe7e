"""Uploads through clients we did not write (twine, pip reading back) and through ``agentos publish --to``."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile

from agentos.registry import check_index
from registry.wheelmaker import env_wheel
from server.conftest import AGENTOS


def _status(url: str, **headers) -> int:
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10).status
    except urllib.error.HTTPError as exc:
        return exc.code


def _raw(port: int, data: bytes) -> int:
    """Send ``data`` on a fresh connection and return the status of the response (not closing first)."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(data)
        reply = sock.recv(4096).decode("latin-1")
    return int(reply.split(" ", 2)[1])


def _words(done: subprocess.CompletedProcess) -> str:
    """What twine printed, with its line wrapping undone."""
    return " ".join((done.stdout + done.stderr).split())


def test_twine_upload_then_pip_installs_it_and_errors_are_http_codes(server, twine, tmp_path):
    wheel = env_wheel(tmp_path / "w", "uploaded", "1.0", code="VALUE = 42\nclass Thing:\n    pass\n")
    alice, bob = server.token("alice"), server.token("bob")

    done = twine(server.url, alice, wheel)
    assert done.returncode == 0, done.stdout + done.stderr
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-cache-dir", "--target", str(target)]
    subprocess.run([*pip, "--index-url", f"{server.url}/simple/", "agentos-env-uploaded"], check=True, timeout=120)
    assert "VALUE = 42" in (target / "agentos_env_uploaded" / "__init__.py").read_text()

    again = twine(server.url, alice, wheel)  # the same file again: a no-op, as a local publish
    assert again.returncode == 0, again.stdout + again.stderr
    other = env_wheel(tmp_path / "w1", "uploaded", "1.0", code="VALUE = 43\nclass Thing:\n    pass\n")
    assert other.name == wheel.name and other.read_bytes() != wheel.read_bytes()
    changed = twine(server.url, alice, other)  # twine prints the reason phrase of the status line
    assert changed.returncode != 0 and "409" in changed.stdout + changed.stderr
    assert "already exists with other contents" in _words(changed)
    wrong = twine(server.url, "agentos-not-a-token", env_wheel(tmp_path / "w2", "other", "1.0"))
    assert wrong.returncode != 0 and "403" in wrong.stdout + wrong.stderr
    assert "invalid or unknown API token" in _words(wrong)
    not_owner = twine(server.url, bob, env_wheel(tmp_path / "w3", "uploaded", "1.1"))
    assert not_owner.returncode != 0 and "403" in not_owner.stdout + not_owner.stderr
    assert "owned by another user" in _words(not_owner)
    maintainers = twine(server.url, alice, env_wheel(tmp_path / "w4", "seed", "2.0"))  # published locally
    assert maintainers.returncode != 0 and "403" in maintainers.stdout + maintainers.stderr
    newer = twine(server.url, alice, env_wheel(tmp_path / "w5", "uploaded", "1.1"))
    assert newer.returncode == 0, newer.stdout + newer.stderr

    assert check_index(str(server.root)) == []
    log = server.log.read_text()
    assert alice not in log and bob not in log
    for page in server.root.rglob("*"):
        if page.is_file() and not page.name.startswith(".access"):
            data = page.read_bytes()
            assert alice.encode() not in data and bob.encode() not in data
    stored = json.loads((server.root / ".access.json").read_text())
    assert stored["projects"]["agentos-env-uploaded"] == "alice" and alice not in json.dumps(stored)
    assert _status(f"{server.url}/.access.json") == 404 and _status(f"{server.url}/.lock") == 404


def test_hostile_wheels_are_400_with_the_reason(server, twine, tmp_path):
    token = server.token("mallory")
    good = env_wheel(tmp_path / "w", "evil", "1.0")
    hostile = tmp_path / "h" / good.name
    hostile.parent.mkdir()
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(hostile, "w") as out:  # no METADATA: not a wheel
        for item in src.infolist():
            if not item.filename.endswith("/METADATA"):
                out.writestr(item, src.read(item))
    result = twine(server.url, token, hostile)
    assert result.returncode != 0 and "400" in result.stdout + result.stderr
    assert "METADATA" in _words(result), result.stdout  # the reason, not only "Bad Request"
    misnamed = env_wheel(tmp_path / "m", "sneaky", "1.0")  # declares no environment 'sneaky'
    with zipfile.ZipFile(misnamed) as src:
        names = {i.filename: src.read(i) for i in src.infolist()}
    ep = next(n for n in names if n.endswith("entry_points.txt"))
    names[ep] = names[ep].replace(b"sneaky =", b"other =")
    with zipfile.ZipFile(misnamed, "w") as out:
        for name, data in names.items():
            out.writestr(name, data)
    result = twine(server.url, token, misnamed)
    assert result.returncode != 0 and "400" in result.stdout + result.stderr
    assert not (server.root / "files" / "agentos-env-evil").exists()
    assert not (server.root / "files" / "agentos-env-sneaky").exists()
    assert not list((server.root / ".incoming").iterdir())
    assert check_index(str(server.root)) == []


def test_publish_to_url_and_size_limit_and_digest(tmp_path, seeded_index):
    from server.conftest import Server

    srv = Server(seeded_index, tmp_path / "server.log", "--max-upload-mb", "1")
    try:
        token = srv.token("carol")
        wheel = env_wheel(tmp_path / "w", "remote", "1.0")
        out = subprocess.run(
            [AGENTOS, "publish", str(wheel), "--to", srv.url, "--token", token], capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        assert (seeded_index / "files" / "agentos-env-remote" / wheel.name).exists()
        again = subprocess.run(
            [AGENTOS, "publish", str(wheel), "--to", srv.url, "--token", token], capture_output=True, text=True
        )
        assert again.returncode == 0 and "unchanged" in again.stdout, again.stderr  # as a local publish
        other = env_wheel(tmp_path / "w1", "remote", "1.0", code="X = 2\n")
        assert other.name == wheel.name
        changed = subprocess.run(
            [AGENTOS, "publish", str(other), "--to", srv.url, "--token", token], capture_output=True, text=True
        )
        assert changed.returncode != 0 and "409" in changed.stderr and "Traceback" not in changed.stderr
        assert changed.stderr.strip().count("\n") == 0 and "other contents" in changed.stderr

        big = env_wheel(tmp_path / "big", "big", "1.0", code="X = '" + "y" * (3 << 20) + "'\n")
        boundary = "b" * 20
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name=":action"\r\n\r\nfile_upload\r\n'
                f'--{boundary}\r\nContent-Disposition: form-data; name="content"; filename="{big.name}"\r\n\r\n'
            ).encode()
            + big.read_bytes()
            + f"\r\n--{boundary}--\r\n".encode()
        )
        auth = base64.b64encode(f"__token__:{token}".encode()).decode()

        def post(data, **headers):
            req = urllib.request.Request(
                f"{srv.url}/legacy/",
                data=data,
                method="POST",
                headers={
                    "Content-Type": f"multipart/form-data; boundary={boundary}",
                    "Authorization": f"Basic {auth}",
                    **headers,
                },
            )
            try:
                return urllib.request.urlopen(req, timeout=30).status
            except urllib.error.HTTPError as exc:
                return exc.code

        head = (
            f"POST /legacy/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic {auth}\r\n"
            f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        )
        # a declared length over the limit: refused before the body is sent
        assert _raw(srv.port, (head + f"Content-Length: {len(body)}\r\n\r\n").encode()) == 413
        # no declared length (chunked): refused while streaming, once 1 MiB has arrived
        sent = 0
        chunks = [(head + "Transfer-Encoding: chunked\r\n\r\n").encode()]
        while sent < (1 << 20) + 200_000:
            piece = body[sent : sent + 65536]
            chunks.append(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            sent += len(piece)
        assert _raw(srv.port, b"".join(chunks)) == 413
        assert not (seeded_index / "files" / "agentos-env-big").exists()

        small = env_wheel(tmp_path / "s", "digest", "1.0")
        bad = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name=":action"\r\n\r\nfile_upload\r\n'
                f'--{boundary}\r\nContent-Disposition: form-data; name="sha256_digest"\r\n\r\n{"0" * 64}\r\n'
                f'--{boundary}\r\nContent-Disposition: form-data; name="content"; filename="{small.name}"\r\n\r\n'
            ).encode()
            + small.read_bytes()
            + f"\r\n--{boundary}--\r\n".encode()
        )
        assert post(bad) == 400
        assert not (seeded_index / "files" / "agentos-env-digest").exists()
    finally:
        srv.stop()
    assert check_index(str(seeded_index)) == []
