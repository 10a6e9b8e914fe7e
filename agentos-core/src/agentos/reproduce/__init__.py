"""``agentos reproduce RUN``: rebuild a training run from its record and check that it learns the same.

1. The run folder is data (someone else's): run.json and lock.json are read bounded and checked
   (:mod:`agentos.learning._record_check`), its agent.ini is read as in ``--from-run``
   (its ``[agentos]`` section dropped, every component it names must be in the lock), it must
   be a finished ``train`` run whose budget its curve shows (:mod:`._budget`), and the agent's own
   code it kept must be the files its lock hashed (:mod:`agentos.learning._kept_code`). A run that
   continued from another (``--from-run``) brings its chain: each run folder beside its child's,
   at most :data:`._budget.MAX_CHAIN` stages, all checked before anything is installed.
2. :mod:`._rebuild`: the lock's packages are fetched from the configured index and checked (an
   altered lock is refused before anything is installed), then installed by hash in a fresh venv.
3. The fresh venv's ``agentos train`` runs with the recorded seed and budget in a scratch agent folder
   holding the run's agent.ini and kept code; a chain's stages run root first, each ``--from-run``
   the reproduced run of the stage before (one venv per distinct lock).
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
from ._budget import MAX_INI_BYTES

__all__ = ["reproduce"]


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


def _scratch_agent(record, lock: dict, folder: str, code: dict[str, bytes]) -> None:
    """The run's agent.ini, as ``--from-run`` reads it, and its kept code, written into the scratch agent
    ``folder``."""
    from ..config import AgentConfig
    from ..core._context import AgentContext
    from ..learning._from_run import received_config
    from ..learning._kept_code import kept_path
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
        if comp.source and kept_path(comp.source) not in code:
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


def _prepared(record) -> dict:
    """One stage to retrain, after every check of its record (nothing installed yet)."""
    from ..learning._kept_code import CodeMismatch, checked_code
    from . import _budget, _compare, _rebuild

    seed, unit, budget = _budget.check_run(record)
    try:
        lock = record.lock()
    except (OSError, ValueError) as exc:
        raise UsageError(printable(f"run {record.id} has no readable lock.json ({exc})")) from None
    try:
        recorded = _compare.read_curve(record.path("returns.csv"))
    except _compare.CurveError as exc:
        raise UsageError(printable(f"run {record.id}: {exc}")) from None
    _budget.check_budget(record, _budget.run_config(record), unit, budget, recorded)
    try:
        code = checked_code(record, lock)
    except CodeMismatch as exc:
        raise _rebuild.LockMismatch(str(exc)) from None
    pins, constraints = _rebuild.pins_from_lock(lock, code)
    force = (record.meta.get("request") or {}).get("force") is True
    return {"record": record, "seed": seed, "unit": unit, "budget": budget, "lock": lock, "recorded": recorded,
            "code": code, "pins": pins, "constraints": constraints, "force": force}


def _retrain(python: str, agent_dir: str, stage: dict, from_run: str | None, echo) -> str:
    """``agentos train`` of one stage in the fresh venv (from the reproduced parent run); the new run folder."""
    budget, unit, seed = stage["budget"], stage["unit"], stage["seed"]
    command = [python, "-m", "agentos", "train", str(budget), "--seed", str(seed), "--quiet"]
    command += ["--steps"] if unit == "steps" else []
    if from_run:
        command += ["--from-run", from_run] + (["--force"] if stage["force"] else [])
    echo(f"retraining: agentos {' '.join(command[3:])} in {agent_dir}")
    env = {k: v for k, v in os.environ.items() if k not in ("AGENTOS_AGENT_INI", "VIRTUAL_ENV")}
    proc = subprocess.run(command, cwd=agent_dir, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise AgentOSError(printable(f"retraining in the fresh venv failed: {last[:300]}"))
    runs = sorted(os.listdir(os.path.join(agent_dir, "runs")))
    return os.path.join(agent_dir, "runs", runs[-1])


def reproduce(run: str | None = None, *, agent_ini: str | None = None, index_url: str | None = None,
              workdir: str | None = None, package: str | None = None, echo=None) -> dict:
    """Rebuild ``run`` (a run folder, or a run id of the agent here; or with ``package``, the run a
    published trained-policy package ``NAME[==VERSION]`` ships) in a fresh venv from its lock,
    retrain it with its seed and budget, and compare the curves. A run that continued from other
    runs (``--from-run``) is reproduced stage by stage from the root of its chain, each stage starting
    from the reproduced end of the one before; the first stage that does not reproduce ends it.
    Returns ``reproduced`` (bool), ``verdict`` (one line), ``plot``, ``workdir``, ``new_run``,
    ``stages`` and the compared figures; an altered lock or kept code raises
    :class:`~agentos.reproduce._rebuild.LockMismatch` (nothing installed)."""
    from . import _budget, _compare, _rebuild

    echo = echo or (lambda line: None)
    if package:
        from ._package import package_run

        url = _index_url(index_url, agent_ini)
        name = package.replace("==", "-")
        workdir = _new_workdir(workdir, name)
        run = package_run(package, url, os.path.join(workdir, "package"))
        echo(f"the run of {package}: {run}")
    record = _open_run(run, agent_ini)
    _budget.check_run(record)
    stages = [_prepared(r) for r in _budget.chain(record)]  # every stage checked before anything is installed
    if not package:
        workdir = _new_workdir(workdir, record.id)
        url = _index_url(index_url, agent_ini)
    venvs, parent_new, done, many = {}, None, [], len(stages) > 1
    for number, stage in enumerate(stages, start=1):
        rec = stage["record"]
        key = json.dumps([stage["pins"], stage["constraints"]], sort_keys=True)
        if key not in venvs:
            requirements = _rebuild.fetch_pinned(stage["pins"], url)
            folder = os.path.join(workdir, "venv" if not venvs else f"venv-{len(venvs) + 1}")
            venvs[key] = _rebuild.build_venv(folder, requirements, stage["constraints"], echo)
        python = venvs[key]
        agent_dir = os.path.join(workdir, f"agent-{number}" if many else "agent")
        _scratch_agent(rec, stage["lock"], agent_dir, stage["code"])
        new_run = _retrain(python, agent_dir, stage, parent_new, echo)
        recorded, new = stage["recorded"], _compare.read_curve(os.path.join(new_run, "returns.csv"))
        result = _compare.compare(recorded, new, deterministic=_deterministic(python, stage["lock"]))
        plot = _compare.overlay_plot(recorded, new, os.path.join(workdir, f"overlay-{number}.png" if many
                                                                 else "overlay.png"),
                                     f"run {rec.id}: recorded and reproduced")
        result.update(run=rec.id, new_run=new_run, workdir=workdir, plot=plot, seed=stage["seed"],
                      budget={stage["unit"]: stage["budget"]})
        done.append({"run": rec.id, "verdict": result["verdict"], "reproduced": result["reproduced"],
                     "new_run": new_run})
        if many:
            echo(f"stage {number}/{len(stages)} (run {rec.id}): {result['verdict']}")
        if not result["reproduced"]:
            if number < len(stages):
                result.update(verdict=f"NOT reproduced: stage {number}/{len(stages)} (run {rec.id}): "
                                      f"{result['verdict'].removeprefix('NOT reproduced: ')}")
            break
        parent_new = new_run
    result.update(run=record.id, stages=done)
    tmp = os.path.join(workdir, "verdict.json.partial")
    with open(tmp, "w") as handle:
        json.dump(result, handle, indent=2)
    os.replace(tmp, os.path.join(workdir, "verdict.json"))
    return result
