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


def crowded_wheel(path: Path, name: str, count: int, path_length: int = 20, claimed: int | None = None) -> Path:
    """A valid wheel of ``name`` 1.0 plus ``count`` empty members (names ``path_length`` long); with
    ``claimed``, its End Of Central Directory record understates the count (zipfile reads on)."""
    members = wheel_members(name, "1.0")
    dist = name.replace("-", "_")
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for member, data in members.items():
            zf.writestr(zipfile.ZipInfo(member, (2020, 2, 2, 0, 0, 0)), data)
        for i in range(count):
            zf.writestr(zipfile.ZipInfo(f"{dist}/e{i:0{path_length - len(dist) - 2}d}", (2020, 2, 2, 0, 0, 0)), b"")
    if claimed is not None:  # entries on this disk and in all: offsets 8 and 10 of the 22-byte record
        data = bytearray(path.read_bytes())
        end = data.rfind(b"PK\x05\x06")
        data[end + 8 : end + 12] = claimed.to_bytes(2, "little") * 2
        path.write_bytes(bytes(data))
    return path
