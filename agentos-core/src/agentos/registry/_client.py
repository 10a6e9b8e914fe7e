"""Reading an index over ``file://`` or ``http(s)://``: catalogue, project pages, files.

Which index: ``--index-url`` on the command line, else ``$AGENTOS_INDEX_URL``, else the agent's
``[agentos] index-url``, else the user's ``agentos config set index-url``, else the ``index/``
folder of the AgentOS source checkout that this code runs from. An index URL names the index's
root (the folder holding ``catalogue.json`` and
``simple/``); a URL ending in ``/simple`` is accepted too, as is a plain folder path.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import urllib.error
import urllib.parse
import urllib.request

from ..errors import AgentOSError, UsageError

INDEX_URL_ENV = "AGENTOS_INDEX_URL"
TIMEOUT = 30  # seconds for each network operation
PAGE_DEADLINE = 60  # seconds for a whole page or catalogue request
FILE_DEADLINE = 900  # seconds for a whole file download
MAX_PAGE = 64 << 20  # bytes of a page or catalogue
MAX_FILE = 2 << 30  # bytes of a distribution file


class IndexError_(AgentOSError):
    """The index cannot be read, or lists something that is not there."""


class HashMismatchError(AgentOSError):
    """A downloaded file is not the one that the index lists."""


def embedded_index_dir() -> str | None:
    """``<checkout>/index`` when running from an AgentOS source checkout, else None."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, "..", "..", "..", ".."))
    if os.path.isdir(os.path.join(root, "agentos-core")) and os.path.isdir(os.path.join(root, "index")):
        return os.path.join(root, "index")
    return None


def to_url(location: str) -> str:
    """Normalize an index location to the URL of its root, ending in ``/``."""
    location = location.strip()
    if "://" not in location:
        location = urllib.parse.urljoin("file:", urllib.request.pathname2url(os.path.abspath(location)))
    location = location.rstrip("/")
    if location.endswith("/simple"):
        location = location[: -len("/simple")]
    return location + "/"


def resolve_index_url(explicit: str | None = None, config=None) -> str:
    for candidate in (
        explicit,
        os.environ.get(INDEX_URL_ENV),
        config.meta_value("index-url") if config is not None else None,
        user_index_url(),
    ):
        if candidate:
            return to_url(str(candidate))
    embedded = embedded_index_dir()
    if embedded:
        return to_url(embedded)
    raise UsageError(
        "no package index configured: run 'agentos config set index-url URL' once "
        f"(or pass --index-url URL, or set {INDEX_URL_ENV})"
    )


def user_index_url() -> str | None:
    from ._user_config import get

    return get("index-url")


def local_path(url: str) -> str | None:
    """The filesystem path of a ``file://`` URL, else None."""
    parsed = urllib.parse.urlsplit(url)
    return urllib.request.url2pathname(parsed.path) if parsed.scheme == "file" else None


