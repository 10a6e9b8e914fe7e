"""``agentos runs`` and ``agentos runs show``: past runs of an agent, read from their records."""

from __future__ import annotations

import os

from ..core._paths import agent_ini_path


def list_runs(agent_ini: str | None = None) -> list[dict]:
    """Past runs of an agent, oldest first: id, mode, status, episodes, steps, returns, components."""
    from ..config import AgentConfig
    from ._records import list_records, runs_dir

    path = agent_ini_path(agent_ini, "agentos runs PATH")
    rows = []
    for rec in list_records(runs_dir(AgentConfig.load(path))):
        summary = rec.meta.get("summary") or _so_far(rec)
        comps = rec.meta.get("components", {})
        rows.append(
            {
                "id": rec.id,
                "mode": rec.meta.get("mode"),
                "status": run_status(rec),
                "started": (rec.meta.get("started") or "")[:19] or None,  # to the second (stored finer)
                "episodes": summary.get("episodes"),
                "steps": summary.get("steps"),
                "mean_return": summary.get("mean_return"),
                "last100_mean": _last100(rec),
                "environment": comps.get("environment"),
                "policy": comps.get("policy"),
                "trainer": comps.get("trainer") if rec.meta.get("mode") == "train" else None,
                "checkpoint": rec.meta.get("checkpoint"),
                "directory": rec.directory,
            }
        )
    return rows


def run_status(rec) -> str | None:
    """run.json's status, except ``unfinished`` for a run still marked ``running`` whose process (on this
    machine) is gone: it was killed, or its machine stopped, before it could end its record."""
    meta = rec.meta
    if meta.get("status") != "running":
        return meta.get("status")
    from ._records import host_id

    pid, host = meta.get("pid"), meta.get("host")
    if isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid < 2**31 or host != host_id():
        return "running"  # another machine's, or an older record: as recorded
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return "unfinished"
    except OSError:
        pass
    return "running"


def _so_far(rec) -> dict:
    """Episodes and steps of a run that has no summary yet (running, or killed), from its returns.csv rows."""
    from ..trackers import iter_returns

    episodes = steps = 0
    try:
        for frame, _ in iter_returns(rec.directory):
            episodes, steps = episodes + 1, frame
    except (OSError, ValueError):
        return {}
    return {"episodes": episodes, "steps": steps}


def _last100(rec) -> float | None:
    """Mean return of the run's last 100 episodes (:func:`agentos.core._runner.last100_mean`)."""
    from collections import deque

    from ..core._runner import last100_mean
    from ..trackers import iter_returns

    value = (rec.meta.get("summary") or {}).get("last100_mean")
    if value is None:  # records made before the summary kept it
        try:
            value = last100_mean(list(deque((r for _, r in iter_returns(rec.directory)), maxlen=100)))
        except (OSError, ValueError):
            return None
    return None if value != value else float(value)


def show_run(ref: str, agent_ini: str | None = None) -> dict:
    """One run: its run.json, lock, last100 mean and files."""
    from ..config import AgentConfig
    from ._records import find_record, runs_dir

    directory = None
    if not os.path.isfile(os.path.join(ref, "run.json")):
        directory = runs_dir(AgentConfig.load(agent_ini_path(agent_ini, "agentos runs show PATH")))
    rec = find_record(directory, ref)
    info = dict(rec.meta)
    info["status"] = run_status(rec)
    if rec.meta.get("parent"):
        from ._from_run import ancestry

        info["ancestry"] = ancestry(rec, directory or os.path.dirname(rec.directory))
    info["directory"] = rec.directory
    info["files"] = sorted(os.listdir(rec.directory))
    info["last100_mean"] = _last100(rec)
    try:
        lock = rec.lock()
        lock["components"] = [e for e in lock.get("components", []) if isinstance(e, dict)]
        if not isinstance(lock.get("packages", []), list):
            lock["packages"] = []
        info["lock"] = lock
    except (OSError, ValueError):
        info["lock"] = None
    return info
