"""What a wheel unpacks to, measured by unpacking it once: the bounds of :mod:`._limits` on every wheel.

The sizes a zip's central directory declares are the uploader's words, and installers read a zip in different
ways (pip through :mod:`zipfile` and the central directory; others stream the local headers, or inflate a
deflate stream to its end). So every wheel the index takes, whatever its members are named (a trained
package's ``__init__.py`` can load weights from any path), is read here member by member from its raw bytes:

* the wheel itself at most :data:`~._limits.MAX_WHEEL` bytes (PyPI's per-file upload limit);
* the members' local entries (header, data, data descriptor) follow one another from the first byte to the
  central directory, with nothing between them (no overlaps, no entries that only a streaming reader sees), and
  each local header agrees with the central directory (name, method, flags; CRC and sizes, or its descriptor);
* each member is stored or deflated; a stored one holds exactly its size; a deflate stream ends exactly at its
  compressed size and inflates (in bounded steps) to exactly its declared size, with the declared CRC;
* each member at most :data:`~._limits.MAX_UNPACKED_FILE` bytes, all together at most :data:`~._limits.MAX_UNPACKED`.

So what any installer can unpack is what was counted. Everything is refused in one line.
"""

from __future__ import annotations

import os
import struct
import zlib

from ..errors import PublishError
from . import _limits
from ._member_names import check_member_names

_CHUNK = 1 << 16
_STORED, _DEFLATED = 0, 8
_ENCRYPTED, _DESCRIPTOR, _UTF8 = 0x01, 0x08, 0x800  # general-purpose flags: bit 3, CRC and sizes after the data
_FLAGS = _ENCRYPTED | _DESCRIPTOR | _UTF8  # the flags that change how a member is read: the same in both headers


def check_unpacked(path: str, filename: str) -> None:
    """Refuse (:class:`PublishError`, one line) a wheel that is too large, packed or unpacked, whose members
    overlap, disagree with their local headers, fail their CRC or cannot be read."""
    import zipfile

    size = os.path.getsize(path)
    if size > _limits.MAX_WHEEL:
        raise PublishError(f"{filename} is {size:,} bytes, over the limit of {_limits.MAX_WHEEL:,} bytes for a "
                           "wheel (MAX_WHEEL; a trained package: quantize with --quantize int8); refused")
    try:
        with zipfile.ZipFile(path) as zf:
            infos = sorted(zf.infolist(), key=lambda info: info.header_offset)
            ends = [info.header_offset for info in infos[1:]] + [zf.start_dir]
            start_dir = zf.start_dir
        if infos and infos[0].header_offset:
            raise PublishError(f"{filename}: {infos[0].header_offset:,} bytes before its first member (hidden "
                               "entries for a reader that streams the local headers); refused")
        _check_end(path, size, start_dir, len(infos), filename)
        check_member_names(infos, filename)
        total = 0
        with open(path, "rb") as f:
            for info, end in zip(infos, ends, strict=True):
                start = _data_start(f, info, end, filename)
                total += _unpack(f, info, start, total, filename)
    except PublishError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure to read an untrusted archive is a refusal
        raise PublishError(f"{filename}: malformed wheel ({type(exc).__name__}: {str(exc)[:120]}); refused") from None


def _check_end(path: str, size: int, start_dir: int, count: int, filename: str) -> None:
    """The End Of Central Directory record is the file's last 22 bytes (no comment), right after the central
    directory that :mod:`zipfile` read, counting its members. No zip64 record: a wheel within the bounds never
    needs one, and readers follow its locator differently (a second directory hidden inside a member)."""
    with open(path, "rb") as f:
        f.seek(max(size - 22, 0))
        record = f.read()
    if len(record) < 22 or record[:4] != b"PK\x05\x06" or struct.unpack_from("<H", record, 20)[0]:
        raise PublishError(f"{filename}: its End Of Central Directory record is not its last 22 bytes (a comment "
                           "or bytes after it); refused")
    entries_here, entries, directory_size, directory_offset = struct.unpack_from("<HHII", record, 8)
    if entries != count or entries_here != count:
        raise PublishError(f"{filename}: its End Of Central Directory record counts {entries} members, not {count}; "
                           "refused")
    if directory_offset != start_dir or start_dir + directory_size != size - 22:
        raise PublishError(f"{filename}: its End Of Central Directory record does not name the central directory "
                           "right before it (zip64 records or bytes between); refused")


def _extra_ids(extra: bytes) -> list[int]:
    """The header ids of an extra field's blocks."""
    ids, at = [], 0
    while at + 4 <= len(extra):
        block, length = struct.unpack_from("<HH", extra, at)
        ids.append(block)
        at += 4 + length
    return ids


_UNICODE_PATH = 0x7075  # Info-ZIP's second name for a member: Python 3.12+ reads it, 3.11 and others do not
_ZIP64 = 0x0001


