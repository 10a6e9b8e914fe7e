"""An agent folder's local code (``source = file.py:Class`` and what it imports), read so that it travels
with a trial (the same files a run keeps: :func:`agentos.learning._kept_code.agent_code`)."""

from __future__ import annotations

import os

from ..errors import UsageError


def local_sources(config, agent: str) -> dict[str, str]:
    """The local code of an agent folder: relative path -> text."""
    from ..learning._kept_code import CodeTooLarge, agent_code

    for comp in config.components.values():
        file_part = (comp.source or "").partition(":")[0].strip()
        if file_part.endswith(".py"):
            path = os.path.realpath(config.resolve_path(file_part))
            rel = os.path.relpath(path, os.path.realpath(config.directory))
            if rel.startswith(".."):
                raise UsageError(f"agent {agent}: {comp.kind}.{comp.name}: source {file_part!r} is outside its folder")
            if not os.path.isfile(path):
                raise UsageError(f"agent {agent}: {comp.kind}.{comp.name}: cannot read {file_part!r}: no such file")
    try:
        return {rel: data.decode("utf-8") for rel, data in agent_code(config).items()}
    except (CodeTooLarge, OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"agent {agent}: its local code cannot travel with a trial: {exc}") from None
