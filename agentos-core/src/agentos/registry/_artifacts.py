"""Reading and validating the files that get published: wheels and sdists.

Everything the index shows about a file comes from the file itself: the core metadata
(``METADATA``/``PKG-INFO``, parsed by :func:`packaging.metadata.parse_email`: UTF-8, modern e-mail
policy), the entry points (the wheel's ``entry_points.txt``), the sha256 of its bytes. Any problem
becomes one :class:`PublishError` line that names the file.

Files are untrusted: names must follow the PEP 427 / sdist grammar, wheels must have a RECORD and
only relative member paths, and nothing larger than :data:`MAX_MEMBER` is ever read from an archive
(zip bombs, by their compression ratio, are refused outright).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field

from ..errors import PublishError
from ..host._names import GROUP_PREFIX, KINDS, is_valid_name, normalize, parse_distribution_name

WHEEL_SUFFIX = ".whl"
SDIST_SUFFIXES = (".tar.gz", ".zip")
MAX_MEMBER = 4 << 20  # METADATA, entry_points.txt, RECORD, PKG-INFO: read at most this much
MAX_RATIO = 200  # a member inflating more than this (and beyond 1 MiB) is a zip bomb
_WHEEL_NAME_RE = re.compile(r"^[A-Za-z0-9_.]+-[A-Za-z0-9_.!+]+(-[0-9][A-Za-z0-9_.]*)?(-[A-Za-z0-9_.]+){3}\.whl$")
_SDIST_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+-[A-Za-z0-9_.!+]+\.(tar\.gz|zip)$")
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_EP_VALUE_RE = re.compile(r"^\s*[A-Za-z_][\w.]*\s*(:\s*[A-Za-z_][\w.]*\s*)?(\[[^\]]*\])?\s*$")


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
    description_size: int = 0  # bytes of the long description (bounded; never in the catalogue)
    results: dict | None = None  # a trained policy's validated results record (results.json)
    results_json: bytes = b""  # that record as the index serves it
    replay: bytes = b""  # the GIF the record names (checked: bounded, GIF signature)
    shipped_task: str | None = None  # a record without a task: the task id its shipped agent.ini sets

    @property
    def core(self) -> dict:
        """What makes a release: files of one version must agree on all of it."""
        return {
            "summary": self.summary,
            "requires": sorted(self.requires),
            "requires_python": self.requires_python,
            "entry_points": {g: dict(sorted(e.items())) for g, e in sorted(self.entry_points.items())},
        }

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


def valid_filename(filename: str) -> bool:
    """A plain PEP 427 wheel or sdist file name: no path, no ``#?%``, spaces or control characters."""
    from packaging.utils import parse_sdist_filename, parse_wheel_filename

    try:
        if _WHEEL_NAME_RE.match(filename):
            parse_wheel_filename(filename)
            return True
        if _SDIST_NAME_RE.match(filename):
            parse_sdist_filename(filename)
            return True
    except ValueError:
        return False
    return False


def _check_grammar(filename: str) -> None:
    if not valid_filename(filename):
        raise PublishError(f"{filename!r}: not a valid wheel or sdist file name (PEP 427 / sdist grammar)")


def _open_zip(path: str, filename: str):
    """A :class:`zipfile.ZipFile`, once its End Of Central Directory record says it is small enough."""
    import zipfile

    from ._limits import check_zip_directory

    with open(path, "rb") as f:
        check_zip_directory(f, filename)
    return zipfile.ZipFile(path)


def _zip_check(zf, filename: str) -> None:
    """Refuse absolute or ``..`` member paths, members neither stored nor deflated (before any is read), and
    members whose compression ratio is a zip bomb's (names read two ways: :mod:`._unpacked`)."""
    import zipfile

    from ._limits import MAX_MEMBERS

    if len(zf.infolist()) > MAX_MEMBERS:  # a record that understates its count
        raise PublishError(f"{filename}: more than {MAX_MEMBERS} members; refused")
    for info in zf.infolist():
        name = info.filename
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            # zipfile inflates bzip2 and lzma without a bound on each step: a few bytes could ask for gigabytes
            raise PublishError(f"{filename}: {name[:80]} is compressed with method {info.compress_type} "
                               "(a wheel's members are stored or deflated); refused")
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or ".." in parts or (len(name) > 1 and name[1] == ":"):
            raise PublishError(f"{filename}: unsafe member path {name!r}")
        if info.file_size > (1 << 20) and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise PublishError(
                f"{filename}: {name} inflates {info.file_size // max(info.compress_size, 1)}x (a zip bomb); refused"
            )


