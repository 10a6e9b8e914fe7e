"""Helpers of the authoring tests."""

from __future__ import annotations

from pathlib import Path

from conftest import ROOT, Venv

TEMPLATES = ROOT / "templates"
DOCS = ROOT / "docs" / "plugin-authors.md"  # the plugin author's guide: the publish workflow


def run_pytest(venv: Venv, project: Path, *args: str, timeout: int = 600):
    """Run a rendered project's own tests with the venv's interpreter, as its author would."""
    return venv.run(
        "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        *args,
        cwd=project,
        timeout=timeout,
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )
