"""``run_experiment``: every trial of a grid on an executor, resumable, with retries and a summary."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Executor, wait
from concurrent.futures.process import BrokenProcessPool

from ._folder import folder_fd, remove_links, write_file
from ._plan import Trial, plan
from ._summary import ExperimentResult, write_summary

DEFAULT_RETRIES = 2


def _load_done(folder: str, trial: Trial) -> dict | None:
    from ._records import read_record

    done = read_record(folder, trial.id, then="the trial runs again")
    return done if done is not None and done["status"] == "finished" else None


def _worker_died(exc: BaseException) -> bool:
    return isinstance(exc, BrokenProcessPool) or type(exc).__name__ in ("KilledWorker", "CommClosedError")


def run_experiment(
    agents: Iterable[str],
    environments: Iterable[str],
    *,
    seeds: int | Iterable[int] = 1,
    episodes: int | None = None,
    steps: int | None = None,
    test_episodes: int = 10,
    settings: dict | None = None,
    agent_settings: dict | None = None,
    folder: str = "experiments/experiment",
    workers: int | None = None,
    scheduler: str | None = None,
    executor: Executor | None = None,
    retries: int = DEFAULT_RETRIES,
    on_progress: Callable[[int, int, list[dict]], None] | None = None,
    progress: bool = False,
    opponents: Iterable[str] | None = None,
    arena_games: int | None = None,
    cluster: str | None = None,
    cluster_options: dict | None = None,
    watch=None,
    context: dict | None = None,
) -> ExperimentResult:
    """Run every (agent, environment, seed, settings) trial; finished trials of ``folder`` are skipped.

    ``agents`` are preset names or agent folders; ``settings`` maps ``kind.key`` to a value or a list
    (a grid axis). With ``opponents`` (agent folders of a multi-agent environment), each trial's agent
    then plays a round robin with them, ``arena_games`` games per pair (``_panel``): the table gets win
    rates and Elo ratings. Trials run on ``executor``, else on a Dask cluster at ``scheduler`` (``local``
    starts one), else in a pool of ``workers`` processes. A :class:`ProcessPool` or
    :class:`DaskExecutor` passed as ``executor`` reports progress and can serve several experiments
    with warm workers. A trial whose worker dies is retried up to
    ``retries`` times. Ctrl-C keeps the finished trials and writes the summary before re-raising.
    ``on_progress(done, total, running)`` is called about every second; ``running`` has one dict per
    running trial: ``label``, and once the worker reported them ``episodes``, ``return`` (mean of its
    last 100 episodes) and ``phase`` (``train`` or ``test``). ``progress=True`` shows what
    ``agentos experiment run`` shows (on stderr): a bar on a terminal, else a line every 5 s.
    ``cluster`` (``slurm``, ``pbs``, ``sge``, ``lsf``) submits the workers as batch jobs, with
    ``cluster_options`` for their resources (the keys of a ``[cluster]`` section: ``partition``,
    ``cores``, ``memory``, ``walltime``, ``max-jobs``, ``setup``...), one job per trial up to ``max-jobs``;
    every job is cancelled at the end (see :class:`JobQueueExecutor`).
    ``watch`` (picklable: it travels to the workers) is called in the worker as ``watch(trial)`` (the
    trial's dict); it returns ``None`` or ``check(run, result)``, called after each training episode:
    when it returns a word (e.g. ``"pruned"``) training stops there, the trial is not tested and its
    record has that status, with the partial training kept (``agentos tune`` prunes this way).
    ``context``: the hooks' context of an enclosing :class:`ExperimentInfo` (a tune's trial): the
    experiment hooks are not called for this run, and its trials travel with that context.
    """
    from ._executors import DaskExecutor, ProcessPool, default_workers
    from ._progress import LiveTrials

    if cluster is not None:  # the jobs' resources are checked before anything is written
        from ._cluster_options import check_cluster

        check_cluster(cluster, cluster_options)
    trials = plan(list(agents), list(environments), seeds=seeds, episodes=episodes, steps=steps,
                  test_episodes=test_episodes, settings=settings, agent_settings=agent_settings,
                  opponents=list(opponents or []), arena_games=arena_games)
    folder = os.path.abspath(folder)
    os.makedirs(folder, exist_ok=True)  # the folder is the caller's; nothing below it is followed
    remove_links(folder)
    with folder_fd(folder, "trials", create=True):
        pass
    write_file(folder, "experiment.json", json.dumps({"trials": [
        t.as_dict() | {"agent_ini": None, "opponents": [o["label"] for o in t.opponents]} for t in trials]}, indent=1),
        durable=True)
    outcomes = {t.id: done for t in trials if (done := _load_done(folder, t))}
    pending = [t for t in trials if t.id not in outcomes]
    info = ExperimentInfo(os.path.basename(folder), folder, trials, [t.id for t in pending])
    hook = _hook() if context is None else None
    if hook is not None:
        hook.agentos_experiment_start(experiment=info)
    # JSON-able: it travels to workers on other machines
    context = json.loads(json.dumps(info.context if context is None else context))
    owned = executor is None
    if owned and cluster:
        from ._jobqueue import JobQueueExecutor

        # no job is submitted when every trial is done already
        executor = JobQueueExecutor(cluster, cluster_options, trials=len(pending), folder=folder) if pending else None
    elif owned:
        executor = DaskExecutor(scheduler, workers) if scheduler else ProcessPool(workers)
    slots = 1 if executor is None else executor.slots() if hasattr(executor, "slots") else (
        workers or getattr(executor, "_max_workers", None) or default_workers())
    live, channel = getattr(executor, "live", None) or LiveTrials(), getattr(executor, "channel", None)
    # with a channel, one more trial waits per slot, so a worker never idles while the client
    # records a result; without one, "running" means "submitted", so only `slots` are
    depth = 2 * slots if channel is not None else slots
    attempts: dict[str, int] = {}
    requeued: dict[str, int] = {}  # bounds retries even if a worker's "started" never arrives
    running: dict = {}
    started = time.perf_counter()
    display = None
    if progress and on_progress is None:
        from ._display import ProgressDisplay

        on_progress = display = ProgressDisplay(quiet=False)

    def report() -> None:
        for trial_id in live.drain():  # a trial starts (again): that is an attempt
            attempts[trial_id] = attempts.get(trial_id, 0) + 1
        if on_progress:
            on_progress(len(outcomes), len(trials), _running(running.values(), live, channel is not None))

    try:
        while pending or running:
            broken = False
            while pending and len(running) < depth:
                trial = pending[0]
                try:
                    future = executor.submit(_run_trial_dict, trial.as_dict() | {"context": context}, channel, watch)
                except BrokenProcessPool:  # a worker died since the last wait: the pool takes nothing
                    broken = True
                    break
                pending.pop(0)
                if channel is None:
                    attempts[trial.id] = attempts.get(trial.id, 0) + 1
                running[future] = trial
            report()
            done, _ = wait(list(running), timeout=1.0, return_when=FIRST_COMPLETED) if running else (set(), set())
            report()
            for future in done:
                trial = running.pop(future)
                live.forget(trial.id)
                tries = attempts.get(trial.id, 0)
                try:
                    outcome = future.result()
                except Exception as exc:
                    if not _worker_died(exc):
                        outcome = {"status": "failed", "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
                    elif tries <= retries and requeued.get(trial.id, 0) <= 2 * retries + 2:
                        # (tries 0: it was waiting in a queue when the worker died: not its fault)
                        requeued[trial.id] = requeued.get(trial.id, 0) + 1
                        broken = broken or isinstance(exc, BrokenProcessPool)
                        pending.insert(0, trial)
                        continue
                    else:
                        outcome = {"status": "failed", "error": f"worker died {max(tries, 1)} times"}
                outcomes[trial.id] = _record(folder, trial, outcome, max(tries, 1))
            if broken:  # a dead process breaks the whole pool: start a new one
                for future, trial in running.items():
                    future.cancel()
                    live.forget(trial.id)
                    pending.insert(0, trial)
                running.clear()
                if not hasattr(executor, "restart"):  # an executor of the caller's: nothing more runs on it
                    for trial in pending:
                        outcomes[trial.id] = _record(folder, trial, {"status": "failed", "error": "the executor "
                                                     "broke (a worker process died)"}, attempts.get(trial.id, 1))
                    pending.clear()
                    break
                executor.restart()
    except KeyboardInterrupt:
        for future in running:
            future.cancel()
        if hasattr(executor, "stop_workers"):
            executor.stop_workers()
        raise
    finally:
        if owned and executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        result = write_summary(folder, trials, outcomes, time.perf_counter() - started)
        if hook is not None:
            hook.agentos_experiment_end(experiment=info, result=result)
        if on_progress:
            on_progress(len(outcomes), len(trials), [])
        if display is not None:
            display.close()
    return result


class ExperimentInfo:
    """What the experiment hooks see (``agentos_experiment_start``): ``context`` travels with each trial.

    ``kind`` is ``experiment``, or for ``agentos tune`` ``study`` (the whole search) and ``tune-trial``
    (one point of it, whose seeds are its trials); ``parent`` is the enclosing one's ``context`` (a
    tune-trial's study), else None; ``params`` the settings a tune-trial tries."""

    def __init__(self, name: str, folder: str, trials: list[Trial], pending: list[str], *, kind: str = "experiment",
                 parent: dict | None = None, params: dict | None = None):
        self.name, self.folder, self.trials, self.pending = name, folder, trials, pending
        self.kind, self.parent, self.params = kind, parent, dict(params or {})
        self.context: dict = {}