def _zip_read(zf, member: str, filename: str) -> bytes:
    """At most :data:`MAX_MEMBER` bytes of ``member`` (whatever its header claims)."""
    with zf.open(member) as f:
        data = f.read(MAX_MEMBER + 1)
    if len(data) > MAX_MEMBER:
        raise PublishError(f"{filename}: {member} is larger than {MAX_MEMBER >> 20} MiB; refused")
    return data


def read_artifact(path: str) -> Artifact:
    """Read a wheel or sdist; raises :class:`PublishError` with one line if it is malformed."""
    filename = os.path.basename(path)
    if not os.path.isfile(path):
        raise PublishError(f"{path}: no such file")
    from ._limits import check_release_size

    try:
        if filename.endswith(WHEEL_SUFFIX):
            art = _read_wheel(path, filename)
        elif filename.endswith(SDIST_SUFFIXES):
            art = _read_sdist(path, filename)
        else:
            art = None
        if art is not None:
            check_release_size(art, filename)
            return art
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
    _check_grammar(filename)
    if not zipfile.is_zipfile(path):
        raise PublishError(f"{filename}: malformed wheel (not a zip archive)")
    with _open_zip(path, filename) as zf:
        _zip_check(zf, filename)
        names = zf.namelist()
        dist_infos = {n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")}
        if len(dist_infos) != 1:
            raise PublishError(f"{filename}: malformed wheel (expected one .dist-info folder, found {len(dist_infos)})")
        (dist_info,) = dist_infos
        _check_one_distribution(names, dist_info, filename)
        if f"{dist_info}/METADATA" not in names:
            raise PublishError(f"{filename}: malformed wheel (no {dist_info}/METADATA)")
        if f"{dist_info}/WHEEL" not in names:
            raise PublishError(f"{filename}: malformed wheel (no {dist_info}/WHEEL)")
        if f"{dist_info}/RECORD" not in names:
            raise PublishError(f"{filename}: malformed wheel (no {dist_info}/RECORD)")
        _zip_read(zf, f"{dist_info}/RECORD", filename)
        metadata = _zip_read(zf, f"{dist_info}/METADATA", filename)
        ep_member = f"{dist_info}/entry_points.txt"
        ep_text = _zip_read(zf, ep_member, filename).decode("utf-8") if ep_member in names else ""
        art = _from_metadata(path, filename, metadata, str(name), str(version))
        art.entry_points = parse_entry_points(ep_text, filename)
        from ._package_results import read_package_results

        read_package_results(zf, names, art)  # a trained policy's results.json and replay, as data
    return art


def _check_one_distribution(names: list[str], dist_info: str, filename: str) -> None:
    """Refuse a member that would install a second distribution's metadata (a ``.dist-info`` or
    ``.egg-info`` anywhere but the wheel's own folder, e.g. under ``<name>.data/purelib/``):
    importlib.metadata would list its entry points, past the component-name ownership check."""
    for name in names:
        parts = name.replace("\\", "/").split("/")
        for depth, part in enumerate(parts):
            if part.lower().endswith((".dist-info", ".egg-info")) and not (depth == 0 and part == dist_info):
                raise PublishError(
                    f"{filename}: member {name[:200]!r} would install a second distribution's metadata "
                    f"(only {dist_info}/ may hold it); refused"
                )


def _read_sdist(path: str, filename: str) -> Artifact:
    from packaging.utils import InvalidSdistFilename, parse_sdist_filename

    try:
        name, version = parse_sdist_filename(filename)
    except InvalidSdistFilename as exc:
        raise PublishError(f"{filename}: invalid sdist filename ({exc})") from None
    _check_grammar(filename)
    members, contents = _sdist_scan(path, filename)
    pkg_info = next((m for m in members if m.count("/") == 1 and m.endswith("/PKG-INFO")), None)
    if pkg_info is None:
        raise PublishError(f"{filename}: malformed sdist (no top-level PKG-INFO)")
    top = pkg_info.split("/", 1)[0]
    if pkg_info not in contents:
        raise PublishError(f"{filename}: malformed sdist ({pkg_info} is not a file)")
    art = _from_metadata(path, filename, contents[pkg_info], str(name), str(version))
    art.packagetype = "sdist"
    art.metadata = b""  # an sdist's PKG-INFO may be dynamic: pip must not trust it as PEP 658 metadata
    eps = next((m for m in members if m.startswith(f"{top}/") and m.endswith(".egg-info/entry_points.txt")), None)
    if eps in contents:
        art.entry_points = parse_entry_points(contents[eps].decode(), filename)
    elif f"{top}/pyproject.toml" in contents:
        art.entry_points = _pyproject_entry_points(contents[f"{top}/pyproject.toml"], filename)
    return art


def _wanted_sdist_member(name: str) -> bool:
    """The members :func:`_read_sdist` reads: PKG-INFO, entry_points.txt, pyproject.toml."""
    return name.endswith(("/PKG-INFO", ".egg-info/entry_points.txt", "/pyproject.toml"))


def _sdist_scan(path: str, filename: str) -> tuple[list[str], dict[str, bytes]]:
    """Member names, and the wanted members' bytes, in one bounded pass over the archive."""
    if path.endswith(".zip"):
        with _open_zip(path, filename) as zf:
            _zip_check(zf, filename)
            names = zf.namelist()
            wanted = [n for n in names if _wanted_sdist_member(n) and not n.endswith("/")]
            return names, {n: _zip_read(zf, n, filename) for n in wanted}
    import gzip
    import tarfile

    from ._limits import check_tar_headers

    # A .tar.gz is one compressed stream: cap what it may inflate to, as for a zip member; and walk
    # its raw headers first, since tarfile reads a long-name or pax header whole into memory.
    limit = max(1 << 20, MAX_RATIO * os.path.getsize(path))
    with gzip.open(path) as stream:
        check_tar_headers(_Capped(stream, limit, filename), filename)
    names: list[str] = []
    contents: dict[str, bytes] = {}
    with gzip.open(path) as stream, tarfile.open(fileobj=_Capped(stream, limit, filename), mode="r|") as tf:
        for member in tf:
            names.append(member.name)
            if member.isfile() and _wanted_sdist_member(member.name):
                data = tf.extractfile(member).read(MAX_MEMBER + 1)
                if len(data) > MAX_MEMBER:
                    raise PublishError(f"{filename}: {member.name} is larger than {MAX_MEMBER >> 20} MiB; refused")
                contents[member.name] = data
    return names, contents


class _Capped:
    """A read-only stream that refuses to yield more than ``limit`` bytes in all (a gzip bomb)."""

    def __init__(self, stream, limit: int, filename: str):
        self._stream, self._left, self._limit, self._filename = stream, limit, limit, filename

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(self._left + 1 if size < 0 else min(size, self._left + 1))
        self._left -= len(data)
        if self._left < 0:
            raise PublishError(f"{self._filename}: inflates beyond {self._limit >> 20} MiB (a gzip bomb); refused")
        return data


def _pyproject_entry_points(data: bytes, filename: str) -> dict[str, dict[str, str]]:
    import tomllib

    project = tomllib.loads(data.decode()).get("project", {})
    eps = {g: dict(v) for g, v in project.get("entry-points", {}).items()}
    _check_entry_points(eps, filename)
    return eps


def _from_metadata(path: str, filename: str, metadata: bytes, fname: str, fversion: str) -> Artifact:
    from packaging.metadata import parse_email
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    from ._limits import check_metadata_shape, check_requirements

    check_metadata_shape(metadata, filename)  # before the parser, whose time grows with the headers
    raw, _ = parse_email(metadata)
    name, version = raw.get("name"), raw.get("version")
    if not name or not version:
        raise PublishError(f"{filename}: malformed metadata (Name and Version are required)")
    try:
        parsed = Version(version)
    except InvalidVersion:
        raise PublishError(f"{filename}: invalid version {version!r} in metadata") from None
    if canonicalize_name(name) != canonicalize_name(fname) or parsed != Version(fversion):
        raise PublishError(f"{filename}: metadata says {name} {version}, which does not match the file name")
    requires = [str(r).strip() for r in raw.get("requires_dist") or []]
    requires_python = str(raw.get("requires_python") or "").strip()
    check_requirements(requires, requires_python, filename)
    return Artifact(
        path=path,
        filename=filename,
        project=canonicalize_name(name),
        name=name,
        version=str(parsed),
        sha256=sha256_file(path),
        size=os.path.getsize(path),
        metadata=metadata,
        summary=str(raw.get("summary") or "").strip(),
        description_size=len(str(raw.get("description") or "").encode("utf-8", "surrogatepass")),
        requires_python=requires_python,
        requires=requires,
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
