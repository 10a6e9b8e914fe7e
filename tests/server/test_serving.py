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
