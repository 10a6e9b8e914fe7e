"""The component host: knows every component by its spec and imports one only when it is used.

Errors are collected per component (as napari/npe2 does): a plugin that cannot be imported is
reported with its error and never breaks the host or the other components (see ``_boundary``).
"""

from __future__ import annotations

import importlib
import json
import os
import sys

from ..errors import ComponentLoadError, UnknownComponentError
from . import _discovery
from ._boundary import DISABLE_ENV, passes_through, stdout_to_stderr
from ._discovery import ComponentSpec
from ._names import KINDS, canonical_kind, did_you_mean, normalize


def _disabled_patterns() -> set[str]:
    raw = os.environ.get(DISABLE_ENV, "")
    return {normalize(p.strip().replace(":", ".")) for p in raw.split(",") if p.strip()}


def _is_disabled(spec: ComponentSpec, patterns: set[str]) -> bool:
    if not patterns:
        return False
    return bool({normalize(spec.package), normalize(f"{spec.kind}.{spec.name}"), normalize(spec.name)} & patterns)


class ComponentHost:
    """Specs of all components, the ones loaded so far, and the errors met on the way."""

    def __init__(self, specs: list[ComponentSpec] | None = None):
        self._given = specs
        self._specs: dict[tuple[str, str], ComponentSpec] | None = None
        self._objects: dict[tuple[str, str], object] = {}
        self.errors: dict[tuple[str, str], str] = {}
        self._local_dirs: dict[tuple[str, str], str] = {}

    # -- what is there -------------------------------------------------------------------------
    def _index(self) -> dict[tuple[str, str], ComponentSpec]:
        if self._specs is None:
            found = self._given if self._given is not None else _discovery.discover()
            patterns = _disabled_patterns()
            self._specs = {}
            # a disabled package never takes a name from an enabled one: enabled specs claim names first
            disabled = [_replace(s, problem=f"disabled by {DISABLE_ENV}") for s in found if _is_disabled(s, patterns)]
            for spec in [s for s in found if not _is_disabled(s, patterns)] + disabled:
                if spec.key in self._specs:
                    other = self._specs[spec.key]
                    if not _is_disabled(spec, patterns):
                        spec = _replace(spec, problem=f"duplicate name: also provided by {other.package}")
                    self._specs[(spec.kind, f"{spec.key[1]}@{spec.package}")] = spec
                    continue
                self._specs[spec.key] = spec
        return self._specs

    def specs(self, kind: str | None = None) -> list[ComponentSpec]:
        """All specs (of one kind), sorted by kind and name."""
        kind = canonical_kind(kind) if kind else None
        found = [s for s in self._index().values() if kind is None or s.kind == kind]
        return sorted(found, key=lambda s: (KINDS.index(s.kind), normalize(s.name), s.package))

    def names(self, kind: str) -> list[str]:
        return [s.name for s in self.specs(kind) if "@" not in normalize(s.name)]

    def find(self, kind: str, name: str) -> ComponentSpec | None:
        return self._index().get((canonical_kind(kind), normalize(str(name))))

    def spec(self, kind: str, name: str) -> ComponentSpec:
        """The spec of a component; unknown names get a "did you mean" hint."""
        kind = canonical_kind(kind)
        spec = self.find(kind, name)
        if spec is None:
            names = self.names(kind)
            known = f" (installed: {', '.join(names)})" if names else " (none installed)"
            raise UnknownComponentError(f"no {kind} named {name!r}{did_you_mean(str(name), names)}{known}")
        return spec

    # -- adding components without a package ------------------------------------------------------
    def register(self, kind: str, name: str, obj: object, *, value: str = "", source: str = "registered"):
        """Make ``obj`` (a class or factory) the component ``kind``/``name``, replacing any other."""
        kind = canonical_kind(kind)
        spec = ComponentSpec(kind, str(name), value or _describe(obj), "", "", source=source)
        self._index()[spec.key] = spec
        self._objects[spec.key] = obj
        self.errors.pop(spec.key, None)
        return spec

    def add_local(self, kind: str, name: str, value: str, base_dir: str, runs_dir: str | None = None) -> ComponentSpec:
        """A component that an agent.ini ``source =`` points at: a file of the agent's own code in
        ``base_dir`` (never in ``runs_dir``) or the value of an installed component's entry point
        (``_sources``); anything else gets a ``problem`` and is never imported."""
        from ._sources import source_problem

        kind = canonical_kind(kind)
        problem = source_problem(value, base_dir, self._index().values(), runs_dir)
        spec = ComponentSpec(kind, str(name), value, "", "", source="local", problem=problem)
        self._index()[spec.key] = spec
        self._objects.pop(spec.key, None)
        self._local_dirs[spec.key] = base_dir
        return spec

    # -- loading ---------------------------------------------------------------------------------
    def load(self, kind: str, name: str) -> object:
        """Import a component (once) and return its class or factory."""
        spec = self.spec(kind, name)
        if spec.key in self._objects:
            return self._objects[spec.key]
        label = f"{spec.kind} {spec.name!r}" + (f" ({spec.package} {spec.version})" if spec.package else "")
        if spec.problem:
            raise ComponentLoadError(f"{label} cannot be used: {spec.problem}")
        if spec.key in self.errors:
            raise ComponentLoadError(f"{label} failed to load: {self.errors[spec.key]}")
        try:
            with stdout_to_stderr():
                obj, module = _import_value(spec.value, self._local_dirs.get(spec.key))
        except BaseException as exc:  # any error inside plugin code stays with that plugin, even SystemExit
            if passes_through(exc):
                raise
            message = _one_line(exc)
            self.errors[spec.key] = message
            _record_error(spec, message)
            raise ComponentLoadError(f"{label} failed to load: {message}") from exc
        self._objects[spec.key] = obj
        if module is not None:
            from ._hooks import register_module

            register_module(module, name=f"{spec.kind}.{spec.name}")
        return obj

    def check(self, kind: str | None = None) -> dict[tuple[str, str], str]:
        """Import every component (of one kind); return the problems found, by key."""
        problems = {}
        for spec in self.specs(kind):
            try:
                if spec.problem:
                    raise ComponentLoadError(spec.problem)
                self.load(spec.kind, spec.name)
            except ComponentLoadError as exc:
                problems[spec.key] = spec.problem or self.errors.get(spec.key, str(exc))
        return problems


