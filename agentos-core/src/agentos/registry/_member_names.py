"""A wheel's member names and kinds, read one way by every installer on every system.

zipfile, unzip, pip on Windows and case-insensitive file systems each turn a member's name into a path their
own way: a NUL byte ends it for zipfile, a backslash is a separator on Windows, Windows drops trailing dots and
spaces and reads ``:`` as a stream, macOS and Windows fold case, unzip makes a symlink from Unix mode bits.
:func:`check_member_names` refuses every name that two of them could read as two files, or as another file's:
so the files the index checked are the files every installer writes.
"""

from __future__ import annotations

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


def check_member_names(infos, filename: str) -> None:
    """Refuse (one line) a member name that installers read apart, twice, or as a link; see the module."""
    seen, folders = set(), set()
    for info in infos:
        name, raw = info.filename, info.orig_filename
        if len(raw) > MAX_NAME or any(ord(c) < 32 or ord(c) == 127 for c in raw):
            _refuse(filename, name, f"has a name over {MAX_NAME} characters or with control characters")
        if "\\" in raw or ":" in raw:
            _refuse(filename, name, "has a backslash or a colon in its name (a separator or a stream on Windows)")
        if not info.flag_bits & _UTF8 and not raw.isascii():
            _refuse(filename, name, "has a name that is neither ASCII nor flagged UTF-8 (readers decode it apart)")
        parts = name.rstrip("/").split("/")
        if any(part in ("", ".") or part[-1] in ". " or len(part) > MAX_PART for part in parts):
            _refuse(filename, name, f"has an empty or '.' part, a part ending in a dot or a space (dropped on "
                                    f"Windows) or over {MAX_PART} characters")
        if info.create_system == _UNIX and stat.S_IFMT(info.external_attr >> 16) not in (0, stat.S_IFREG,
                                                                                        stat.S_IFDIR):
            _refuse(filename, name, "is a symlink or a special file (unzip would make one)")
        if name.endswith("/") and info.file_size:
            _refuse(filename, name, "is a folder that holds data")
        key = unicodedata.normalize("NFC", name.rstrip("/")).casefold()
        if key in seen:
            _refuse(filename, name, "appears twice (ignoring case)")
        seen.add(key)
        if len(parts) > 1 and parts[-2].lower().endswith(".dist-info") and _METADATA.get(parts[-1].lower(),
                                                                                       parts[-1]) != parts[-1]:
            _refuse(filename, name, "is a metadata file spelled in another case")
        folders.update("/".join(parts[:i]) for i in range(1, len(parts)))
    keys = {unicodedata.normalize("NFC", f).casefold() for f in folders}
    for info in infos:
        if not info.filename.endswith("/") and unicodedata.normalize("NFC", info.filename).casefold() in keys:
            _refuse(filename, info.filename, "is a file and a folder of other members")
