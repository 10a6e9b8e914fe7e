"""Text that came from someone else (a package, an index, a run or experiment record), made safe for a terminal.

Control characters (C0, DEL, C1 - ESC sequences that retitle the window, move the cursor or fake
table rows) and bidirectional overrides are replaced by ``?``; everything else is kept.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def printable(text) -> str:
    """``text`` with every control character replaced by ``?`` (one line, nothing the terminal obeys)."""
    return _UNSAFE.sub("?", str(text))


_UNSAFE_BLOCK = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def printable_block(text) -> str:
    """Like :func:`printable`, but keeps newlines and tabs (a long description, several lines)."""
    return _UNSAFE_BLOCK.sub("?", str(text).replace("\r\n", "\n"))


def printable_row(row: dict) -> dict:
    """A row for display: every string value made printable (lists of strings too)."""
    out = {}
    for key, value in row.items():
        if isinstance(value, str):
            value = printable(value)
        elif isinstance(value, list):
            value = [printable(v) if isinstance(v, str) else v for v in value]
        out[key] = value
    return out
