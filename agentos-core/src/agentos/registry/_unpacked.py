"""What a wheel unpacks to, measured by unpacking it once: the bounds of :mod:`._limits` on every wheel.

The sizes a zip's central directory declares are the uploader's words, and installers read a zip in different
ways (pip through :mod:`zipfile` and the central directory; others stream the local headers, or inflate a
deflate stream to its end). So every wheel the index takes, whatever its members are named (a trained
package's ``__init__.py`` can load weights from any path), is read here member by member from its raw bytes:

* the wheel itself at most :data:`~._limits.MAX_WHEEL` bytes (PyPI's per-file upload limit);
* each member's local header agrees with the central directory (name, method; CRC and sizes unless a data
  descriptor follows), and its data, from the end of that header, end before the next member or the central
  directory (no overlaps);
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

_CHUNK = 1 << 16
_STORED, _DEFLATED = 0, 8
_DESCRIPTOR = 0x08  # general-purpose flag bit 3: CRC and sizes follow the data, zeros in the local header


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
        total = 0
        with open(path, "rb") as f:
            for info, end in zip(infos, ends, strict=True):
                start = _data_start(f, info, end, filename)
                total += _unpack(f, info, start, total, filename)
    except PublishError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure to read an untrusted archive is a refusal
        raise PublishError(f"{filename}: malformed wheel ({type(exc).__name__}: {str(exc)[:120]}); refused") from None


def _refuse(filename: str, info, why: str):
    raise PublishError(f"{filename}: member {info.filename[:80]!r} {why}; refused")


def _data_start(f, info, end: int, filename: str) -> int:
    """Where ``info``'s data start, once its local header agrees with the central directory and its data end
    before ``end`` (the next member's header or the central directory)."""
    f.seek(info.header_offset)
    header = f.read(30)
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        _refuse(filename, info, "has no local header")
    flags, method, _, _, crc, packed, unpacked, name_length, extra_length = struct.unpack_from("<HHHHIIIHH",
                                                                                             header, 6)
    if method != info.compress_type or f.read(name_length) != info.orig_filename.encode(
            "utf-8" if info.flag_bits & 0x800 else "cp437"):
        _refuse(filename, info, "has a local header that names another file or method than the central directory")
    if method not in (_STORED, _DEFLATED):
        _refuse(filename, info, f"is compressed with method {method} (a wheel's members are stored or deflated)")
    if not flags & _DESCRIPTOR and (crc != info.CRC or packed not in (info.compress_size, 0xFFFFFFFF)
                                    or unpacked not in (info.file_size, 0xFFFFFFFF)):
        _refuse(filename, info, "has a local header whose CRC or sizes differ from the central directory's")
    start = info.header_offset + 30 + name_length + extra_length
    if start + info.compress_size > end:
        _refuse(filename, info, "claims compressed bytes that run into the next member (overlapping members: "
                                "a zip bomb)")
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
