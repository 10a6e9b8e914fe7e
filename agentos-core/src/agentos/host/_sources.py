"""What an agent.ini ``source =`` may name: code the agent already has, nothing else.

An allowlist, checked before anything is imported:

* ``file.py:Class``: the file is the agent's own code, a ``.py`` file inside the agent folder (after
  resolving links) and not inside a hidden folder (``.venv``, ``.git``, any ``.x``), the runs
  folder, ``experiments/`` or a ``site-packages``/``dist-packages`` folder; the name after the colon
  is ONE identifier, and once the file is loaded it must name a class or function defined in that
  very file (``obj.__module__``), never something it imported (``torch``, ``os.system``).
* ``module:Name`` is the very value of an entry point of an installed component distribution
  (``agentos.<kind>``, not disabled, not a duplicate).

Anything else (``os:system``, ``policy.py:torch.os.system``) is refused, whatever the flags.
"""

from __future__ import annotations

import os
import re

_ATTR_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_IDENTIFIER_RE = re.compile(r"^[A-Za-z_]\w*$")
_EXTRAS_RE = re.compile(r"\[[^\]]*\]\s*$")
#: Folders that never hold an agent's own code (installed packages), at any depth.
PACKAGE_FOLDERS = ("site-packages", "dist-packages")


def _compact(value: str) -> str:
    """``module : Name [extra]`` -> ``module:Name`` (how entry point values are compared)."""
    return re.sub(r"\s+", "", _EXTRAS_RE.sub("", value))


def _inside(folder: str, path: str) -> bool:
    return os.path.commonpath([folder, path]) == folder


def file_problem(target: str, base_dir: str, runs_dir: str | None = None) -> str:
    """Why ``target`` (a ``.py`` path from ``source =``) is not the agent's own code ("" when it is)."""
    folder = os.path.realpath(base_dir)
    path = os.path.realpath(os.path.join(folder, target))
    if not _inside(folder, path):
        return f"source file {target!r} is outside the agent folder {folder}"
    parts = os.path.relpath(path, folder).split(os.sep)
    for depth, part in enumerate(parts[:-1]):
        if part.startswith(".") or part in PACKAGE_FOLDERS or (depth == 0 and part == "experiments"):
            return f"source file {target!r} is inside {part}/, not the agent's own code"
    runs = os.path.realpath(runs_dir if runs_dir else os.path.join(folder, "runs"))
    if _inside(runs, path) or _inside(os.path.join(folder, "runs"), path):
        return f"source file {target!r} is inside the runs folder, not the agent's own code"
    return ""


def source_problem(value: str, base_dir: str, entry_points, runs_dir: str | None = None) -> str:
    """Why ``value`` may not be loaded ("" when it may). ``entry_points``: the installed specs;
    ``runs_dir``: the agent's runs folder (no code is ever taken from there)."""
    target, sep, attr = value.partition(":")
    target, attr = target.strip(), attr.strip()
    if target.endswith(".py"):
        if not sep or not _IDENTIFIER_RE.match(attr):
            return (
                f"source = {value!r} must be file.py:Class, one name of a class or function defined in "
                "that file (a file of the agent's own code)"
            )
        return file_problem(target, base_dir, runs_dir)
    if not sep or not target or not _ATTR_RE.match(attr):
        return (
            f"source = {value!r} must be file.py:Class (a file in the agent folder) or an installed "
            "component's module:Class"
        )
    wanted = _compact(value)
    for spec in entry_points:
        if spec.source == "entry-point" and not spec.problem and _compact(spec.value) == wanted:
            return ""
    return (
        f"source = {value!r} is neither a file in the agent folder nor an entry point of an installed "
        "component (only code the agent already has can be named)"
    )


def defined_in(obj, module, value: str):
    """``obj`` when it is a class or function defined in ``module`` (the file ``value`` names)."""
    if getattr(obj, "__module__", None) != module.__name__:
        raise ImportError(f"{value!r} names no class or function defined in that file (only the file's own code)")
    return obj
