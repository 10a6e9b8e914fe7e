"""Weights are data: a safetensors file read bounded, its header checked before any tensor is read.

A trained-policy package ships ``weights.safetensors`` (never a pickle). :func:`check_weights`
reads the 8-byte header length and the JSON header only, and refuses a file that is larger than
:data:`~agentos.registry._limits.MAX_TRAINED_FILE`, whose header is too large or malformed, whose
dtypes are not plain numbers, or whose tensors do not tile the data exactly. The policy's own
``load`` then checks dtype and shape against what the policy expects.

:func:`quantize` writes float tensors as float16 (optional, to fit the size limit);
:func:`dequantized` gives back a file in the policy's own dtypes, so that ``load`` is unchanged.
"""

from __future__ import annotations

import json
import os
import struct

from ..errors import UsageError

MAX_HEADER = 1 << 20  # bytes of a safetensors JSON header (100,000 tensors of short names fit)
MAX_TENSORS = 10_000
QUANTIZED_KEY = "agentos.quantized"  # metadata: JSON {tensor name: its dtype before quantization}
#: metadata a policy may write: a JSON list of tensor names that ``quantize`` keeps exact (statistics such as
#: the sb3 policy's VecNormalize means and variances, whose rounding would shift every observation)
EXACT_KEY = "agentos.exact"
_ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "U16": 2, "I16": 2, "F16": 2, "BF16": 2, "U32": 4, "I32": 4, "F32": 4,
             "U64": 8, "I64": 8, "F64": 8}
QUANTIZE_DTYPES = ("float16", "int8")
#: int8 quantization: one float32 scale per this many weights (absolute maximum / 127 of the block);
#: recorded per tensor as ``block`` (core 0.5.4 on; before it, every block was LEGACY_INT8_BLOCK).
#: 256 rather than 4,096: the 2048 n-tuple master lost 14% of its mean score with 4,096, 4% with 256.
INT8_BLOCK = 256
LEGACY_INT8_BLOCK = 4096
_BLOCKS = frozenset(1 << n for n in range(4, 17))  # the block sizes a file may declare: 16 .. 65,536
SCALES = "{}::int8_scales"


def shape_size(shape, limit: int) -> int | None:
    """The number of elements of ``shape`` (a list of at most 8 plain non-negative ints), or None when
    it is malformed or holds more than ``limit`` elements: Python ints, stopped as soon as the running
    product passes ``limit`` (numpy's int64 would wrap or overflow on ``[2**32, 2**32]`` or ``[2**70]``)."""
    if not (isinstance(shape, list) and len(shape) <= 8 and all(type(d) is int and d >= 0 for d in shape)):
        return None
    count = 1
    for d in shape:
        if d > limit:
            return None
        count *= d
        if count > limit:
            return None
    return count


def _refuse(path: str, why: str):
    raise UsageError(f"{os.path.basename(path)}: {why}; refused (weights must be a plain safetensors file)")


def check_weights(path: str, *, max_bytes: int | None = None) -> dict:
    """The checked safetensors header of ``path`` (tensor name -> dtype/shape/offsets, plus metadata).

    Reads at most ``8 + MAX_HEADER`` bytes; raises :class:`UsageError` (one line) when the file is
    not a bounded, well-formed safetensors file of numeric tensors."""
    from ..registry._limits import MAX_TRAINED_FILE

    limit = MAX_TRAINED_FILE if max_bytes is None else max_bytes
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                _refuse(path, "too short to be a safetensors file")
            (length,) = struct.unpack("<Q", head)
            if length > MAX_HEADER or length > size - 8:
                _refuse(path, f"a header of {length} bytes (at most {MAX_HEADER >> 10} KiB, within the file)")
            raw = f.read(length)
    except OSError as exc:
        raise UsageError(f"cannot read weights {path}: {exc.strerror or exc}") from None
    if size > limit:
        _refuse(path, f"{size:,} bytes, over the per-file limit of {limit:,} bytes (MAX_TRAINED_FILE)")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        _refuse(path, "its header is not JSON")
    if not isinstance(header, dict) or len(header) > MAX_TENSORS + 1:
        _refuse(path, f"its header must be an object of at most {MAX_TENSORS} tensors")
    meta = header.get("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        _refuse(path, "its __metadata__ must map strings to strings")
    spans = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict) or info.get("dtype") not in _ITEMSIZE:
            dtype = str(info.get("dtype") if isinstance(info, dict) else info)[:20]
            _refuse(path, f"tensor {name[:40]!r} has dtype {dtype!r} "
                          f"(allowed: {', '.join(sorted(_ITEMSIZE))})")
        shape, offsets = info.get("shape"), info.get("data_offsets")
        count = shape_size(shape, size)  # an element takes at least one byte of the file
        if count is None:
            _refuse(path, f"tensor {name[:40]!r} has a malformed shape (at most 8 non-negative integers, "
                          "no more elements than the file has bytes)")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(type(o) is int for o in offsets)):
            _refuse(path, f"tensor {name[:40]!r} has malformed data offsets")
        if offsets[1] - offsets[0] != count * _ITEMSIZE[info["dtype"]] or offsets[0] < 0:
            _refuse(path, f"tensor {name[:40]!r}: its offsets do not match its shape and dtype")
        spans.append(tuple(offsets))
    spans.sort()
    end = 0
    for begin, stop in spans:
        if begin != end:
            _refuse(path, "its tensors overlap or leave gaps")
        end = stop
    if 8 + length + end != size:
        _refuse(path, "its data does not end where its tensors end")
    return header


