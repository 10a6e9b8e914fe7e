"""Bounds on untrusted archives, checked before any parser sees them: time and memory, not only bytes.

* Core metadata: the e-mail parser is quadratic in the number of distinct headers, so the header
  block is counted first (fields, distinct names, lines) and refused past small caps.
* Tar archives: :mod:`tarfile` reads a GNU long-name/long-link or pax header whole into memory,
  whatever its size; :func:`check_tar_headers` walks the raw 512-byte headers of the stream itself
  and refuses oversized special headers (and sparse members) before :mod:`tarfile` is used.
* Requirements: every ``Requires-Dist`` and ``Requires-Python`` must parse, and every marker must
  evaluate, so that nothing downstream (install files, ``agentos install``) fails half-way.
* Zip archives: :mod:`zipfile` reads the whole central directory and builds one object per member
  before anything can be checked; :func:`check_zip_directory` reads the End Of Central Directory
  record (and its zip64 form) first and refuses too many members or too large a directory. What a
  wheel unpacks to (:data:`MAX_WHEEL`, :data:`MAX_UNPACKED_FILE`, :data:`MAX_UNPACKED`) is measured
  by unpacking it, in :mod:`._unpacked`.
* The shared files: what a release adds to ``catalogue.json`` and ``index.html`` (summary,
  requirements, entry points) and its long description (its own page only) are bounded per field
  by :func:`check_release_size`, so that no uploader can make the catalogue too large for clients.
"""

from __future__ import annotations

from ..errors import PublishError

MAX_HEADER_FIELDS = 2000  # Classifier/Requires-Dist may repeat; real packages stay far below
MAX_HEADER_NAMES = 100  # distinct header names (core metadata defines about 30)
MAX_HEADER_LINES = 10_000  # header fields plus their continuation lines
MAX_LINES = 200_000  # the whole file, body included
MAX_TAR_HEADER = 64 << 10  # a GNU long name / long link or a pax header: at most this many bytes
MAX_MEMBERS = 20_000  # members of a wheel or an sdist (zip or tar); the largest real wheels have a few thousand
MAX_TAR_MEMBERS = MAX_MEMBERS
MAX_CENTRAL_DIRECTORY = 4 << 20  # bytes of a zip's central directory: 20,000 members with 150-byte paths
MAX_SUMMARY = 512  # characters, one line (PyPI's limit)
MAX_REQUIRES = 64  # Requires-Dist entries
MAX_REQUIREMENT = 256  # ASCII characters of one Requires-Dist (or Requires-Python)
MAX_ENTRY_POINTS = 64  # entry points in all groups
MAX_COMPONENTS = 4  # agentos.<kind> entry points: one row each in catalogue.json's component list
MAX_ENTRY_POINT_TEXT = 200  # ASCII characters of an entry point's group, name or value
MAX_DESCRIPTION = 1 << 20  # bytes (UTF-8) of the long description, shown on the component's page only
#: Bytes of any wheel the index takes, compressed as it is uploaded: PyPI's default per-file upload limit (and
#: GitHub's per-file limit for an index kept in git). A trained package: quantize to fit.
MAX_WHEEL = 100 << 20
#: Bytes of any one file of a wheel once unpacked (counted by unpacking it, :mod:`._unpacked`): what an install
#: writes. The 2048 master's int8 weights (eight 6-tuples) are 130 MiB, a 60 MiB wheel.
MAX_UNPACKED_FILE = 256 << 20
#: Bytes of all the files of a wheel together, unpacked (many files each under :data:`MAX_UNPACKED_FILE` would
#: otherwise unpack to terabytes).
MAX_UNPACKED = 512 << 20
#: Bytes of a trained package's weights file, plot or replay (``agentos publish --run``, and a policy's ``load``
#: through :func:`agentos.results.check_weights`): what a wheel may unpack to per file.
MAX_TRAINED_FILE = MAX_UNPACKED_FILE
_BLOCK = 512
_SPECIAL = {b"L": "GNU long name", b"K": "GNU long link", b"x": "pax header", b"g": "pax global header"}
_SPARSE = b"S"


def check_metadata_shape(metadata: bytes, filename: str) -> None:
    """Refuse core metadata whose header block is too large to parse in bounded time."""
    if metadata.count(b"\n") > MAX_LINES:
        raise PublishError(f"{filename}: core metadata has more than {MAX_LINES} lines; refused")
    fields, lines, names = 0, 0, set()
    for line in metadata.splitlines():
        if not line.strip():
            break  # the end of the headers
        lines += 1
        if line[:1] not in (b" ", b"\t"):
            fields += 1
            names.add(line.split(b":", 1)[0].strip().lower()[:100])
        if fields > MAX_HEADER_FIELDS or lines > MAX_HEADER_LINES or len(names) > MAX_HEADER_NAMES:
            raise PublishError(
                f"{filename}: core metadata has too many headers (at most {MAX_HEADER_FIELDS} fields, "
                f"{MAX_HEADER_NAMES} distinct names, {MAX_HEADER_LINES} lines); refused"
            )


def check_requirements(requires: list[str], requires_python: str, filename: str) -> None:
    """Every requirement parses and every marker evaluates (for no extra and for each extra it names)."""
    from packaging.markers import default_environment
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if requires_python:
        try:
            SpecifierSet(requires_python)
        except InvalidSpecifier:
            raise PublishError(f"{filename}: invalid Requires-Python {requires_python[:100]!r}") from None
    env = default_environment()
    for line in requires:
        try:
            req = Requirement(line)
            if req.marker is not None:
                req.marker.evaluate({**env, "extra": ""})
        except Exception as exc:  # InvalidRequirement, UndefinedComparison, InvalidVersion...
            kind = "requirement" if isinstance(exc, InvalidRequirement) else "marker"
            raise PublishError(f"{filename}: invalid {kind} in Requires-Dist {line[:100]!r}; refused") from None
        if req.url:  # a direct reference would make every installer fetch that URL, unpinned (PyPI refuses it too)
            raise PublishError(
                f"{filename}: Requires-Dist {req.name} @ <url> is a direct reference; dependencies are names "
                "with versions (ours pinned by the index, third-party ones from PyPI); refused"
            )