def _hook():
    from ..plugins import get_plugin_manager

    return get_plugin_manager().hook


def _running(trials, live, reported: bool) -> list[dict]:
    """The trials that run now (started, when workers report it), with their latest return."""
    rows = []
    for trial in trials:
        if reported and trial.id not in live.started:
            continue  # waiting in a queue
        row = {"label": trial.label()}
        if trial.id in live.latest:
            row["episodes"], row["return"], row["phase"] = live.latest[trial.id]
        rows.append(row)
    return rows


def _run_trial_dict(trial: dict, channel=None, watch=None) -> dict:
    from ._trial import run_trial

    return run_trial(trial, channel, watch)


def _record(folder: str, trial: Trial, outcome: dict, attempts: int) -> dict:
    """Store a trial's files and its ``trial.json`` (written last: its presence means "done")."""
    from ._trial import store_result

    rel = f"trials/{trial.id}"
    store_result(folder, rel, outcome)
    trial_dir = os.path.join(folder, "trials", trial.id)
    entry = trial.as_dict() | {k: v for k, v in outcome.items() if k != "id"} | {"attempts": attempts,
                                                                               "run_dir": trial_dir}
    entry["opponents"] = [o["label"] for o in trial.opponents]  # (their files are in the trial's folder)
    for key, default in (("error", ""), ("train", None), ("test", None), ("seconds", None), ("pid", None),
                         ("arena", None)):
        entry.setdefault(key, default)
    try:
        write_file(folder, f"{rel}/trial.json", json.dumps(entry, indent=1, default=str), durable=True)
    except OSError as exc:  # e.g. a folder planted where trial.json belongs
        from ..errors import UsageError

        raise UsageError(f"{os.path.join(trial_dir, 'trial.json')}: cannot record the trial: "
                         f"{exc.strerror or exc}") from None
    return entry