def _replace(spec: ComponentSpec, **changes) -> ComponentSpec:
    return spec.replace(**changes)


def _describe(obj: object) -> str:
    return f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__qualname__', type(obj).__name__)}"


def _one_line(exc: BaseException) -> str:
    import traceback

    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
    return (text[0] if text else type(exc).__name__) + where


def _import_value(value: str, base_dir: str | None):
    """Import ``module:attr`` or ``path/file.py:attr``; return the object and its module."""
    target, _, attr = value.partition(":")
    target, attr = target.strip(), attr.strip()
    if target.endswith(".py"):  # one name, defined in that very file (see _sources)
        from ._sources import _IDENTIFIER_RE, defined_in

        if not _IDENTIFIER_RE.match(attr):
            raise ImportError(f"{value!r}: the name after the colon must be one identifier")
        path = target if os.path.isabs(target) else os.path.join(base_dir or os.getcwd(), target)
        module = _import_file(path)
        return defined_in(getattr(module, attr), module, value), module
    else:  # an installed component's module (see _sources): imported as its entry point is
        module = importlib.import_module(target)
    obj = module
    for part in attr.split(".") if attr else []:
        obj = getattr(obj, part)
    return obj, module


def _import_file(path: str):
    import hashlib
    import importlib.util

    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    stem = os.path.splitext(os.path.basename(path))[0]
    mod_name = f"agentos_local_{stem}_{hashlib.sha1(path.encode()).hexdigest()[:8]}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(0, directory)  # so the file can import its neighbours
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[mod_name]
        raise
    return module


def _errors_path() -> str:
    return os.path.join(_discovery.cache_dir(), "load-errors.json")


def recorded_errors() -> dict[str, str]:
    """Load errors seen by earlier processes, keyed by ``package==version kind name``."""
    try:
        with open(_errors_path(), encoding="utf-8") as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def error_key(spec: ComponentSpec) -> str:
    return f"{normalize(spec.package)}=={spec.version} {spec.kind} {normalize(spec.name)}"


def _record_error(spec: ComponentSpec, message: str) -> None:
    if not spec.package:
        return
    errors = recorded_errors()
    errors[error_key(spec)] = message
    try:
        os.makedirs(os.path.dirname(_errors_path()), exist_ok=True)
        tmp = f"{_errors_path()}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(errors, f)
        os.replace(tmp, _errors_path())
    except OSError:
        pass