def check_zip_directory(zf_file, filename: str) -> None:
    """Refuse a zip whose End Of Central Directory record (or zip64 record) announces more than
    :data:`MAX_MEMBERS` members or a central directory over :data:`MAX_CENTRAL_DIRECTORY` bytes.

    ``zf_file`` is the open archive (binary, seekable). The records are read with the very function
    :class:`zipfile.ZipFile` uses (so both read the same record, zip64 included), before it reads
    the directory into memory. zipfile walks the directory by its size, not by the count, so the
    size is the bound that holds whatever the count claims.
    """
    import zipfile

    record = zipfile._EndRecData(zf_file)  # the record ZipFile itself trusts (private, stable since 2.6)
    if record is None:
        raise PublishError(f"{filename}: malformed archive (no zip End Of Central Directory record)")
    members, size = record[zipfile._ECD_ENTRIES_TOTAL], record[zipfile._ECD_SIZE]
    if members > MAX_MEMBERS or size > MAX_CENTRAL_DIRECTORY:
        raise PublishError(
            f"{filename}: {members} members, a central directory of {size} bytes "
            f"(at most {MAX_MEMBERS} members, {MAX_CENTRAL_DIRECTORY >> 20} MiB); refused"
        )


def check_release_size(art, filename: str) -> None:
    """Bound what one release adds to the shared files; one line naming the field and its limit."""

    def refuse(what: str) -> None:
        raise PublishError(f"{filename}: {what}; refused")

    if len(art.summary) > MAX_SUMMARY or any(c in art.summary for c in "\r\n"):
        refuse(f"Summary must be one line of at most {MAX_SUMMARY} characters (it has {len(art.summary)})")
    if len(art.requires) > MAX_REQUIRES:
        refuse(f"{len(art.requires)} Requires-Dist entries (at most {MAX_REQUIRES})")
    for field, line in [*(("Requires-Dist", r) for r in art.requires), ("Requires-Python", art.requires_python)]:
        if len(line) > MAX_REQUIREMENT or not line.isascii():
            refuse(f"a {field} of {len(line)} characters (at most {MAX_REQUIREMENT}, ASCII)")
    count = sum(len(eps) for eps in art.entry_points.values())
    if count > MAX_ENTRY_POINTS:
        refuse(f"{count} entry points (at most {MAX_ENTRY_POINTS})")
    if len(art.components) > MAX_COMPONENTS:
        refuse(f"{len(art.components)} component entry points (at most {MAX_COMPONENTS})")
    for group, eps in art.entry_points.items():
        for text in (group, *eps, *eps.values()):
            if len(text) > MAX_ENTRY_POINT_TEXT or not text.isascii():
                limit = f"at most {MAX_ENTRY_POINT_TEXT}, ASCII"
                refuse(f"an entry point group, name or value of {len(text)} characters ({limit})")
    if art.description_size > MAX_DESCRIPTION:
        size, limit = art.description_size, MAX_DESCRIPTION >> 20
        refuse(f"a long description (Description) of {size} bytes (at most {limit} MiB)")


def _octal_size(field: bytes, filename: str) -> int:
    if field[:1] in (b"\x80", b"\xff"):  # base-256 (GNU): only for sizes over 8 GiB, or negative
        raise PublishError(f"{filename}: tar member larger than 8 GiB; refused")
    text = field.split(b"\0", 1)[0].strip() or b"0"
    try:
        return int(text, 8)
    except ValueError:
        raise PublishError(f"{filename}: malformed tar header (size {text[:20]!r})") from None


def check_tar_headers(stream, filename: str) -> None:
    """Walk the headers of an (already decompressed) tar ``stream``; memory stays a few blocks.

    Refuses special headers (long names, pax) over :data:`MAX_TAR_HEADER`, sparse members and more
    than :data:`MAX_TAR_MEMBERS` members. Member data is skipped in chunks, never kept.
    """
    members = 0
    while True:
        header = stream.read(_BLOCK)
        if len(header) < _BLOCK or header == b"\0" * _BLOCK:
            return  # end of archive (or a truncated one: tarfile says what is wrong)
        typeflag = header[156:157]
        size = _octal_size(header[124:136], filename)
        if typeflag in _SPECIAL and size > MAX_TAR_HEADER:
            raise PublishError(
                f"{filename}: a {_SPECIAL[typeflag]} of {size} bytes (at most {MAX_TAR_HEADER >> 10} KiB); refused"
            )
        if typeflag == _SPARSE:
            raise PublishError(f"{filename}: sparse tar members are not accepted in an sdist")
        left = -(-size // _BLOCK) * _BLOCK  # the member's data, padded to whole blocks
        if typeflag in (b"x", b"g"):
            data = stream.read(size)
            if b"GNU.sparse" in data:
                raise PublishError(f"{filename}: sparse tar members are not accepted in an sdist")
            left -= len(data)
        members += typeflag not in _SPECIAL
        if members > MAX_TAR_MEMBERS:
            raise PublishError(f"{filename}: more than {MAX_TAR_MEMBERS} members; refused")
        while left:
            chunk = stream.read(min(left, 1 << 16))
            if not chunk:
                return
            left -= len(chunk)
