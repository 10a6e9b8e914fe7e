"""Reading and validating the files that get published: wheels and sdists.

Everything the index shows about a file comes from the file itself: the core metadata
(``METADATA``/``PKG-INFO``, parsed with the e-mail parser as the core-metadata spec says), the
entry points (the wheel's ``entry_points.txt``), the sha256 of its bytes. Any problem becomes one
:class:`PublishError` line that names the file.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field

from ..errors import UsageError
from ..host._names import GROUP_PREFIX, KINDS, is_valid_name, normalize, parse_distribution_name

WHEEL_SUFFIX = ".whl"
SDIST_SUFFIXES = (".tar.gz", ".zip")
_EP_VALUE_RE = re.compile(r"^\s*[A-Za-z_][\w.]*\s*(:\s*[A-Za-z_][\w.]*\s*)?(\[[^\]]*\])?\s*$")


class PublishError(UsageError):
    """A file that cannot be published (malformed, misnamed, or clashing with a published one)."""


@dataclass
class Artifact:
    """One distribution file and what the index needs to know about it."""

    path: str
    filename: str
    project: str  # normalized (PEP 503) project name
    name: str  # the name as written in the metadata
    version: str
    sha256: str
    size: int
    metadata: bytes  # the core metadata file, served as ``<file>.metadata`` (wheels only)
    summary: str = ""
    requires_python: str = ""
    requires: list[str] = field(default_factory=list)
    entry_points: dict[str, dict[str, str]] = field(default_factory=dict)  # group -> name -> value
    packagetype: str = "bdist_wheel"

    @property
    def components(self) -> list[dict]:
        """The ``agentos.<kind>`` entry points as ``{"kind", "name", "entry_point"}``."""
        rows = []
        for group, eps in sorted(self.entry_points.items()):
            kind = group[len(GROUP_PREFIX) :] if group.startswith(GROUP_PREFIX) else ""
            if kind in KINDS:
                rows += [{"kind": kind, "name": n, "entry_point": v} for n, v in sorted(eps.items())]
        return rows


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_distribution_file(filename: str) -> bool:
    return filename.endswith(WHEEL_SUFFIX) or filename.endswith(SDIST_SUFFIXES)


def read_artifact(path: str) -> Artifact:
    """Read a wheel or sdist; raises :class:`PublishError` with one line if it is malformed."""
    filename = os.path.basename(path)
    if not os.path.isfile(path):
        raise PublishError(f"{path}: no such file")
    try:
        if filename.endswith(WHEEL_SUFFIX):
            return _read_wheel(path, filename)
        if filename.endswith(SDIST_SUFFIXES):
            return _read_sdist(path, filename)
    except PublishError:
        raise
    except Exception as exc:  # zipfile/tarfile/email raise many types on broken input
        raise PublishError(f"{filename}: malformed distribution ({type(exc).__name__}: {exc})") from None
    raise PublishError(f"{filename}: not a wheel (.whl) or sdist (.tar.gz, .zip)")


def _read_wheel(path: str, filename: str) -> Artifact:
    import zipfile

    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        name, version, _, _ = parse_wheel_filename(filename)
    except InvalidWheelFilename as exc:
        raise PublishError(f"{filename}: invalid wheel filename ({exc})") from None
    if not zipfile.is_zipfile(path):
        raise PublishError(f"{filename}: malformed wheel (not a zip archive)")
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        dist_infos = {n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")}
        if len(dist_infos) != 1:
            raise PublishError(f"{filename}: malformed wheel (expected one .dist-info folder, found {len(dist_infos)})")
        (dist_info,) = dist_infos
        if f"{dist_info}/METADATA" not in names:
            raise PublishError(f"{filename}: malformed wheel (no {dist_info}/METADATA)")
        if f"{dist_info}/WHEEL" not in names:
            raise PublishError(f"{filename}: malformed wheel (no {dist_info}/WHEEL)")
        metadata = zf.read(f"{dist_info}/METADATA")
        ep_text = zf.read(f"{dist_info}/entry_points.txt").decode() if f"{dist_info}/entry_points.txt" in names else ""
    art = _from_metadata(path, filename, metadata, str(name), str(version))
    art.entry_points = parse_entry_points(ep_text, filename)
    return art


def _read_sdist(path: str, filename: str) -> Artifact:
    from packaging.utils import InvalidSdistFilename, parse_sdist_filename

    try:
        name, version = parse_sdist_filename(filename)
    except InvalidSdistFilename as exc:
        raise PublishError(f"{filename}: invalid sdist filename ({exc})") from None
    members = _sdist_members(path)
    pkg_info = next((m for m in members if m.count("/") == 1 and m.endswith("/PKG-INFO")), None)
    if pkg_info is None:
        raise PublishError(f"{filename}: malformed sdist (no top-level PKG-INFO)")
    top = pkg_info.split("/", 1)[0]
    metadata = _sdist_read(path, pkg_info)
    art = _from_metadata(path, filename, metadata, str(name), str(version))
    art.packagetype = "sdist"
    art.metadata = b""  # an sdist's PKG-INFO may be dynamic: pip must not trust it as PEP 658 metadata
    eps = next((m for m in members if m.startswith(f"{top}/") and m.endswith(".egg-info/entry_points.txt")), None)
    if eps:
        art.entry_points = parse_entry_points(_sdist_read(path, eps).decode(), filename)
    elif f"{top}/pyproject.toml" in members:
        art.entry_points = _pyproject_entry_points(_sdist_read(path, f"{top}/pyproject.toml"), filename)
    return art


def _sdist_members(path: str) -> list[str]:
    if path.endswith(".zip"):
        import zipfile

        with zipfile.ZipFile(path) as zf:
            return zf.namelist()
    import tarfile

    with tarfile.open(path) as tf:
        return tf.getnames()


def _sdist_read(path: str, member: str) -> bytes:
    if path.endswith(".zip"):
        import zipfile

        with zipfile.ZipFile(path) as zf:
            return zf.read(member)
    import tarfile

    with tarfile.open(path) as tf:
        f = tf.extractfile(member)
        if f is None:
            raise PublishError(f"{os.path.basename(path)}: malformed sdist ({member} is not a file)")
        return f.read()


def _pyproject_entry_points(data: bytes, filename: str) -> dict[str, dict[str, str]]:
    import tomllib

    project = tomllib.loads(data.decode()).get("project", {})
    eps = {g: dict(v) for g, v in project.get("entry-points", {}).items()}
    _check_entry_points(eps, filename)
    return eps


def _from_metadata(path: str, filename: str, metadata: bytes, fname: str, fversion: str) -> Artifact:
    from email.parser import BytesParser

    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    msg = BytesParser().parsebytes(metadata)
    name, version = msg.get("Name"), msg.get("Version")
    if not name or not version:
        raise PublishError(f"{filename}: malformed metadata (Name and Version are required)")
    try:
        parsed = Version(version)
    except InvalidVersion:
        raise PublishError(f"{filename}: invalid version {version!r} in metadata") from None
    if canonicalize_name(name) != canonicalize_name(fname) or parsed != Version(fversion):
        raise PublishError(f"{filename}: metadata says {name} {version}, which does not match the file name")
    return Artifact(
        path=path,
        filename=filename,
        project=canonicalize_name(name),
        name=name,
        version=str(parsed),
        sha256=sha256_file(path),
        size=os.path.getsize(path),
        metadata=metadata,
        summary=(msg.get("Summary") or "").strip(),
        requires_python=(msg.get("Requires-Python") or "").strip(),
        requires=[r.strip() for r in msg.get_all("Requires-Dist") or []],
    )


def parse_entry_points(text: str, filename: str = "") -> dict[str, dict[str, str]]:
    """``entry_points.txt`` (INI) -> ``{group: {name: value}}``, with malformed values refused."""
    import configparser

    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None, strict=False)
    parser.optionxform = str  # entry point names are case-sensitive
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise PublishError(f"{filename}: malformed entry_points.txt ({str(exc).splitlines()[0]})") from None
    eps = {group: dict(parser.items(group)) for group in parser.sections()}
    _check_entry_points(eps, filename)
    return eps


def _check_entry_points(eps: dict[str, dict[str, str]], filename: str) -> None:
    for group, items in eps.items():
        if not group.startswith(GROUP_PREFIX):
            continue
        for name, value in items.items():
            if not _EP_VALUE_RE.match(value):
                raise PublishError(f"{filename}: malformed entry point {name} = {value!r} in [{group}]")
            if group[len(GROUP_PREFIX) :] in KINDS and not is_valid_name(name):
                raise PublishError(f"{filename}: invalid component name {name!r} in [{group}]")


def check_convention(art: Artifact, *, library: bool = False) -> None:
    """A component distribution is ``agentos-<kind>-<name>`` and declares that component.

    Distributions without any ``agentos.<kind>`` entry point (such as ``agentos-core``) are
    refused unless ``library`` is true: they are then published as libraries.
    """
    components = art.components
    parsed = parse_distribution_name(art.project)
    if not components:
        if library:
            return
        kinds = ", ".join(f"agentos.{k}" for k in KINDS)
        raise PublishError(
            f"{art.filename}: declares no component entry point ({kinds}); publish libraries with --library"
        )
    if parsed is None:
        c = components[0]
        from ..host._names import distribution_name

        raise PublishError(
            f"{art.filename}: distribution {art.name!r} does not follow the naming convention "
            f"agentos-<env|policy|trainer|agent>-<name> (expected e.g. {distribution_name(c['kind'], c['name'])!r})"
        )
    kind, name = parsed
    if not any(c["kind"] == kind and normalize(c["name"]) == name for c in components):
        declared = ", ".join(f"{c['kind']} {c['name']}" for c in components)
        raise PublishError(
            f"{art.filename}: {art.name} must declare the {kind} {name!r} in [agentos.{kind}] (it declares: {declared})"
        )
