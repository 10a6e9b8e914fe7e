"""A credential never leaves its origin (:mod:`agentos.http_credentials`), with real servers on 127.0.0.1:
two ports are two origins. The token reaches the first server, never the second; a same-origin redirect
keeps it (the valid twin); a redirect from https to http is refused with one line."""

from __future__ import annotations

import ssl
import subprocess
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from agentos.http_credentials import RedirectRefused, urlopen

TOKEN = "Bearer s3cret-token"


class Recorder(BaseHTTPRequestHandler):
    """``/go?to=URL`` redirects there (302); any other path answers 200 with its path. Every request's
    path and Authorization / Cookie headers are kept in ``server.seen``."""

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self.server.seen.append((self.path, self.headers.get("Authorization"), self.headers.get("Cookie")))
        if self.path.startswith("/go?to="):
            self.send_response(302)
            self.send_header("Location", self.path[len("/go?to="):])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self.path.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(tls: ssl.SSLContext | None = None):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.daemon_threads, server.seen = True, []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def servers():
    made = [_serve(), _serve()]
    yield made
    for server in made:
        server.shutdown()
        server.server_close()


def _url(server, path: str, scheme: str = "http") -> str:
    return f"{scheme}://127.0.0.1:{server.server_address[1]}{path}"


def _get(url: str, **kwargs) -> bytes:
    request = urllib.request.Request(url, headers={"Authorization": TOKEN, "Cookie": "session=s3cret"})
    with urlopen(request, timeout=10, **kwargs) as response:
        return response.read()


def test_a_same_origin_redirect_keeps_the_credential(servers):
    first, _ = servers
    assert _get(_url(first, "/go?to=/data")) == b"/data"
    assert first.seen == [("/go?to=/data", TOKEN, "session=s3cret"), ("/data", TOKEN, "session=s3cret")]


def test_a_redirect_to_another_origin_drops_the_credential(servers):
    first, second = servers
    assert _get(_url(first, "/go?to=" + _url(second, "/data"))) == b"/data"
    assert first.seen == [("/go?to=" + _url(second, "/data"), TOKEN, "session=s3cret")]
    assert second.seen == [("/data", None, None)]  # followed, without the token or the cookie


def test_once_dropped_the_credential_stays_dropped_even_back_at_its_origin(servers):
    first, second = servers
    back = _url(second, "/go?to=" + _url(first, "/data"))
    assert _get(_url(first, "/go?to=" + back)) == b"/data"
    assert [seen[1] for seen in first.seen] == [TOKEN, None] and second.seen[0][1] is None


def test_without_following_a_redirect_is_urllibs_http_error(servers):
    first, second = servers
    with pytest.raises(urllib.error.HTTPError) as caught:
        _get(_url(first, "/go?to=" + _url(second, "/data")), follow_redirects=False)
    assert caught.value.code == 302 and second.seen == []


@pytest.fixture
def tls_server(tmp_path, monkeypatch):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out",
                    str(cert)], check=True, capture_output=True, timeout=60)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client's default context trusts this server
    server = _serve(context)
    yield server
    server.shutdown()
    server.server_close()


def test_https_to_http_is_refused_and_https_to_https_of_the_same_origin_is_followed(tls_server, servers):
    plain = servers[0]
    assert _get(_url(tls_server, "/go?to=/data", "https")) == b"/data"  # the twin: same origin over TLS
    assert [seen[1] for seen in tls_server.seen] == [TOKEN, TOKEN]
    with pytest.raises(RedirectRefused) as caught:
        _get(_url(tls_server, "/go?to=" + _url(plain, "/data"), "https"))
    message = str(caught.value)
    assert "from https to http, refused" in message and "\n" not in message and "s3cret" not in message
    assert plain.seen == []
