"""A wheel's member names and kinds, read one way by every installer on every system.

zipfile, unzip, pip on Windows and case-insensitive file systems each turn a member's name into a path their
own way: a NUL byte ends it for zipfile, a backslash is a separator on Windows, Windows drops trailing dots and
spaces and reads ``:`` as a stream, macOS and Windows fold case, unzip makes a symlink from Unix mode bits.
:func:`check_member_names` refuses every name that two of them could read as two files, or as another file's:
so the files the index checked are the files every installer writes.
"""

from __future__ import annotations

import re
import stat
import unicodedata

from ..errors import PublishError

MAX_NAME = 1024  # characters of a member's name (real wheels stay far below; unzip truncates long ones)
MAX_PART = 255  # characters of one part (most file systems' limit)
_UTF8 = 0x800
_UNIX = 3  # a member's "version made by" host: its external attributes' high 16 bits are a Unix mode
#: the metadata files an installer opens by name, as spelled: a case variant would be read in their place where case
#: folds (a library wheel's ENTRY_POINTS.TXT declaring components the index never saw)
_METADATA = {name.lower(): name for name in ("METADATA", "RECORD", "WHEEL", "entry_points.txt", "top_level.txt")}


def _refuse(filename: str, name: str, why: str):
    raise PublishError(f"{filename}: member {name[:80]!r} {why}; refused")


_DEVICES = {"con", "prn", "aux", "nul", "conin$", "conout$", *(f"{d}{i}" for d in ("com", "lpt") for i in range(10))}
_WINDOWS_FORBIDDEN = set('<>"|?*')
_SHORT_NAME = re.compile(r"~[0-9]")  # an 8.3 short name (PROGRA~1): another spelling of a long name on NTFS
#: installed in site-packages, beside the wheel's own top-level files: .data/purelib, .data/platlib, and .data/data
#: under the environment's lib/pythonX.Y/site-packages (a venv's prefix)
_LIBRARY = re.compile(r"[^/]+\.data/(purelib|platlib|data/lib(64)?/python[^/]*/site-packages)/", re.IGNORECASE)


def installed_path(name: str) -> str:
    """Where a member lands relative to site-packages: ``pkg-V.data/purelib/x``, ``.../platlib/x`` and
    ``.../data/lib/python3.11/site-packages/x`` at ``x``."""
    return _LIBRARY.sub("", name, count=1) if _LIBRARY.match(name) else name


def _key(name: str) -> str:
    return unicodedata.normalize("NFC", installed_path(name).rstrip("/")).casefold()


def check_member_names(infos, filename: str) -> None:
    """Refuse (one line) a member name that installers read apart, twice, or as a link; see the module."""
    seen, folders = set(), set()
    for info in infos:
        name, raw = info.filename, info.orig_filename
        if any(unicodedata.category(c) == "Cf" for c in raw):  # zero-width and other invisible characters
            _refuse(filename, name, "has an invisible (format) character in its name")
        if len(raw) > MAX_NAME or any(ord(c) < 32 or ord(c) == 127 for c in raw):
            _refuse(filename, name, f"has a name over {MAX_NAME} characters or with control characters")
        if "\\" in raw or ":" in raw:
            _refuse(filename, name, "has a backslash or a colon in its name (a separator or a stream on Windows)")
        if not info.flag_bits & _UTF8 and not raw.isascii():
            _refuse(filename, name, "has a name that is neither ASCII nor flagged UTF-8 (readers decode it apart)")
        parts = name.rstrip("/").split("/")
        for part in parts:
            if part.split(".", 1)[0].lower() in _DEVICES or _WINDOWS_FORBIDDEN & set(part) or _SHORT_NAME.search(part):
                _refuse(filename, name, "has a part Windows reads as a device, cannot store, or as a short name")
        if any(part in ("", ".") or part[-1] in ". " or len(part) > MAX_PART for part in parts):
            _refuse(filename, name, f"has an empty or '.' part, a part ending in a dot or a space (dropped on "
                                    f"Windows) or over {MAX_PART} characters")
        if info.create_system == _UNIX and stat.S_IFMT(info.external_attr >> 16) not in (0, stat.S_IFREG,
                                                                                        stat.S_IFDIR):
            _refuse(filename, name, "is a symlink or a special file (unzip would make one)")
        if name.endswith("/") and info.file_size:
            _refuse(filename, name, "is a folder that holds data")
        key = _key(name)
        if key in seen:
            _refuse(filename, name, "lands on another member's path (ignoring case; .data/purelib and platlib "
                                    "install at the top)")
        seen.add(key)
        if len(parts) > 1 and parts[-2].lower().endswith(".dist-info") and _METADATA.get(parts[-1].lower(),
                                                                                       parts[-1]) != parts[-1]:
            _refuse(filename, name, "is a metadata file spelled in another case")
        installed = installed_path(name).rstrip("/").split("/")
        folders.update(_key("/".join(installed[:i])) for i in range(1, len(installed)))
    for info in infos:
        if not info.filename.endswith("/") and _key(info.filename) in folders:
            _refuse(filename, info.filename, "is a file and a folder of other members")
