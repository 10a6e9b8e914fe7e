"""The simple repository API pages, as static files.

For every project: ``simple/<project>/index.html`` (PEP 503 links with ``#sha256=``, PEP 629
repository version, ``data-requires-python``, PEP 592 ``data-yanked``, PEP 658/714
``data-dist-info-metadata`` and ``data-core-metadata``) and ``simple/<project>/index.json`` (the
same data as PEP 691 JSON, API version 1.1). The root page lists the projects in both formats.
Every value is HTML-escaped. :func:`parse_project_html` reads such pages back (from any PEP 503
index).
"""

from __future__ import annotations

import json
from html import escape
from html.parser import HTMLParser

API_VERSION = "1.1"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def file_entry(art, url: str, upload_time: str, yanked=False) -> dict:
    """A PEP 691 file dictionary for an :class:`~._artifacts.Artifact` served at ``url``."""
    import hashlib

    entry = {"filename": art.filename, "url": url, "hashes": {"sha256": art.sha256}}
    if art.requires_python:
        entry["requires-python"] = art.requires_python
    meta = {"sha256": hashlib.sha256(art.metadata).hexdigest()} if art.metadata else False
    entry["core-metadata"] = meta
    entry["dist-info-metadata"] = meta
    entry["yanked"] = yanked
    entry["size"] = art.size
    entry["upload-time"] = upload_time
    return entry


def _head(title: str) -> list[str]:
    return [
        "<!DOCTYPE html>",
        "<html>",
        "  <head>",
        f'    <meta name="pypi:repository-version" content="{API_VERSION}">',
        f"    <title>{escape(title)}</title>",
        "  </head>",
        "  <body>",
        f"    <h1>{escape(title)}</h1>",
    ]


def project_html(project: str, files: list[dict]) -> str:
    lines = _head(f"Links for {project}")
    for f in files:
        attrs = [f'href="{escape(f["url"])}#sha256={escape(f["hashes"]["sha256"])}"']
        if f.get("requires-python"):
            attrs.append(f'data-requires-python="{escape(f["requires-python"])}"')
        meta = f.get("core-metadata")
        if meta:
            value = escape(f"sha256={meta['sha256']}")
            attrs += [f'data-dist-info-metadata="{value}"', f'data-core-metadata="{value}"']
        if f.get("yanked"):
            reason = f["yanked"] if isinstance(f["yanked"], str) else ""
            attrs.append(f'data-yanked="{escape(reason)}"')
        lines.append(f"    <a {' '.join(attrs)}>{escape(f['filename'])}</a><br>")
    return "\n".join(lines + ["  </body>", "</html>", ""])


def project_json(project: str, files: list[dict], versions: list[str]) -> str:
    page = {"meta": {"api-version": API_VERSION}, "name": project, "versions": versions, "files": files}
    return json.dumps(page, indent=1, sort_keys=False) + "\n"


def root_html(projects: list[str]) -> str:
    lines = _head("Simple index")
    lines += [f'    <a href="{escape(p)}/">{escape(p)}</a><br>' for p in projects]
    return "\n".join(lines + ["  </body>", "</html>", ""])


def root_json(projects: list[str]) -> str:
    page = {"meta": {"api-version": API_VERSION}, "projects": [{"name": p} for p in projects]}
    return json.dumps(page, separators=(",", ":")) + "\n"


class _LinkParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.files: list[dict] = []
        self._current: dict | None = None

    def handle_starttag(self, tag, attrs):
        if tag != "a":
            return
        a = dict(attrs)
        href = a.get("href") or ""
        url, _, fragment = href.partition("#")
        hashes = {}
        if "=" in fragment:
            algo, _, value = fragment.partition("=")
            hashes[algo] = value
        meta = a.get("data-core-metadata") or a.get("data-dist-info-metadata")
        entry = {"filename": "", "url": url, "hashes": hashes, "yanked": False}
        if a.get("data-requires-python"):
            entry["requires-python"] = a["data-requires-python"]
        if meta and "=" in meta:
            algo, _, value = meta.partition("=")
            entry["core-metadata"] = {algo: value}
        if "data-yanked" in a:
            entry["yanked"] = a["data-yanked"] or True
        self._current = entry
        self.files.append(entry)

    def handle_data(self, data):
        if self._current is not None:
            self._current["filename"] += data.strip()

    def handle_endtag(self, tag):
        if tag == "a" and self._current is not None:
            if not self._current["filename"]:
                self._current["filename"] = self._current["url"].rsplit("/", 1)[-1]
            self._current = None


def parse_project_html(text: str) -> list[dict]:
    """The file entries of a PEP 503 project page, shaped like PEP 691 file dictionaries."""
    parser = _LinkParser()
    parser.feed(text)
    return parser.files
