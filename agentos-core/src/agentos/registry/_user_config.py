"""The user's own AgentOS settings (``agentos config``): today, the default ``index-url``.

Stored as a small INI file in the platform's user config folder: ``$XDG_CONFIG_HOME/agentos``
(default ``~/.config/agentos``) on Linux and other Unixes, ``~/Library/Application Support/agentos``
on macOS, ``%APPDATA%\\agentos`` on Windows. Written atomically.
"""

from __future__ import annotations

import configparser
import os
import sys

from ..errors import UsageError

SECTION = "agentos"
KEYS = {"index-url": "the package index used when no --index-url, $AGENTOS_INDEX_URL or agent.ini index-url is given"}


def config_dir() -> str:
    if sys.platform == "win32":
        base = os.environ.get("APPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Roaming")
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Application Support")
    else:
        base = os.environ.get("XDG_CONFIG_HOME") or ""
        if not os.path.isabs(base):  # the XDG spec: relative values are ignored
            base = os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "agentos")


def config_path() -> str:
    return os.path.join(config_dir(), "config.ini")


def _read() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        with open(config_path(), encoding="utf-8") as f:
            parser.read_file(f)
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError, configparser.Error) as exc:
        raise UsageError(f"{config_path()}: unreadable ({str(exc).splitlines()[0]})") from None
    return parser


def get(key: str) -> str | None:
    value = _read().get(SECTION, key, fallback="").strip()
    return value or None


def values() -> dict[str, str]:
    parser = _read()
    return {k: parser.get(SECTION, k, fallback="").strip() for k in KEYS if parser.get(SECTION, k, fallback="").strip()}


def _check_key(key: str) -> None:
    if key not in KEYS:
        raise UsageError(f"unknown setting {key!r} (settings: {', '.join(sorted(KEYS))})")


def set_value(key: str, value: str | None) -> str:
    """Set (or with None remove) ``key``; returns the file written."""
    from ._files import write_atomic

    _check_key(key)
    if value is not None:
        value = value.strip()
        if not value or any(c in value for c in "\r\n"):
            raise UsageError(f"invalid value for {key}: {value!r}")
        if key == "index-url" and "://" not in value:
            value = os.path.abspath(value)
    parser = _read()
    if not parser.has_section(SECTION):
        parser.add_section(SECTION)
    if value is None:
        parser.remove_option(SECTION, key)
    else:
        parser.set(SECTION, key, value)
    import io

    buf = io.StringIO()
    parser.write(buf)
    write_atomic(config_path(), buf.getvalue())
    return config_path()
