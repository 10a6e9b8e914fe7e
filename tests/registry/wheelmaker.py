"""Real, installable wheels written directly (no build backend), for the registry tests."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def make_wheel(
    folder: Path,
    name: str,
    version: str,
    entry_points: dict[str, dict[str, str]] | None = None,
    requires: list[str] = (),
    summary: str = "A test component",
    requires_python: str = ">=3.8",
    tag: str = "py3-none-any",
    code: str = "class Thing:\n    pass\n",
    description: str = "",
) -> Path:
    """A real, installable wheel written directly (no build backend)."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = name.replace("-", "_")
    module = dist
    info = f"{dist}-{version}.dist-info"
    meta = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {summary}",
        f"Requires-Python: {requires_python}",
    ]
    meta += [f"Requires-Dist: {r}" for r in requires]
    files = {
        f"{module}/__init__.py": code,
        f"{info}/METADATA": "\n".join(meta) + "\n\n" + description,
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: {tag}\n",
    }
    if entry_points:
        text = "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
            for group, eps in entry_points.items()
        )
        files[f"{info}/entry_points.txt"] = text
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = "\n".join(record) + "\n"
    out = folder / f"{dist}-{version}-{tag}.whl"
    with zipfile.ZipFile(out, "w") as zf:
        for path, text in files.items():
            zf.writestr(zipfile.ZipInfo(path, (2020, 2, 2, 0, 0, 0)), text)
    return out


def env_wheel(folder: Path, name: str, version: str, requires=(), **kw) -> Path:
    """A wheel of ``agentos-env-<name>`` declaring the environment ``name``."""
    module = f"agentos_env_{name.replace('-', '_')}"
    return make_wheel(
        folder, f"agentos-env-{name}", version, {"agentos.environment": {name: f"{module}:Thing"}}, requires, **kw
    )
