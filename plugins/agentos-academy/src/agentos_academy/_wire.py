"""Plain data on the wire: what actions take and return, carried by Academy's JSON serializer.

Agents never unpickle what a peer sends. Arguments and results are numbers, strings, ``None``,
lists, dicts with string keys, ``bytes`` and numeric numpy arrays; bytes and arrays travel as tagged
dicts (``{"__agentos__": "bytes", "b64": ...}``, ``{"__agentos__": "ndarray", "dtype": "<f4",
"shape": [...], "b64": ...}``) that are decoded only against an allowlist of dtypes and sizes.
"""

from __future__ import annotations

import base64
import binascii
import functools
import logging
import math

TAG = "__agentos__"
#: numpy dtype kinds an array may have: bool, signed and unsigned int, float, complex.
ARRAY_KINDS = frozenset("biufc")
MAX_ITEMS = 1 << 28  # elements in one array (1 GiB of float32)
MAX_DEPTH = 32


SCALARS = frozenset({int, float, str, bool, type(None)})


def json_only():
    """Academy's serialization setting that allows JSON and nothing else (no pickle)."""
    from academy.serialize import SerializationStrategy

    return SerializationStrategy.JSON


def to_wire(value, depth: int = 0):
    """``value`` as JSON-ready plain data; ``TypeError`` for anything else."""
    if type(value) in SCALARS:  # the common case first: observations and actions are often numbers
        return value
    if depth > MAX_DEPTH:
        raise TypeError("data nested too deeply")
    if isinstance(value, bool | int | str | float):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return {TAG: "bytes", "b64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, list | tuple):
        return [to_wire(item, depth + 1) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("dict keys must be strings")
        if TAG in value:
            raise TypeError(f"dict key {TAG!r} is reserved")
        return {key: to_wire(item, depth + 1) for key, item in value.items()}
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind in ARRAY_KINDS and hasattr(value, "tobytes") and hasattr(value, "shape"):
        if value.shape == ():  # a numpy scalar
            return to_wire(value.item(), depth)
        import numpy as np

        array = np.ascontiguousarray(value)
        return {TAG: "ndarray", "dtype": array.dtype.str, "shape": list(array.shape),
                "b64": base64.b64encode(array.tobytes()).decode("ascii")}
    raise TypeError(f"{type(value).__name__} is not plain data (numbers, strings, lists, dicts, bytes, arrays)")


def from_wire(value, depth: int = 0):
    """Decode what :func:`to_wire` made (after JSON); ``ValueError`` for anything malformed."""
    if type(value) in SCALARS:
        return value
    if depth > MAX_DEPTH:
        raise ValueError("data nested too deeply")
    if isinstance(value, list):
        return [from_wire(item, depth + 1) for item in value]
    if not isinstance(value, dict):
        raise ValueError(f"{type(value).__name__} is not plain data")
    if TAG not in value:
        return {str(key): from_wire(item, depth + 1) for key, item in value.items()}
    return _tagged(value)


def _b64(value: dict) -> bytes:
    data = value.get("b64")
    if not isinstance(data, str):
        raise ValueError("encoded data without b64 text")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("bad base64 data") from None


def _tagged(value: dict):
    kind = value[TAG]
    if kind == "bytes" and set(value) == {TAG, "b64"}:
        return _b64(value)
    if kind == "ndarray" and set(value) == {TAG, "dtype", "shape", "b64"}:
        import numpy as np

        dtype_text, shape = value["dtype"], value["shape"]
        if not isinstance(dtype_text, str) or len(dtype_text) > 8:
            raise ValueError("bad array dtype")
        try:
            dtype = np.dtype(dtype_text)
        except TypeError:
            raise ValueError(f"bad array dtype {dtype_text!r}") from None
        if dtype.kind not in ARRAY_KINDS or dtype.fields is not None or dtype.subdtype is not None:
            raise ValueError(f"array dtype {dtype_text!r} is not numeric")
        if (not isinstance(shape, list) or len(shape) > MAX_DEPTH
                or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)):
            raise ValueError("bad array shape")
        count = math.prod(shape)
        if count > MAX_ITEMS:
            raise ValueError(f"array of {count} elements is too large")
        data = _b64(value)
        if len(data) != count * dtype.itemsize:
            raise ValueError(f"array data has {len(data)} bytes, shape {tuple(shape)} of {dtype} needs "
                             f"{count * dtype.itemsize}")
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    raise ValueError(f"unknown encoded value {str(kind)[:40]!r}")


class ActionFailed(Exception):  # noqa: N818 -- the name a peer reads: "ActionFailed: ValueError: ..."
    """What a peer learns of an action that raised: one line, the exception's type and message; never
    the traceback (file paths, code), which is logged where the agent runs."""

    @property
    def __traceback__(self):  # Academy sends ``traceback.format_exception(exc)``: this keeps it one line
        return None

    @__traceback__.setter
    def __traceback__(self, value):
        pass


ActionFailed.__module__ = "builtins"  # shown as "ActionFailed: ...", without a module path


def one_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (at most 300 characters)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__


def plain_action(method):
    """An action method whose arguments are decoded from and whose result is encoded to plain data;
    an exception reaches the caller as one :class:`ActionFailed` line, its traceback is logged here."""

    @functools.wraps(method)
    async def wrapper(self, *args, **kwargs):
        try:
            if args:
                args = [from_wire(a) for a in args]
            if kwargs:
                kwargs = {str(k): from_wire(v) for k, v in kwargs.items()}
            return to_wire(await method(self, *args, **kwargs))
        except Exception as exc:
            line = one_line(exc)
            logging.getLogger("agentos_academy").warning("agentos-academy: action %r failed: %s", method.__name__,
                                                         line, exc_info=exc)
            raise ActionFailed(line) from None

    return wrapper
