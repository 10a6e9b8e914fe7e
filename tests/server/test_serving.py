"""Reading from the server: PEP 691 negotiation, content types, conditional requests, hidden files."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request


def _get(url: str, method: str = "GET", **headers):
    req = urllib.request.Request(url, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def test_negotiation_types_and_conditional_requests(server):
    project = f"{server.url}/simple/agentos-env-seed/"
    status, headers, body = _get(project, Accept="application/vnd.pypi.simple.v1+json")
    assert status == 200 and headers["Content-Type"] == "application/vnd.pypi.simple.v1+json"
    assert json.loads(body)["name"] == "agentos-env-seed" and headers["Vary"] == "Accept"
    pip_accept = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01"
    assert _get(project, Accept=pip_accept)[1]["Content-Type"] == "application/vnd.pypi.simple.v1+json"
    status, headers, body = _get(project, Accept="application/vnd.pypi.simple.v1+html")
    assert headers["Content-Type"] == "application/vnd.pypi.simple.v1+html" and b"<a href" in body
    assert _get(project)[1]["Content-Type"].startswith("text/html")
    assert _get(project, Accept="image/png")[0] == 406
    assert _get(f"{server.url}/simple/agentos-env-seed")[0] == 200  # redirected to the folder

    entry = json.loads(_get(project, Accept="application/vnd.pypi.simple.v1+json")[2])["files"][0]
    wheel_url = urllib.parse.urljoin(project, entry["url"])
    status, headers, body = _get(wheel_url)
    assert status == 200 and headers["Content-Type"] == "application/octet-stream"
    import hashlib

    assert hashlib.sha256(body).hexdigest() == entry["hashes"]["sha256"]
    status, headers, meta = _get(wheel_url + ".metadata")
    assert status == 200 and hashlib.sha256(meta).hexdigest() == entry["core-metadata"]["sha256"]

    status, headers, _ = _get(f"{server.url}/index.html")
    assert headers["Content-Type"] == "text/html; charset=utf-8" and headers["ETag"] and headers["Last-Modified"]
    assert _get(f"{server.url}/index.html", **{"If-None-Match": headers["ETag"]})[0] == 304
    assert _get(f"{server.url}/index.html", **{"If-Modified-Since": headers["Last-Modified"]})[0] == 304
    assert _get(f"{server.url}/index.html", **{"If-None-Match": '"other"'})[0] == 200
    status, headers, body = _get(f"{server.url}/index.html", method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0
    assert _get(f"{server.url}/static/catalogue.js")[1]["Content-Type"].startswith("text/javascript")

    server.token("eve")
    for hidden in (".access.json", ".lock", "simple/../.access.json", "%2e%2e/%2e%2e/etc/passwd"):
        assert _get(f"{server.url}/{hidden}")[0] == 404, hidden
    assert _get(f"{server.url}/nope/")[0] == 404


def _raw_get(port: int, path: str, accept: str | None = None) -> tuple[int, dict, bytes]:
    """A GET of ``path`` exactly as written (urllib would normalise ``//files``); no redirect followed."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers={"Accept": accept} if accept else {})
    response = conn.getresponse()
    result = response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    conn.close()
    return result


def test_security_headers_redirects_media_types_and_links(server, tmp_path):
    port = server.port
    pages = ["/", "/upload/", "/simple/", "/simple/agentos-env-seed/", "/static/style.css", "/nope", "/legacy/"]
    for path in pages:
        status, headers, _ = _raw_get(port, path)
        assert "frame-ancestors 'none'" in headers.get("content-security-policy", ""), (path, status)
        assert "script-src 'self'" in headers["content-security-policy"]
        assert headers.get("x-content-type-options") == "nosniff" and headers.get("x-frame-options") == "DENY"

    status, headers, _ = _raw_get(port, "//files")  # never a protocol-relative Location (//files/ = host "files")
    assert status == 301 and headers["location"] == "/files/"
    assert _raw_get(port, "/files")[1]["location"] == "/files/"  # the valid twin
    assert _raw_get(port, "/simple//agentos-env-seed")[1]["location"] == "/simple/agentos-env-seed/"

    status, headers, _ = _raw_get(port, "/simple/", "image/png")
    assert status == 406 and headers.get("vary") == "Accept"
    json_type = "application/vnd.pypi.simple.v1+json"
    for accept in ("application/vnd.pypi.simple.latest+json", json_type.upper(), "Application/Vnd.Pypi.Simple.V1+Json"):
        status, headers, body = _raw_get(port, "/simple/agentos-env-seed/", accept)
        assert status == 200 and headers["content-type"] == json_type, accept
        assert json.loads(body)["name"] == "agentos-env-seed"
    status, headers, _ = _raw_get(port, "/simple/agentos-env-seed/", "application/vnd.pypi.simple.latest+html")
    assert status == 200 and headers["content-type"] == "application/vnd.pypi.simple.v1+html"

    server.token("frank")  # .access.json exists now
    outside = tmp_path / "outside.txt"
    outside.write_text("secret outside the index\n")
    (server.root / "files" / "leak.json").symlink_to(server.root / ".access.json")
    (server.root / "files" / "lock").symlink_to("../.access.lock")
    (server.root / "files" / "out.txt").symlink_to(outside)
    (server.root / "files" / "catalogue-copy.json").symlink_to(server.root / "catalogue.json")  # valid twin
    for link in ("leak.json", "lock", "out.txt"):
        status, _, body = _raw_get(port, f"/files/{link}")
        assert status == 404 and b"secret" not in body and b"tokens" not in body, link
    status, _, body = _raw_get(port, "/files/catalogue-copy.json")
    assert status == 200 and body == (server.root / "catalogue.json").read_bytes()
