"""Issue 20 against a real ``agentos index serve`` with a token: a release cannot inflate the shared
files (1), exhaust memory with members (2), or hide a second distribution (3); a file has one URL and
no control character from a package reaches a page (4). Each hostile upload beside its valid twin."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from registry.hostile import crowded_wheel, raw_wheel, wheel_members
from registry.test_release_bounds import _letters
from registry.wheelmaker import env_wheel


def _post(url: str, token: str, path) -> tuple[int, str]:
    import httpx

    data = {":action": "file_upload", "protocol_version": "1"}
    with open(path, "rb") as f:
        files = {"content": (path.name, f, "application/octet-stream")}
        reply = httpx.post(f"{url}/legacy/", data=data, files=files, auth=("__token__", token), timeout=60)
    return reply.status_code, reply.text


def _status(url: str) -> int:
    try:
        return urllib.request.urlopen(url, timeout=10).status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_hostile_releases_are_400_and_their_twins_published(server, tmp_path):
    token = server.token("mallory")
    catalogue = server.root / "catalogue.json"
    size = catalogue.stat().st_size
    hostile = {
        "Summary must be one line of at most 512 characters": env_wheel(
            tmp_path / "1", "inflate", "1.0", summary=_letters(1 << 20)
        ),
        "(at most 20000 members, 4 MiB); refused": crowded_wheel(
            tmp_path / "2" / "agentos_env_crowd-1.0-py3-none-any.whl", "agentos-env-crowd", 20_000
        ),
        "would install a second distribution's metadata": raw_wheel(
            tmp_path / "3" / "agentos_env_dd-1.0-py3-none-any.whl",
            {
                **wheel_members("agentos-env-dd", "1.0"),
                "agentos_env_dd-1.0.data/purelib/zz_fake-1.0.dist-info/entry_points.txt": "[agentos.environment]\n"
                "2048 = evil:E\n",
            },
        ),
    }
    for message, wheel in hostile.items():
        status, text = _post(server.url, token, wheel)
        assert status == 400 and text.count("\n") == 1 and message in text, (status, text)
    assert catalogue.stat().st_size == size
    twins = [
        env_wheel(tmp_path / "t1", "inflate", "1.0", summary="x" * 512),
        crowded_wheel(tmp_path / "t2" / "agentos_env_crowd-1.0-py3-none-any.whl", "agentos-env-crowd", 100),
        raw_wheel(tmp_path / "t3" / "agentos_env_dd-1.0-py3-none-any.whl", wheel_members("agentos-env-dd", "1.0")),
    ]
    for twin in twins:
        status, text = _post(server.url, token, twin)
        assert status == 200 and text.startswith("published"), text
    names = {c["name"] for c in json.loads(catalogue.read_text())["components"]}
    assert {"inflate", "crowd", "dd"} <= names and "2048" not in names


def test_a_file_has_one_url_and_pages_carry_no_control_characters(server, tmp_path):  # point 4
    assert _status(f"{server.url}/catalogue.json") == 200
    for path in ("/catalogue.json/", "/index.html/", "/catalogue.json//", "/static/style.css/"):
        assert _status(server.url + path) == 404, path
    assert _status(f"{server.url}/simple/") == 200 and _status(f"{server.url}/simple/agentos-env-seed/") == 200
    token = server.token("mallory")
    wheel = env_wheel(
        tmp_path / "w", "ctl", "1.0", summary="bell\x07 esc\x1b[2J", description="nul\x00 esc\x1b]0;x\x07\nok\t"
    )
    status, text = _post(server.url, token, wheel)
    assert status == 200, text
    root_page = (server.root / "index.html").read_text()
    page = (server.root / "components" / "environment" / "ctl.html").read_text()
    for html in (root_page, page):
        assert not any(ch in html for ch in "\x00\x07\x1b"), html
    assert "esc?[2J" in root_page and "nul? esc?]0;x?\nok\t" in page  # replaced, as in terminal output
