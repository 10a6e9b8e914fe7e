"""Find installed components from entry-point metadata, without importing them.

Scanning every distribution's metadata costs tens of milliseconds, so the result is cached in a
small JSON file keyed by the interpreter and the modification times of the ``sys.path`` folders:
installing or removing any distribution changes its folder and so invalidates the cache.
"""

from __future__ import annotations

import marshal
import os
import re
import sys

from ._names import GROUP_PREFIX, KINDS, normalize

_CACHE_FORMAT = 2
COMMAND_KIND = "command"
_VALUE_RE = re.compile(r"^\s*[A-Za-z_][\w.]*\s*(:\s*[A-Za-z_][\w.]*\s*)?(\[[^\]]*\])?\s*$")


class ComponentSpec:
    """Everything known about a component before it is imported."""

    __slots__ = ("kind", "name", "value", "package", "version", "summary", "source", "problem")

    def __init__(
        self,
        kind: str,
        name: str,
        value: str,
        package: str,
        version: str,
        summary: str = "",
        source: str = "entry-point",
        problem: str = "",
    ):
        self.kind = kind
        self.name = name
        self.value = value  # "module:attribute", as in the entry point
        self.package = package  # the distribution that provides it ("" for local components)
        self.version = version
        self.summary = summary
        self.source = source  # "entry-point", "local" (agent.ini) or "registered" (acr.register)
        self.problem = problem  # known without importing: a malformed entry point, a duplicate...

    def as_tuple(self) -> tuple:
        return tuple(getattr(self, field) for field in self.__slots__)

    def replace(self, **changes) -> ComponentSpec:
        values = dict(zip(self.__slots__, self.as_tuple(), strict=True))
        values.update(changes)
        return ComponentSpec(**values)

    def __eq__(self, other) -> bool:
        return isinstance(other, ComponentSpec) and self.as_tuple() == other.as_tuple()

    def __hash__(self) -> int:
        return hash(self.as_tuple())

    def __repr__(self) -> str:
        return f"ComponentSpec({self.kind!r}, {self.name!r}, {self.value!r}, {self.package!r}, {self.version!r})"

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, normalize(self.name)

    @property
    def module(self) -> str:
        return self.value.split(":", 1)[0].strip()


def cache_dir() -> str:
    """Where AgentOS keeps caches: ``$AGENTOS_CACHE_DIR`` or the XDG cache folder."""
    base = os.environ.get("AGENTOS_CACHE_DIR")
    if base:
        return base
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "agentos")


def _fingerprint() -> list:
    stamps = []
    for entry in sys.path:
        try:
            stamps.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            stamps.append((entry, None))
    return stamps


def _cache_path() -> str:
    import zlib

    ident = "\0".join([sys.executable, sys.prefix, *sys.path]).encode()
    key = f"{zlib.crc32(ident):08x}{zlib.adler32(ident):08x}"  # a collision only costs a rescan
    return os.path.join(cache_dir(), f"components-{key}.marshal")


def scan_entry_points() -> list[ComponentSpec]:
    """Read every installed distribution's ``agentos.*`` entry points (no plugin import)."""
    from importlib import metadata

    specs: list[ComponentSpec] = []
    seen_dists: set[str] = set()
    for dist in metadata.distributions():
        try:
            dist_name = dist.metadata["Name"] or ""
        except Exception:  # a broken dist-info folder must not break discovery
            continue
        if not dist_name or normalize(dist_name) in seen_dists:
            continue  # the first distribution on sys.path wins, as for imports
        seen_dists.add(normalize(dist_name))
        eps = [ep for ep in dist.entry_points if ep.group.startswith(GROUP_PREFIX)]
        if not eps:
            continue
        summary = dist.metadata.get("Summary") or ""
        for ep in eps:
            kind = ep.group[len(GROUP_PREFIX) :]
            kind = COMMAND_KIND if kind == "commands" else kind  # CLI subcommands offered by plugins
            if kind not in KINDS and kind != COMMAND_KIND:
                continue  # "agentos.plugins" and other groups are not components
            problem = "" if _VALUE_RE.match(ep.value) else f"malformed entry point {ep.value!r}"
            specs.append(ComponentSpec(kind, ep.name, ep.value, dist_name, dist.version, summary, problem=problem))
    return specs


def discover(use_cache: bool = True) -> list[ComponentSpec]:
    """All installed components, from the cache when it is still valid."""
    return [s for s in _discover_all(use_cache) if s.kind != COMMAND_KIND]


def discover_commands(use_cache: bool = True) -> list[ComponentSpec]:
    """Subcommands that plugins add (entry points ``agentos.commands``: name = module), not imported."""
    return [s for s in _discover_all(use_cache) if s.kind == COMMAND_KIND]


def _discover_all(use_cache: bool) -> list[ComponentSpec]:
    path = _cache_path()
    stamps = _fingerprint()
    if use_cache:
        try:
            with open(path, "rb") as f:
                cached = marshal.load(f)
            if cached.get("format") == _CACHE_FORMAT and cached.get("fingerprint") == stamps:
                return [ComponentSpec(*item) for item in cached["specs"]]
        except (OSError, ValueError, TypeError, KeyError, EOFError, AttributeError):
            pass
    specs = scan_entry_points()
    if use_cache:
        _write_cache(path, {"format": _CACHE_FORMAT, "fingerprint": stamps, "specs": [s.as_tuple() for s in specs]})
    return specs


def _write_cache(path: str, data: dict) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            marshal.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home only costs speed
