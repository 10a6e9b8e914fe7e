"""Starting from a recorded run (``agentos run --from-run``, ``agentos train --from-run``).

A run folder may come from someone else, so it is data: its agent.ini is read with the current
agent's folder (its ``source =`` names go through the host's allowlist), every component it names
must be in its ``lock.json``, the installed components must match the lock (unless ``force``), and
the files it names (checkpoint, trainer state) must be plain names of files inside the run folder.
``RUN@best`` names the run's best evaluated checkpoint (``best.<suffix>``) instead of its last one.
"""

from __future__ import annotations

from .._safe_text import printable
from ..errors import UsageError
from ._records import run_file

#: ``RUN@best``: the run's best evaluated checkpoint (``[train] eval_every_*``), not its last one.
BEST_SUFFIX = "@best"


def checkpoint_choice(ref: str) -> tuple[str, str]:
    """``(run reference, run.json key of the checkpoint)``: ``best_checkpoint`` for ``RUN@best``."""
    if isinstance(ref, str) and ref.endswith(BEST_SUFFIX) and len(ref) > len(BEST_SUFFIX):
        return ref[: -len(BEST_SUFFIX)], "best_checkpoint"
    return ref, "checkpoint"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def open_run(path: str, from_run: str, *, force: bool, command: str = "run"):
    """The record ``from_run`` names and the agent context made from its agent.ini, after the trust
    checks; returns ``(record, context, checkpoint path)``. The context becomes the active one."""
    from ..config import AgentConfig
    from ..core._context import use
    from ._records import find_record, runs_dir
    from ._run_sources import fetch_run_folder, remove_with

    here = AgentConfig.load(path)
    from_run, key = checkpoint_choice(from_run)
    fetched = fetch_run_folder(from_run)  # "mlflow:<id>": a plugin's run source, into a temporary folder
    try:
        source_run = find_record(runs_dir(here), fetched or from_run)
    except BaseException:
        if fetched is not None:
            import shutil

            shutil.rmtree(fetched, ignore_errors=True)
        raise
    if fetched is not None:
        remove_with(source_run, fetched)
    context, checkpoint = checked_run_context(here, source_run, force=force, command=command, key=key)
    return source_run, use(context), checkpoint


def checked_run_context(here, source_run, *, force: bool, command: str = "run", key: str = "checkpoint"):
    """``(context, checkpoint path)`` of a recorded run of the agent whose config is ``here``, after
    the trust checks of :func:`open_run` (the context is not made the active one: the arena holds
    several)."""
    from ..core._context import AgentContext
    from ._records import lock_differences, unlocked_components

    context = AgentContext(received_config(here, source_run))
    try:
        lock = source_run.lock()
    except (OSError, ValueError) as exc:
        raise UsageError(printable(f"run {source_run.id} has no readable lock.json ({_one_line(exc)})")) from None
    unlocked = unlocked_components(context, lock)
    if unlocked:  # never overridden by --force: what is not locked could be anything
        raise UsageError(
            f"run {source_run.id}: its agent.ini names components that its lock.json does not list "
            f"({', '.join(unlocked)}); not using it"
        )
    local = lock_differences(context, lock, local=True)
    if local:  # never overridden by --force: a local component is locked by its file's hash alone
        raise UsageError(printable(
            f"run {source_run.id}: its local components differ from this agent's code: {'; '.join(local)}; "
            "not using it (--force accepts other installed versions only)"
        ))
    differences = lock_differences(context, lock, local=False)
    if differences and not force:
        raise UsageError(
            f"run {source_run.id} was made with other components: {'; '.join(differences)} "
            f"(reinstall them, or pass --force to {command} anyway)"
        )
    checkpoint = run_file(source_run, key)
    if checkpoint is None and key == "best_checkpoint":
        raise UsageError(f"run {source_run.id} has no best checkpoint (it kept one only with [train] "
                         "eval_every_steps or eval_every_episodes and keep_best = true)")
    if checkpoint is None:
        raise UsageError(f"run {source_run.id} has no checkpoint (its policy saved no state)")
    return context, checkpoint


def received_config(here, source_run):
    """The run folder's agent.ini, read as the current agent's: its components and settings, but the
    ``[agentos]`` section (runs, venv, seed, index...) of the user's own agent.ini, and ``source =``
    files resolved in the user's agent folder. Errors name the run folder's file."""
    from ..config import AgentConfig, IniDocument

    ini = source_run.path("agent.ini")
    try:
        with open(ini, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(printable(f"run {source_run.id} has no readable agent.ini ({_one_line(exc)})")) from None
    document = IniDocument(text, ini)
    theirs = document.sections.get("agentos")
    if theirs is not None:  # blanked line by line, so that errors still give the file's line numbers
        for index in range(theirs.line - 1, document._section_end("agentos")):
            document.lines[index] = ";"
        document._parse()
    own = here.document.sections.get("agentos")
    for key, entry in (own.entries.items() if own else ()):
        document.set("agentos", key, entry.raw)
    config = AgentConfig(document)
    config.directory = here.directory  # source files and relative paths: the user's agent folder
    config.meta_path = here.path  # where its [agentos] section comes from
    return config


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