def quantize(source: str, target: str, dtype: str = "float16") -> dict:
    """Write ``source``'s tensors to ``target`` with float tensors as ``dtype``; returns what changed.

    ``float16``: each value rounded to float16 (values beyond its range are refused: an overflow would
    change the policy). ``int8``: each block of :data:`INT8_BLOCK` values as int8 times one float32
    scale (the block's absolute maximum / 127), a quarter of float32's size. Tensors named in the
    metadata's :data:`EXACT_KEY` (a JSON list) are kept as they are."""
    import numpy as np
    from safetensors import safe_open
    from safetensors.numpy import save_file

    if dtype not in QUANTIZE_DTYPES:
        raise UsageError(f"--quantize must be one of {', '.join(QUANTIZE_DTYPES)}, not {dtype!r}")
    check_weights(source, max_bytes=1 << 40)
    with safe_open(source, framework="numpy") as f:
        meta = dict(f.metadata() or {})
        tensors = {name: f.get_tensor(name) for name in f.keys()}
    changed = {}
    try:
        exact = set(json.loads(meta.get(EXACT_KEY, "[]")))
    except (TypeError, ValueError):
        raise UsageError(f"{source}: its {EXACT_KEY} metadata is not a JSON list of tensor names") from None
    for name, array in list(tensors.items()):
        if name in exact or array.dtype.kind != "f" or array.dtype == np.float16 or not np.isfinite(array).all():
            continue
        entry = {"dtype": str(array.dtype), "scheme": dtype, "shape": list(array.shape)}
        if dtype == "int8":
            entry["block"] = INT8_BLOCK
        if dtype == "float16":
            with np.errstate(over="ignore"):  # an overflow is found and refused just below
                small = array.astype(np.float16)
            if not np.isfinite(small).all():
                raise UsageError(f"tensor {name!r} holds values beyond float16's range; ship it unquantized or int8")
            tensors[name] = small
        else:
            flat = array.reshape(-1).astype(np.float32)
            blocks = -(-flat.size // INT8_BLOCK) or 1
            padded = np.zeros(blocks * INT8_BLOCK, np.float32)
            padded[:flat.size] = flat
            padded = padded.reshape(blocks, INT8_BLOCK)
            scales = (np.abs(padded).max(axis=1) / 127).astype(np.float32)
            scales[scales == 0] = 1.0
            tensors[name] = np.clip(np.rint(padded / scales[:, None]), -127, 127).astype(np.int8).reshape(-1)
            tensors[SCALES.format(name)] = scales
        changed[name] = entry
    meta[QUANTIZED_KEY] = json.dumps(changed, sort_keys=True)
    save_file(tensors, target, metadata=meta)
    return changed


def _quantized_entry(entry, limit: int) -> bool:
    """Whether one entry of the quantization metadata is well formed (its shape within ``limit``)."""
    return (isinstance(entry, dict) and entry.get("dtype") in ("float32", "float64")
            and entry.get("scheme") in QUANTIZE_DTYPES and shape_size(entry.get("shape"), limit) is not None
            and type(entry.get("block", LEGACY_INT8_BLOCK)) is int and entry.get("block", LEGACY_INT8_BLOCK) in _BLOCKS)


def dequantized(path: str, header: dict, workdir: str) -> str:
    """``path`` itself, or (for quantized weights) a copy in ``workdir`` with the original dtypes."""
    meta = header.get("__metadata__", {})
    if QUANTIZED_KEY not in meta:
        return path
    import numpy as np
    from safetensors import safe_open
    from safetensors.numpy import save_file

    limit = os.path.getsize(path)  # a quantized element takes at least one byte of the file
    try:
        changed = json.loads(meta[QUANTIZED_KEY])
    except (ValueError, RecursionError):
        changed = None
    if not (isinstance(changed, dict) and all(_quantized_entry(entry, limit) for entry in changed.values())):
        _refuse(path, f"its {QUANTIZED_KEY} metadata is malformed")
    with safe_open(path, framework="numpy") as f:
        tensors = {name: f.get_tensor(name) for name in f.keys()}
    for name, entry in changed.items():
        size = shape_size(entry["shape"], limit)
        stored = tensors.get(name)
        if entry["scheme"] == "float16":
            if stored is None or stored.dtype != np.float16 or stored.size != size:
                _refuse(path, f"quantized tensor {name[:40]!r} is missing or not float16 of its shape")
            tensors[name] = stored.astype(entry["dtype"]).reshape(entry["shape"])
            continue
        scales = tensors.pop(SCALES.format(name), None)
        block = entry.get("block", LEGACY_INT8_BLOCK)
        blocks = -(-size // block) or 1
        if (stored is None or stored.dtype != np.int8 or stored.size != blocks * block or scales is None
                or scales.dtype != np.float32 or scales.shape != (blocks,) or not np.isfinite(scales).all()):
            _refuse(path, f"int8 tensor {name[:40]!r} or its scales are missing or malformed")
        values = stored.reshape(blocks, block).astype(np.float32) * scales[:, None]
        tensors[name] = values.reshape(-1)[:size].astype(entry["dtype"]).reshape(entry["shape"])
    del meta[QUANTIZED_KEY]
    out = os.path.join(workdir, "weights.safetensors")
    save_file(tensors, out, metadata=meta)
    return out
