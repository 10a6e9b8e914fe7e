"""What a wheel unpacks to, measured by unpacking it once: the bounds of :mod:`._limits` on every wheel.

The sizes a zip's central directory declares are the uploader's words: a member may claim a compressed size
that overlaps its neighbour's data (so that its ratio looks small), and a wheel may name its files however
it likes (a trained package's ``__init__.py`` can load weights from any path). So every wheel the index
takes, not only one that ships ``<package>/weights.safetensors``, is bounded and read through here:

* the wheel itself at most :data:`~._limits.MAX_WHEEL` bytes (PyPI's per-file upload limit);
* no member's compressed data running into the next member or the central directory (measured from the
  end of its local header);
* each member decompressed (streamed, its CRC checked by :mod:`zipfile`) at most
  :data:`~._limits.MAX_UNPACKED_FILE` bytes, and all of them together at most :data:`~._limits.MAX_UNPACKED`.

:mod:`zipfile` (and pip, which uses it) never writes more of a member than its declared size, so the bytes
counted here bound what an install writes. Everything is refused in one line, the archive unchanged.
"""

from __future__ import annotations

import os

from ..errors import PublishError
from . import _limits

_CHUNK = 1 << 20


def check_unpacked(path: str, filename: str) -> None:
    """Refuse (:class:`PublishError`, one line) a wheel that is too large, packed or unpacked, or whose
    members overlap, fail their CRC or cannot be read."""
    import zipfile

    size = os.path.getsize(path)
    if size > _limits.MAX_WHEEL:
        raise PublishError(f"{filename} is {size:,} bytes, over the limit of {_limits.MAX_WHEEL:,} bytes for a "
                           "wheel (MAX_WHEEL; a trained package: quantize with --quantize int8); refused")
    try:
        with zipfile.ZipFile(path) as zf:
            infos = sorted(zf.infolist(), key=lambda info: info.header_offset)
            _check_no_overlap(path, infos, zf.start_dir, filename)
            total = 0
            for info in infos:
                total += _unpacked_size(zf, info, total, filename)
    except PublishError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure to read an untrusted archive is a refusal
        raise PublishError(f"{filename}: malformed wheel ({type(exc).__name__}: {str(exc)[:120]}); refused") from None


def _check_no_overlap(path: str, infos, central_directory: int, filename: str) -> None:
    """Each member's compressed data, from the end of its local header (whose name and extra field may be
    longer than the central directory's), ends before the next member's header or the central directory."""
    import struct

    ends = [info.header_offset for info in infos[1:]] + [central_directory]
    with open(path, "rb") as f:
        for info, end in zip(infos, ends, strict=True):
            f.seek(info.header_offset)
            header = f.read(30)
            if len(header) < 30 or header[:4] != b"PK\x03\x04":
                raise PublishError(f"{filename}: member {info.filename[:80]!r} has no local header; refused")
            name_length, extra_length = struct.unpack_from("<HH", header, 26)
            if info.header_offset + 30 + name_length + extra_length + info.compress_size > end:
                raise PublishError(f"{filename}: member {info.filename[:80]!r} claims compressed bytes that run "
                                   "into the next member (overlapping members: a zip bomb); refused")


def _unpacked_size(zf, info, before: int, filename: str) -> int:
    count = 0
    with zf.open(info) as member:
        while chunk := member.read(_CHUNK):
            count += len(chunk)
            if count > _limits.MAX_UNPACKED_FILE:
                raise PublishError(
                    f"{filename}: {info.filename[:80]} unpacks to more than {_limits.MAX_UNPACKED_FILE:,} bytes, the "
                    "per-file limit (MAX_UNPACKED_FILE; a trained package: quantize with --quantize int8); refused")
            if before + count > _limits.MAX_UNPACKED:
                raise PublishError(
                    f"{filename} unpacks to more than {_limits.MAX_UNPACKED:,} bytes, the limit for a wheel's files "
                    "together (MAX_UNPACKED); refused")
    return count
