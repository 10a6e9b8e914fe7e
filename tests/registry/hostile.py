"""Hostile inputs built by the tests themselves: broken wheels and hand-written index pages."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path


def raw_wheel(path: Path, members: dict[str, bytes | str], compress: bool = False) -> Path:
    """A zip with exactly ``members`` (no RECORD unless given): for wheels that break the rules."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", mode) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, (2020, 2, 2, 0, 0, 0)), data, compress_type=mode)
    return path


def wheel_members(name: str, version: str, metadata_extra: str = "", record: bool = True) -> dict[str, str]:
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    members = {
        f"{dist}/__init__.py": "",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{metadata_extra}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[agentos.environment]\n{dist.rsplit('_', 1)[-1]} = {dist}:Thing\n",
    }
    if record:
        members[f"{info}/RECORD"] = "".join(f"{m},,\n" for m in members) + f"{info}/RECORD,,\n"
    return members


def project_page(root: Path, project: str, files: list[dict]) -> Path:
    """A PEP 691 project page (and an empty catalogue naming no components) written by hand."""
    page = root / "simple" / project
    page.mkdir(parents=True, exist_ok=True)
    body = {"meta": {"api-version": "1.1"}, "name": project, "files": files}
    (page / "index.json").write_text(json.dumps(body))
    return page
