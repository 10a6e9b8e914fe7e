"""What an agent.ini ``source =`` may name: code the agent already has, nothing else.

An allowlist, checked before anything is imported: ``file.py:Class`` is a file inside the agent
folder (after resolving links), and ``module:Name`` is the very value of an entry point of an
installed component distribution (``agentos.<kind>``, not disabled, not a duplicate). Anything
else (``os:system``, ``subprocess:Popen``, ``logging:FileHandler``) is refused, whatever the flags.
"""

from __future__ import annotations

import os
import re

_ATTR_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_EXTRAS_RE = re.compile(r"\[[^\]]*\]\s*$")


def _compact(value: str) -> str:
    """``module : Name [extra]`` -> ``module:Name`` (how entry point values are compared)."""
    return re.sub(r"\s+", "", _EXTRAS_RE.sub("", value))


def source_problem(value: str, base_dir: str, entry_points) -> str:
    """Why ``value`` may not be loaded ("" when it may). ``entry_points``: the installed specs."""
    target, sep, attr = value.partition(":")
    target, attr = target.strip(), attr.strip()
    if not sep or not target or not _ATTR_RE.match(attr):
        return (
            f"source = {value!r} must be file.py:Class (a file in the agent folder) or an installed "
            "component's module:Class"
        )
    if target.endswith(".py"):
        folder = os.path.realpath(base_dir)
        path = os.path.realpath(os.path.join(folder, target))
        if os.path.commonpath([folder, path]) != folder:
            return f"source file {target!r} is outside the agent folder {folder}"
        return ""
    wanted = _compact(value)
    for spec in entry_points:
        if spec.source == "entry-point" and not spec.problem and _compact(spec.value) == wanted:
            return ""
    return (
        f"source = {value!r} is neither a file in the agent folder nor an entry point of an installed "
        "component (only code the agent already has can be named)"
    )
