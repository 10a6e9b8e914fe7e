"""Typed values in ``agent.ini``: ints, floats, bools, none, strings and lists of those.

learning_rate = 0.001        -> float
hidden = [64, 64]            -> list of int
algorithm = PPO              -> str ("PPO" or 'PPO' too)
max_steps = none             -> None
"""

from __future__ import annotations

import re

_INT_RE = re.compile(r"^[+-]?\d+(_\d+)*$")
_FLOAT_RE = re.compile(r"^[+-]?((\d+(_\d+)*)?\.\d+|\d+(_\d+)*\.?)([eE][+-]?\d+)?$|^[+-]?(inf|nan)$", re.I)
_BOOLS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def parse_value(raw: str):
    """Turn the text of a value into a Python value; raises ValueError when it is malformed."""
    text = raw.strip()
    if text.startswith("["):
        if not text.endswith("]"):
            raise ValueError(f"unclosed list {text!r} (lists look like [1, 2, 3])")
        inner = text[1:-1].strip()
        return [parse_scalar(item) for item in split_items(inner)] if inner else []
    if text.endswith("]") and "[" not in text:
        raise ValueError(f"unexpected ']' in {text!r}")
    return parse_scalar(text)


def parse_scalar(text: str):
    text = text.strip()
    if not text:
        raise ValueError("empty value")
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if text[:1] in "\"'":
        raise ValueError(f"unclosed quote in {text!r}")
    lower = text.lower()
    if lower in _BOOLS:
        return _BOOLS[lower]
    if lower in ("none", "null"):
        return None
    if _INT_RE.match(text):
        return int(text)
    if _FLOAT_RE.match(text):
        return float(text)
    if text.startswith("[") or "," in text:
        raise ValueError(f"nested lists and bare commas are not allowed: {text!r}")
    return text


def split_items(inner: str) -> list[str]:
    """Split ``a, "b, c", d`` on commas outside quotes."""
    items, current, quote = [], [], None
    for ch in inner:
        if quote:
            current.append(ch)
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            current.append(ch)
        elif ch == ",":
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    if quote:
        raise ValueError(f"unclosed quote in [{inner}]")
    items.append("".join(current))
    if any(not item.strip() for item in items):
        raise ValueError(f"empty item in list [{inner}]")
    return items


def format_value(value) -> str:
    """The inverse of :func:`parse_value`, for values written by tools."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, str):
        try:
            needs_quotes = parse_scalar(value) != value or value != value.strip() or not value
        except ValueError:
            needs_quotes = True
        return f'"{value}"' if needs_quotes or any(c in value for c in "#;,[]") else value
    return repr(value)