def _refuse(filename: str, info, why: str):
    raise PublishError(f"{filename}: member {info.filename[:80]!r} {why}; refused")


def _data_start(f, info, end: int, filename: str) -> int:
    """Where ``info``'s data start, once its local header agrees with the central directory (name, method,
    flags; CRC and sizes, or a data descriptor after the data that gives them) and its entry ends exactly at
    ``end``, the next member's header or the central directory: no bytes between entries for a reader that
    streams the local headers to find, and no overlap."""
    f.seek(info.header_offset)
    header = f.read(30)
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        _refuse(filename, info, "has no local header")
    flags, method, _, _, crc, packed, unpacked, name_length, extra_length = struct.unpack_from("<HHHHIIIHH",
                                                                                             header, 6)
    if method != info.compress_type or flags & _FLAGS != info.flag_bits & _FLAGS or f.read(name_length) != (
            info.orig_filename.encode("utf-8" if info.flag_bits & _UTF8 else "cp437")):
        _refuse(filename, info, "has a local header that names another file, method or flags than the central "
                                "directory")
    if method not in (_STORED, _DEFLATED) or flags & _ENCRYPTED:
        _refuse(filename, info, f"is compressed with method {method} or encrypted (a wheel's members are stored or "
                                "deflated)")
    local_extra = _extra_ids(f.read(extra_length))
    if _UNICODE_PATH in _extra_ids(info.extra) + local_extra:
        _refuse(filename, info, "has a Unicode path extra field (a second name that some readers use)")
    if flags & _DESCRIPTOR and _ZIP64 in local_extra:  # its descriptor could be read as 12 bytes or as 20
        _refuse(filename, info, "has a data descriptor and a zip64 extra field")
    start = info.header_offset + 30 + name_length + extra_length
    stop = start + info.compress_size
    if flags & _DESCRIPTOR:
        if method == _STORED:
            _refuse(filename, info, "is stored with a data descriptor (its end cannot be found by streaming)")
        f.seek(stop)
        tail = f.read(16)
        if tail[:4] == b"PK\x07\x08":
            tail, stop = tail[4:], stop + 4
        if len(tail) < 12 or struct.unpack_from("<III", tail) != (info.CRC, info.compress_size, info.file_size):
            _refuse(filename, info, "has a data descriptor that differs from the central directory")
        stop += 12
    elif (crc, packed, unpacked) != (info.CRC, info.compress_size, info.file_size):
        _refuse(filename, info, "has a local header whose CRC or sizes differ from the central directory's")
    if stop > end:
        _refuse(filename, info, "claims compressed bytes that run into the next member (overlapping members: "
                                "a zip bomb)")
    if stop < end:
        _refuse(filename, info, f"is followed by {end - stop:,} bytes that belong to no member (hidden entries)")
    return start


def _unpack(f, info, start: int, before: int, filename: str) -> int:
    """The bytes ``info`` unpacks to, counted against the bounds as they come, its CRC checked."""
    if info.file_size > _limits.MAX_UNPACKED_FILE:
        _too_large(filename, info)
    if info.compress_type == _STORED and info.compress_size != info.file_size:
        _refuse(filename, info, "is stored with a compressed size other than its size")
    inflate = zlib.decompressobj(-15) if info.compress_type == _DEFLATED else None
    f.seek(start)
    left, count, crc = info.compress_size, 0, 0
    while left:
        chunk = f.read(min(left, _CHUNK))
        if not chunk:
            _refuse(filename, info, "runs past the end of the file")
        left -= len(chunk)
        while chunk:
            out, chunk = (inflate.decompress(chunk, _CHUNK), inflate.unconsumed_tail) if inflate else (chunk, b"")
            count += len(out)
            if count > info.file_size:
                _refuse(filename, info, f"unpacks to more than its declared {info.file_size:,} bytes")
            if before + count > _limits.MAX_UNPACKED:
                raise PublishError(f"{filename} unpacks to more than {_limits.MAX_UNPACKED:,} bytes, the limit for "
                                   "a wheel's files together (MAX_UNPACKED); refused")
            crc = zlib.crc32(out, crc)
            if inflate is not None and inflate.eof and (chunk or inflate.unused_data or left):
                _refuse(filename, info, "has data after the end of its deflate stream")
    if inflate is not None and not inflate.eof:
        _refuse(filename, info, "ends before its deflate stream does")
    if count != info.file_size or crc != info.CRC:
        _refuse(filename, info, "does not match its declared size and CRC")
    return count


def _too_large(filename: str, info):
    raise PublishError(
        f"{filename}: {info.filename[:80]} unpacks to more than {_limits.MAX_UNPACKED_FILE:,} bytes, the per-file "
        "limit (MAX_UNPACKED_FILE; a trained package: quantize with --quantize int8); refused")
