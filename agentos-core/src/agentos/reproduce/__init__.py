"""``agentos reproduce RUN``: rebuild a training run from its record and check that it learns the same.

1. The run folder is data (someone else's): run.json and lock.json are read bounded and checked
   (:mod:`agentos.learning._record_check`), its agent.ini is read as in ``--from-run``
   (its ``[agentos]`` section dropped, every component it names must be in the lock), and it must
   be a finished ``train`` run that started from scratch (no ``--from-run``/``--checkpoint``).
2. :mod:`._rebuild`: the lock's packages are fetched from the configured index and checked (an
   altered lock is refused before anything is installed), then installed by hash in a fresh venv.
3. The fresh venv's ``agentos train`` runs with the recorded seed and budget in a scratch agent folder.
4. :mod:`._compare`: the new curve against the recorded one (identical for a ``deterministic``
   trainer, else within a tolerance), an overlay plot, and one line of verdict.

``--package NAME[==VERSION]`` starts from a published trained-policy package instead
(:mod:`._package`: its shipped lock, agent.ini, curve and ``training.json`` become the run folder).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess

from .._safe_text import printable
from ..errors import AgentOSError, UsageError

__all__ = ["reproduce"]

MAX_BUDGET = 10**12
MAX_INI_BYTES = 1024 * 1024


def _open_run(run: str, agent_ini: str | None):
    """The record ``run`` names: a run folder, or an id among the runs of the agent in this folder."""
    from ..config import AgentConfig
    from ..core._paths import find_agent_ini, runs_dir
    from ..learning._records import find_record

    if os.path.isdir(run) and os.path.isfile(os.path.join(run, "run.json")):
        return find_record(None, run)
    path = agent_ini or find_agent_ini()
    if not path:
        raise UsageError(f"no run folder {run!r} (and no agent.ini here to look its id up in)")
    return find_record(runs_dir(AgentConfig.load(path)), run)


def _check_run(record) -> tuple[int, str, int]:
    """The recorded seed and budget (``episodes`` or ``steps``) of a finished from-scratch training."""
    meta = record.meta
    if meta.get("mode") != "train":
        raise UsageError(f"run {record.id} is an agentos {meta.get('mode')!r} run: only training runs are reproduced")
    if meta.get("status") != "finished":
        raise UsageError(f"run {record.id} did not finish (status {meta.get('status')!r}): its curve is partial")
    request = meta.get("request") or {}
    if request.get("from_run") or request.get("checkpoint") or meta.get("parent"):
        raise UsageError(f"run {record.id} started from another run or a checkpoint: reproduce the run it started from")
    seed = meta.get("seed")
    if not isinstance(seed, int):
        raise UsageError(f"run {record.id} records no seed: it cannot be reproduced")
    for unit in ("episodes", "steps"):
        budget = request.get(unit)
        if budget is not None:
            if isinstance(budget, bool) or not isinstance(budget, int) or not 0 < budget <= MAX_BUDGET:
                raise UsageError(f"run {record.id}: request {unit} {str(budget)[:20]!r} is not a budget")
            return seed, unit, budget
    raise UsageError(f"run {record.id} records no budget (request episodes or steps)")


def _scratch_agent(record, lock: dict, folder: str, code: dict[str, bytes]) -> None:
    """The run's agent.ini, as ``--from-run`` reads it, and its kept code, written into the scratch agent
    ``folder``."""
    from ..config import AgentConfig
    from ..core._context import AgentContext
    from ..learning._from_run import received_config
    from ..learning._kept_code import restore as restore_code
    from ..learning._records import unlocked_components

    if os.path.getsize(record.path("agent.ini")) > MAX_INI_BYTES:
        raise UsageError(f"run {record.id}: agent.ini is larger than {MAX_INI_BYTES // 1024} KiB")
    os.makedirs(folder)
    path = os.path.join(folder, "agent.ini")
    with open(path, "w") as handle:
        handle.write("[agentos]\n")
    restore_code(code, folder)
    config = received_config(AgentConfig.load(path), record)
    for comp in config.components.values():
        rel = (comp.source or "").partition(":")[0].strip()
        if comp.source and rel not in code:
            raise UsageError(printable(f"run {record.id}: {comp.kind}.{comp.name}: source {comp.source[:80]!r} is "
                                       "not among the code the run kept; reproduce rebuilds kept code only"))
    unlocked = unlocked_components(AgentContext(config), lock)
    if unlocked:
        raise UsageError(f"run {record.id}: its agent.ini names components its lock.json does not list "
                         f"({', '.join(unlocked)}); not using it")
    config.document.save(path)


def _deterministic(python: str, lock: dict) -> bool:
    """Whether the run's trainer, as installed in the fresh venv, says ``deterministic = True``."""
    trainer = next((e for e in lock.get("components", []) if isinstance(e, dict) and e.get("kind") == "trainer"), None)
    if trainer is None:
        return False
    code = ("import sys\nfrom importlib.metadata import entry_points\n"
            "from agentos.host import normalize\n"
            "eps = [e for e in entry_points(group='agentos.trainer') if normalize(e.name) == normalize(sys.argv[1])]\n"
            "print(bool(eps) and getattr(eps[0].load(), 'deterministic', False) is True)\n")
    proc = subprocess.run([python, "-c", code, str(trainer.get("name"))], capture_output=True, text=True, timeout=300)
    return proc.returncode == 0 and proc.stdout.strip() == "True"


