"""The sandbox pipe's framing: plain data only, every message bounded, nothing unpickled.

A frame is a 5-byte header (4-byte big-endian length, 1 kind byte) and its payload: ``J`` a UTF-8
JSON document, ``A`` one numpy array in ``.npy`` format read with ``allow_pickle=False`` (so an
object array is refused). A frame longer than the reader's bound, an unknown kind or a truncated
payload raises :class:`WireError`: the peer broke the protocol.
"""

from __future__ import annotations

import io
import json
import struct

HEADER = struct.Struct(">IB")
JSON_LIMIT = 1 << 20  # a control message
ARRAY_LIMIT = 256 << 20  # a batch of observations or actions


class WireError(Exception):
    """The peer sent something that is not a well-formed, bounded frame."""


def _read_exact(stream, n: int) -> bytes:
    parts, left = [], n
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise WireError("the pipe closed mid-message" if parts or n != HEADER.size else "the pipe closed")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _write(stream, kind: bytes, payload: bytes) -> None:
    stream.write(HEADER.pack(len(payload), kind[0]) + payload)
    stream.flush()


def _read(stream, kind: bytes, limit: int) -> bytes:
    size, got = HEADER.unpack(_read_exact(stream, HEADER.size))
    if got != kind[0]:
        raise WireError(f"expected a {kind.decode()!r} frame, got kind {got}")
    if size > limit:
        raise WireError(f"a frame of {size:,} bytes (at most {limit:,})")
    return _read_exact(stream, size)


def send_json(stream, message) -> None:
    _write(stream, b"J", json.dumps(message, separators=(",", ":"), allow_nan=False).encode())


def recv_json(stream, limit: int = JSON_LIMIT):
    data = _read(stream, b"J", limit)
    try:
        return json.loads(data)
    except (UnicodeDecodeError, ValueError):
        raise WireError("a control message that is not JSON") from None


def send_array(stream, array) -> None:
    import numpy as np

    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    _write(stream, b"A", buffer.getvalue())


def recv_array(stream, limit: int = ARRAY_LIMIT):
    import numpy as np

    data = _read(stream, b"A", limit)
    buffer = io.BytesIO(data)
    try:  # the header first: an array is allocated only when the frame holds all of its bytes
        version = np.lib.format.read_magic(buffer)
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f"format version {version}")
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(buffer)
        if dtype.hasobject or dtype.kind not in "biuf":
            raise WireError("not a numeric array")
        size = dtype.itemsize
        for dim in shape:
            size *= int(dim)
        held = len(data) - buffer.tell()
        if size != held:
            raise WireError(f"an array header claiming {size:,} bytes in a frame holding {held:,}")
        buffer.seek(0)
        array = np.load(buffer, allow_pickle=False)
    except (ValueError, OSError, EOFError, MemoryError) as exc:
        raise WireError(f"not a plain numpy array ({str(exc)[:80]})") from None
    if not isinstance(array, np.ndarray) or array.dtype.kind not in "biuf":
        raise WireError("not a numeric array")
    return array
