"""Starting from a recorded run (``agentos run --from-run``, ``agentos train --from-run``).

A run folder may come from someone else, so it is data: its agent.ini is read with the current
agent's folder (its ``source =`` names go through the host's allowlist), every component it names
must be in its ``lock.json``, the installed components must match the lock (unless ``force``), and
the files it names (checkpoint, trainer state) must be plain names of files inside the run folder.
"""

from __future__ import annotations

import os

from ..errors import UsageError


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def run_file(record, key: str) -> str | None:
    """The file that ``run.json``'s ``key`` names, only if it is a plain name inside the run folder."""
    name = record.meta.get(key)
    if not name:
        return None
    if not isinstance(name, str) or os.path.basename(name) != name or name in (".", ".."):
        raise UsageError(f"run {record.id}: {key} {str(name)[:80]!r} is not a file name inside the run folder")
    return record.path(name)


def open_run(path: str, from_run: str, *, force: bool, command: str = "run"):
    """The record ``from_run`` names and the agent context made from its agent.ini, after the trust
    checks; returns ``(record, context, checkpoint path)``. The context becomes the active one."""
    from ..config import AgentConfig
    from ..core._context import AgentContext, use
    from ._records import find_record, lock_differences, runs_dir, unlocked_components

    here = AgentConfig.load(path)
    source_run = find_record(runs_dir(here), from_run)
    try:
        with open(source_run.path("agent.ini"), encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"run {source_run.id} has no readable agent.ini ({_one_line(exc)})") from None
    context = use(AgentContext(AgentConfig.from_text(text, path=path)))
    try:
        lock = source_run.lock()
        if not isinstance(lock, dict) or not isinstance(lock.get("components", []), list):
            raise ValueError("not a lock")
    except (OSError, ValueError) as exc:
        raise UsageError(f"run {source_run.id} has no readable lock.json ({_one_line(exc)})") from None
    unlocked = unlocked_components(context, lock)
    if unlocked:  # never overridden by --force: what is not locked could be anything
        raise UsageError(
            f"run {source_run.id}: its agent.ini names components that its lock.json does not list "
            f"({', '.join(unlocked)}); not using it"
        )
    differences = lock_differences(context, lock)
    if differences and not force:
        raise UsageError(
            f"run {source_run.id} was made with other components: {'; '.join(differences)} "
            f"(reinstall them, or pass --force to {command} anyway)"
        )
    checkpoint = run_file(source_run, "checkpoint")
    if checkpoint is None:
        raise UsageError(f"run {source_run.id} has no checkpoint (its policy saved no state)")
    return source_run, context, checkpoint


def copy_agent_ini(source_run, record) -> None:
    """The agent.ini that ran is the source run's: the new record keeps that one."""
    with open(source_run.path("agent.ini"), "rb") as src, open(record.path("agent.ini"), "wb") as dst:
        dst.write(src.read())


def ancestry(record, directory: str | None, limit: int = 50) -> list[dict]:
    """The runs a run continued from, nearest first (``parent`` in run.json), as far as they are found."""
    from ._records import find_record

    chain, seen, current = [], {record.id}, record
    while len(chain) < limit:
        parent = current.meta.get("parent")
        if not isinstance(parent, str) or not parent or parent in seen:
            break
        seen.add(parent)
        try:
            current = find_record(directory, parent)
        except (UsageError, OSError, ValueError):
            chain.append({"id": parent, "found": False})
            break
        summary = current.meta.get("summary") or {}
        chain.append(
            {"id": parent, "found": True, "status": current.meta.get("status"),
             "episodes": summary.get("episodes"), "steps": summary.get("steps")}
        )
    return chain
