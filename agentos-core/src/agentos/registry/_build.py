"""Turning what the user names into files to publish: a project folder is built first."""

from __future__ import annotations

import glob
import importlib.util
import os
import subprocess
import sys

from ..errors import PublishError
from ._artifacts import is_distribution_file


def _backend_available(folder: str) -> bool:
    """Is the folder's build backend importable here (so no isolated build env is needed)?"""
    import tomllib

    try:
        with open(os.path.join(folder, "pyproject.toml"), "rb") as f:
            backend = tomllib.load(f).get("build-system", {}).get("build-backend", "")
    except (OSError, ValueError):
        return False
    top = backend.split(":")[0].split(".")[0]
    return bool(top) and importlib.util.find_spec(top) is not None


def build_project(folder: str, outdir: str, *, sdist: bool = False) -> list[str]:
    """Build a wheel (and with ``sdist`` an sdist) of ``folder`` into ``outdir``; returns their paths.

    Uses ``python -m build`` (a dependency of agentos-core; without isolation when the backend is
    importable, so that it works offline) on the folder's absolute path, so a folder name is never
    resolved as a requirement. The wheel is built from the folder itself, not via the sdist.
    """
    folder = os.path.abspath(folder)
    if not os.path.exists(os.path.join(folder, "pyproject.toml")) and not os.path.exists(
        os.path.join(folder, "setup.py")
    ):
        raise PublishError(f"{folder}: not a Python project (no pyproject.toml or setup.py)")
    if importlib.util.find_spec("build") is None:
        raise PublishError(
            "building a folder needs the 'build' package (a dependency of agentos-core): pip install build"
        )
    cmd = [sys.executable, "-m", "build", "--wheel", *(["--sdist"] if sdist else []), "--outdir", outdir, folder]
    if _backend_available(folder):
        cmd.insert(3, "--no-isolation")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        last = lines[-1].strip() if lines else f"exit code {proc.returncode}"
        raise PublishError(f"{folder}: build failed: {last}")
    built = sorted(p for p in glob.glob(os.path.join(outdir, "*")) if is_distribution_file(p))
    if not built:
        raise PublishError(f"{folder}: the build produced no wheel or sdist")
    return built


def collect(paths: list[str], workdir: str, *, sdist: bool = False) -> list[str]:
    """Distribution files for ``paths`` (files as given; folders built into ``workdir``)."""
    files = []
    for i, path in enumerate(paths):
        if os.path.isdir(path):
            out = os.path.join(workdir, f"build-{i}")
            os.makedirs(out, exist_ok=True)
            files += build_project(path, out, sdist=sdist)
        elif os.path.isfile(path):
            files.append(path)
        else:
            raise PublishError(f"{path}: no such file or folder")
    return files