def _check_budget(record, unit: str, budget: int, recorded: list[tuple[float, int]]) -> None:
    """The budget is what the recorded curve took: a run folder cannot ask for more training than it shows
    (a 40-episode curve with ``request.episodes`` 10**12 would keep the fresh venv training for ever)."""
    took = len(recorded) if unit == "episodes" else sum(length for _, length in recorded)
    if budget != took:
        raise UsageError(
            f"run {record.id}: request {unit} {budget} is not what its returns.csv took ({took} {unit}): "
            "the record was altered"
        )


def _new_workdir(workdir: str | None, name: str) -> str:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    workdir = os.path.abspath(workdir or os.path.join("reproduce", f"{name}-{stamp}"))
    if os.path.exists(workdir) and os.listdir(workdir):
        raise UsageError(f"{workdir} exists and is not empty: give another --workdir")
    os.makedirs(workdir, exist_ok=True)
    return workdir


def _index_url(index_url: str | None, agent_ini: str | None) -> str:
    """The index to take packages from: ``--index-url``, else the user's agent.ini's (never the run's)."""
    from ..config import AgentConfig
    from ..core._paths import find_agent_ini
    from ..registry._client import resolve_index_url

    own = agent_ini or find_agent_ini()
    return resolve_index_url(index_url, AgentConfig.load(own) if own else None)


def reproduce(run: str | None = None, *, agent_ini: str | None = None, index_url: str | None = None,
              workdir: str | None = None, package: str | None = None, echo=None) -> dict:
    """Rebuild ``run`` (a run folder, or a run id of the agent here; or with ``package``, the run a
    published trained-policy package ``NAME[==VERSION]`` ships) in a fresh venv from its lock,
    retrain it with its seed and budget, and compare the curves. Returns ``reproduced`` (bool),
    ``verdict`` (one line), ``plot``, ``workdir``, ``new_run`` and the compared figures; an altered
    lock raises :class:`~agentos.reproduce._rebuild.LockMismatch` (nothing installed)."""
    from ..learning._kept_code import CodeMismatch, checked_code
    from . import _compare, _rebuild

    echo = echo or (lambda line: None)
    if package:
        from ._package import package_run

        url = _index_url(index_url, agent_ini)
        name = package.replace("==", "-")
        workdir = _new_workdir(workdir, name)
        run = package_run(package, url, os.path.join(workdir, "package"))
        echo(f"the run of {package}: {run}")
    record = _open_run(run, agent_ini)
    seed, unit, budget = _check_run(record)
    try:
        lock = record.lock()
    except (OSError, ValueError) as exc:
        raise UsageError(printable(f"run {record.id} has no readable lock.json ({exc})")) from None
    try:
        recorded = _compare.read_curve(record.path("returns.csv"))
    except _compare.CurveError as exc:
        raise UsageError(printable(f"run {record.id}: {exc}")) from None
    _check_budget(record, unit, budget, recorded)
    try:
        code = checked_code(record, lock)
    except CodeMismatch as exc:
        raise _rebuild.LockMismatch(str(exc)) from None
    pins, constraints = _rebuild.pins_from_lock(lock, code)
    if not package:
        workdir = _new_workdir(workdir, record.id)
        url = _index_url(index_url, agent_ini)
    agent_dir = os.path.join(workdir, "agent")
    _scratch_agent(record, lock, agent_dir, code)
    requirements = _rebuild.fetch_pinned(pins, url)
    python = _rebuild.build_venv(os.path.join(workdir, "venv"), requirements, constraints, echo)
    echo(f"retraining: agentos train {budget}{' --steps' if unit == 'steps' else ''} --seed {seed} in {agent_dir}")
    env = {k: v for k, v in os.environ.items() if k not in ("AGENTOS_AGENT_INI", "VIRTUAL_ENV")}
    command = [python, "-m", "agentos", "train", str(budget), "--seed", str(seed), "--quiet"]
    proc = subprocess.run(command + (["--steps"] if unit == "steps" else []), cwd=agent_dir, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise AgentOSError(printable(f"retraining in the fresh venv failed: {last[:300]}"))
    runs = sorted(os.listdir(os.path.join(agent_dir, "runs")))
    new_run = os.path.join(agent_dir, "runs", runs[-1])
    new = _compare.read_curve(os.path.join(new_run, "returns.csv"))
    result = _compare.compare(recorded, new, deterministic=_deterministic(python, lock))
    plot = _compare.overlay_plot(recorded, new, os.path.join(workdir, "overlay.png"),
                                 f"run {record.id}: recorded and reproduced")
    result.update(run=record.id, new_run=new_run, workdir=workdir, plot=plot, seed=seed, budget={unit: budget})
    tmp = os.path.join(workdir, "verdict.json.partial")
    with open(tmp, "w") as handle:
        json.dump(result, handle, indent=2)
    os.replace(tmp, os.path.join(workdir, "verdict.json"))
    return result