class IndexClient:
    """A read-only view of one index."""

    def __init__(self, url: str):
        self.url = to_url(url)
        self.simple_url = self.url + "simple/"

    def _open(self, url: str, accept: str | None = None, *, into=None) -> bytes | None:
        """The bytes at ``url``; None when it does not exist; IndexError_ when unreachable.

        Over HTTP every request is bounded in time and size (:mod:`._bounded_http`): a page or the
        catalogue by :data:`PAGE_DEADLINE` and :data:`MAX_PAGE`; with ``into`` (a binary file
        that receives a distribution file) by :data:`FILE_DEADLINE` and :data:`MAX_FILE`.
        """
        from . import _bounded_http

        path = local_path(url)
        try:
            if path is not None:
                if not os.path.exists(self._root_path()):
                    raise IndexError_(f"cannot reach the package index at {self.url}: no such folder")
                with open(path, "rb") as f:
                    return f.read()
            limit, deadline = (MAX_PAGE, PAGE_DEADLINE) if into is None else (MAX_FILE, FILE_DEADLINE)
            return _bounded_http.get(
                url,
                headers={"Accept": accept} if accept else {},
                limit=limit,
                deadline=deadline,
                timeout=TIMEOUT,
                into=into,
            )
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        except _bounded_http.TooLarge:
            raise IndexError_(f"{url} is larger than {limit >> 20} MiB: refused") from None
        except _bounded_http.TooSlow:
            raise IndexError_(f"{url} took longer than {deadline} s: gave up") from None
        except urllib.error.HTTPError as exc:
            if exc.code in (404, 410):
                return None
            raise IndexError_(f"cannot read {url}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise IndexError_(f"cannot reach the package index at {self.url}: {reason}") from None

    def _root_path(self) -> str:
        return local_path(self.url) or ""

    def catalogue(self) -> dict:
        data = self._open(self.url + "catalogue.json")
        if data is None:
            if self._open(self.simple_url) is None and self._open(self.simple_url + "index.html") is None:
                raise IndexError_(f"no package index at {self.url} (no catalogue.json, no simple/)")
            raise IndexError_(f"{self.url} has no catalogue.json: not an AgentOS index, search is unavailable")
        try:
            return json.loads(data)
        except ValueError as exc:
            raise IndexError_(f"{self.url}catalogue.json is not valid JSON ({exc})") from None

    def project_files(self, project: str) -> list[dict] | None:
        """File entries (PEP 691 shape, absolute ``url``) of a project; None if not listed."""
        from ._pages import parse_project_html

        page_url = f"{self.simple_url}{project}/"
        data = self._open(page_url + "index.json")
        if data is not None:
            files = json.loads(data)["files"]
        else:
            html = self._open(page_url + "index.html") if local_path(page_url) else self._open(page_url)
            if html is None:
                return None
            files = parse_project_html(html.decode("utf-8", "replace"))
        remote = local_path(self.url) is None
        kept = []
        for entry in files:
            if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
                continue
            entry["url"] = urllib.parse.urljoin(page_url, entry["url"])
            if remote and urllib.parse.urlsplit(entry["url"]).scheme not in ("http", "https"):
                continue  # an index on the network never points at local files
            kept.append(entry)
        return kept

    def fetch_file(self, entry: dict) -> str:
        """A local path to the file of ``entry``, its sha256 checked against the index.

        The name and hash come from the index, so both are validated first (a plain wheel/sdist
        file name, 64 lowercase hex digits); a download goes to a temporary file inside the cache,
        is hashed there, and only a matching file is moved into place.
        """
        from .._safe_text import printable
        from ._artifacts import SHA256_RE, valid_filename

        filename = entry.get("filename")
        expected = (entry.get("hashes") or {}).get("sha256")
        if not isinstance(filename, str) or not valid_filename(filename):
            raise IndexError_(f"the index lists an invalid file name {printable(repr(filename))}; refusing it")
        if not expected:
            raise IndexError_(f"the index lists {filename} without a sha256 hash; refusing to install it")
        if not isinstance(expected, str) or not SHA256_RE.match(expected):
            raise IndexError_(f"the index lists {filename} with an invalid sha256 {printable(repr(expected))}")
        path = local_path(entry["url"])
        if path is None:
            from ..host import cache_dir

            folder = os.path.join(cache_dir(), "downloads", expected)
            path = os.path.join(folder, filename)
            if not (os.path.exists(path) and _sha256(path) == expected):
                os.makedirs(folder, exist_ok=True)
                import tempfile

                fd, tmp = tempfile.mkstemp(prefix=".download-", suffix=".part", dir=folder)
                try:
                    with os.fdopen(fd, "wb") as f:
                        data = self._open(entry["url"], into=f)  # streamed to the file, bounded
                    if data is None:
                        raise IndexError_(f"the index lists {filename} but {entry['url']} does not exist")
                    actual = _sha256(tmp)
                    if actual != expected:
                        raise HashMismatchError(
                            f"sha256 of {filename} does not match the index (expected {expected[:16]}..., "
                            f"got {actual[:16]}...): the file was altered; nothing was installed"
                        )
                    os.replace(tmp, path)
                finally:
                    if os.path.exists(tmp):
                        os.unlink(tmp)
        elif not os.path.exists(path):
            raise IndexError_(f"the index lists {filename} but {path} does not exist")
        actual = _sha256(path)
        if actual != expected:
            raise HashMismatchError(
                f"sha256 of {filename} does not match the index (expected {expected[:16]}..., "
                f"got {actual[:16]}...): the file was altered; nothing was installed"
            )
        return path


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def choose_file(files: list[dict], project: str, version: str | None = None) -> dict:
    """The file to install: the newest (or the pinned) version with a wheel for this interpreter.

    Yanked files are skipped unless ``version`` pins them exactly (PEP 592); wheels are preferred
    over sdists; ``data-requires-python`` is honoured.
    """
    import sys

    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.tags import sys_tags
    from packaging.utils import parse_sdist_filename, parse_wheel_filename
    from packaging.version import InvalidVersion, Version

    try:
        wanted = Version(version) if version else None
    except InvalidVersion:
        raise UsageError(f"invalid version {version!r}") from None
    supported = {str(t): i for i, t in enumerate(sys_tags())}
    python = ".".join(map(str, sys.version_info[:3]))
    candidates, seen = [], set()
    from ._artifacts import valid_filename

    for entry in files:
        name = entry.get("filename")
        if not isinstance(name, str) or not valid_filename(name):
            continue  # a hostile or broken index: never a candidate
        try:
            if name.endswith(".whl"):
                _, v, _, tags = parse_wheel_filename(name)
                ranks = [supported[str(t)] for t in tags if str(t) in supported]
                if not ranks:
                    continue
                rank = (0, min(ranks))
            else:
                v = parse_sdist_filename(name)[1]
                rank = (1, 0)
        except ValueError:
            continue
        seen.add(str(v))
        if wanted is not None and v != wanted:
            continue
        if entry.get("yanked") and wanted is None:
            continue
        try:
            if entry.get("requires-python") and python not in SpecifierSet(entry["requires-python"]):
                continue
        except InvalidSpecifier:
            pass
        candidates.append((v, rank, entry))
    if not candidates:
        if wanted is not None:
            have = ", ".join(sorted(seen, key=Version)) or "none"
            raise UsageError(f"{project} has no installable version {version} (versions: {have})")
        raise UsageError(f"{project} has no version installable on Python {python} (all yanked or incompatible)")
    finals = [c for c in candidates if not c[0].is_prerelease] or candidates
    best = max(c[0] for c in finals)
    return min((c for c in finals if c[0] == best), key=lambda c: c[1])[2]


def search(kind: str | None = None, query: str | None = None, index_url: str | None = None) -> list[dict]:
    """Catalogue rows matching ``kind`` and ``query`` (a substring of name, package or description)."""
    from ..host import canonical_kind, normalize

    if kind:
        try:
            kind = canonical_kind(kind)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    client = IndexClient(resolve_index_url(index_url))
    rows = client.catalogue().get("components", [])
    q = (query or "").lower()
    out = []
    for row in rows:
        if kind and row["kind"] != kind:
            continue
        hay = " ".join([normalize(row["name"]), row["package"].lower(), row.get("description", "").lower()])
        if q and q not in hay and normalize(q) not in hay:
            continue
        out.append({"index": client.url, **row})
    return out
