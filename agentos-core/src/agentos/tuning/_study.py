"""``tune``: an Optuna study over an experiment file's search space; its trials run as small experiments.

Each Optuna trial is one point of the search space, run for the experiment's seeds one after the other
(every seed a :func:`~agentos.experiments.run_experiment` call on the shared executor, into the point's
own experiment folder ``points/<hash>``). While a seed trains, its worker reports the running mean
return ``[tune] reports`` times to the study and stops when the pruner says so (``_prune``: the worker
opens the study's storage; one that cannot, e.g. a journal on another machine's disk, trains on).
After each seed the driver reports the mean score so far and asks the pruner too, which works with
every executor. Several trials run at once (threads of the driver, one per trial).

The study is stored in the experiment folder (``study.journal``, Optuna's JournalStorage on a file) or
in a database (``storage="postgresql://..."``, several drivers may share it). A driver that is killed
leaves its trials "running": the next driver on the same machine marks them failed and queues their
settings again; their finished seeds are records in their point folder, so they are not run again.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from ..errors import UsageError
from ._prune import TICKS
from ._recover import _driver_id, recover
from ._space import DEFAULT_REPORTS
from ._storage import JOURNAL, TUNE_RECORD, _optuna, _sampler, check_storage, open_study

DEFAULT_TRIALS = 20
MAX_ENQUEUED = 10_000  #: settings a tune may be given to try first


def point_folder(settings: dict) -> str:
    return "points/" + hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _score(result, environments) -> float | None:
    """The mean over environments of the test return (else the training return of the last 100 episodes)."""
    values = []
    for trial in result.trials:
        if trial.get("status") != "finished":
            return None
        value = (trial.get("test") or {}).get("mean_return")
        if value is None:
            value = (trial.get("train") or {}).get("last100_mean")
        if value is None:
            return None
        values.append(float(value))
    return statistics.fmean(values) if values else None


def _training_mean(result, score: float) -> float:
    """A seed's mean return of its last 100 training episodes (else its score): what workers report."""
    values = [(t.get("train") or {}).get("last100_mean") for t in result.trials]
    return statistics.fmean(values) if values and None not in values else score


class _Driver:
    def __init__(self, study, space, options, folder, executor, say, storage: str):
        self.study, self.space, self.options, self.folder = study, space, options, folder
        self.storage = storage  # what a worker opens: the journal's path or the database URL
        self.study_info = None  # the study as the experiment hooks see it (set by tune)
        self.executor, self.say, self.driver = executor, say, _driver_id()
        self.stop = threading.Event()

    def _check_stop(self, *_) -> None:
        """``run_experiment``'s progress callback (about every second): the driver stops, so does it."""
        if self.stop.is_set():
            raise KeyboardInterrupt

    def run_one(self) -> None:
        optuna = _optuna()
        trial = self.study.ask()
        try:
            self._run(trial)
        except BaseException:
            if not self.stop.is_set():  # stopped: left running, the next driver queues it again
                self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise

    def _watch(self, trial, step0: int):
        from ._prune import IntermediateReports

        reports = self.options["reports"]
        if reports < 1 or self.options["pruner"] == "none":
            return None
        return IntermediateReports(self.storage, self.study.study_name, trial.number, step0=step0,
                                   reports=reports, episodes=self.options.get("episodes"),
                                   steps=self.options.get("steps"), pruner=self.options["pruner"])

    def _run(self, trial) -> None:
        from ._hooks import trial_ended, trial_started

        trial.set_user_attr("driver", self.driver)
        settings = dict(self.options["settings"]) | self.space.sample(trial)
        trial.set_user_attr("folder", point_folder(settings))
        info = trial_started(self.study_info, trial.number, dict(trial.params))
        outcome: dict = {"state": "interrupted", "value": None, "records": []}
        try:
            self._seeds(trial, settings, info.context, outcome)
        finally:
            trial_ended(info, outcome["state"], outcome["value"], outcome["records"])

    def _seeds(self, trial, settings: dict, context: dict, outcome: dict) -> None:
        """The trial's seeds one after the other; ``outcome`` gets its state, value and seed records."""
        from ..experiments import run_experiment

        optuna = _optuna()
        rel = point_folder(settings)
        seeds = self.options["seeds"]
        scores: list[float] = []
        common = {"episodes": self.options.get("episodes"), "steps": self.options.get("steps"),
                  "test_episodes": self.options.get("test_episodes", 10), "settings": settings,
                  "folder": os.path.join(self.folder, rel), "executor": self.executor,
                  "on_progress": self._check_stop, "context": context}
        agent, environments = self.options["agents"], self.options["environments"]
        per_seed = self.options["reports"] + 1 if self._watch(trial, 0) else 1
        timed, step0 = self.options["pruner"] == "median-time", 0  # timed: steps are tenths of a second

        def end(state, message: str) -> None:
            trial.set_user_attr("scores", scores)
            self.study.tell(trial, state=state)
            outcome["state"] = state.name.lower()
            self.say(f"trial {trial.number}: {message}")

        for index, seed in enumerate(seeds):
            if self.stop.is_set():
                return  # left running: the next driver queues it again
            started = time.monotonic()
            result = run_experiment(agent, environments, seeds=[seed],
                                    watch=self._watch(trial, step0 if timed else index * per_seed), **common)
            outcome["records"].extend(result.trials)
            if any(t.get("status") == "pruned" for t in result.trials):  # by its worker, during training
                return end(optuna.trial.TrialState.PRUNED, f"pruned while training seed {seed}")
            score = _score(result, environments)
            if score is None:
                return end(optuna.trial.TrialState.FAIL, f"failed (see {rel})")
            scores.append(score)
            trial.set_user_attr("scores", scores)
            if timed:  # after every report of its worker (whose clock started later), what it reports
                step = step0 + int((time.monotonic() - started) * TICKS) + 1
                step0 = step + 1
                trial.report(_training_mean(result, score), step)
            else:
                trial.report(statistics.fmean(scores), index * per_seed + per_seed - 1)
            if index < len(seeds) - 1 and trial.should_prune():
                return end(optuna.trial.TrialState.PRUNED, f"pruned after {index + 1} seed(s), score {scores[-1]:.4g}")
        run_experiment(agent, environments, seeds=seeds, **common)  # all done: the point's summary, all seeds
        value = statistics.fmean(scores)
        self.study.tell(trial, value)
        outcome["state"], outcome["value"] = "complete", value
        self.say(f"trial {trial.number}: {value:.4g} {json.dumps(trial.params, sort_keys=True)}")


STEPS_ATTR = "agentos.steps"  #: what a study's steps count: "reports", or "seconds" (tenths, median-time)


def _check_resumed(study, record: dict, file: str) -> None:
    """A study resumed by a file that asks what it cannot give: one line. Its sampler, seeded, draws on
    from where the study is (the seed plus its trials; a new driver would draw the same points again)."""
    direction = study.direction.name.lower()
    if direction != record["direction"]:
        raise UsageError(f"{file}: [tune] direction = {record['direction']}, but the study {study.study_name!r} "
                         f"already {direction[:8]}s: give the experiment a new name for a new study")
    unit = "seconds" if record["pruner"] == "median-time" else "reports"
    trials = study.get_trials(deepcopy=False)
    had = study.user_attrs.get(STEPS_ATTR) or ("reports" if any(t.intermediate_values for t in trials) else None)
    if had not in (None, unit):
        raise UsageError(f"{file}: [tune] pruner = {record['pruner']} counts its steps in {unit}, but the study "
                         f"{study.study_name!r} has them in {had}: give the experiment a new name for a new study")
    if had is None:
        study.set_user_attr(STEPS_ATTR, unit)
    if trials and record.get("seed") is not None:
        optuna = _optuna()
        study.sampler = _sampler(optuna, record["sampler"], (record["seed"] + len(trials)) % 2**32)


def _check_settings(options: dict, space) -> None:
    """Every searched setting is one the agent has (a usage error before the study starts, else)."""
    from ..experiments import plan

    fixed = options["settings"] | options["agent_settings"].get(options["agents"][0], {})
    sample = {p.name: p.choices[0] if p.kind == "choice" else p.low for p in space.params}
    plan(options["agents"], options["environments"][:1], seeds=1, episodes=1, test_episodes=0,
         settings=fixed | sample)


def _counted(study) -> int:
    optuna = _optuna()
    return len(study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,
                                                         optuna.trial.TrialState.PRUNED)))


def tune(file: str, *, storage: str | None = None, trials: int | None = None, timeout: float | None = None,
         workers: int | None = None, scheduler: str | None = None, executor=None, cluster: str | None = None,
         cluster_options: dict | None = None, quiet: bool = False, enqueue: list[dict] | None = None):
    """Search the experiment file's ``[search]`` space; returns the Optuna study (see module doc).

    ``enqueue``: settings to try first, in order (``{"trainer.gamma": 0.99, ...}``; a setting left out is
    sampled), each checked against the space; one already in the study is not queued again, so a resumed
    tune given the same list repeats none of them.

    ``trials`` is the budget of finished trials in the study (pruned ones count; default the file's
    ``[tune] trials``, else 20), ``timeout`` the seconds after which this driver starts no new trial.
    Trials run on ``executor``, else as ``run_experiment`` would choose (``scheduler``, ``cluster`` with
    ``cluster_options``, default the file's ``[cluster]`` section, else a pool of ``workers`` processes)."""
    from ..experiments import read_experiment
    from ..experiments._folder import remove_links, write_file
    from ._space import read_search

    options = read_experiment(file)
    space = read_search(file)
    if len(options["agents"]) != 1 or not options["environments"]:
        raise UsageError(f"{file}: tune searches the settings of one agent: give one in [experiment] agents")
    for key, value in {**options["settings"], **options["agent_settings"].get(options["agents"][0], {})}.items():
        if isinstance(value, list):
            raise UsageError(f"{file}: [settings] {key} is a list; tune searches [search], settings are fixed")
    if storage is not None:
        check_storage(storage)
    if cluster is not None:  # the jobs' resources (the file's [cluster] unless given) are checked first
        from ..experiments._cluster_options import check_cluster

        cluster_options = options.get("cluster_options") or {} if cluster_options is None else cluster_options
        check_cluster(cluster, cluster_options)
    try:
        _check_settings(options, space)
    except UsageError as exc:
        raise UsageError(f"{file}: {exc}") from None
    if enqueue is not None and (not isinstance(enqueue, list) or len(enqueue) > MAX_ENQUEUED):
        raise UsageError(f"enqueue: give a list of at most {MAX_ENQUEUED:,} objects of settings")
    fixed = [space.check_fixed(values, f"enqueue[{i}]") for i, values in enumerate(enqueue or [])]
    seeds = options["seeds"]
    options["seeds"] = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    options["settings"] = options["settings"] | options["agent_settings"].get(options["agents"][0], {})
    budget = trials or space.options.get("trials", DEFAULT_TRIALS)
    timeout = timeout or space.options.get("timeout")
    folder = os.path.abspath(options["folder"])
    os.makedirs(folder, exist_ok=True)
    remove_links(folder)
    record = {"study": str(options["name"]), "direction": space.options.get("direction", "maximize"),
              "sampler": space.options.get("sampler", "tpe"), "seed": space.options.get("seed"),
              "pruner": space.options.get("pruner", "median"),
              "agent": options["agents"][0], "environments": options["environments"],
              "settings": options["settings"], "storage": "journal" if storage is None else "database"}
    study = open_study(folder, storage, create=record)
    _check_resumed(study, record, file)
    write_file(folder, TUNE_RECORD, json.dumps(record, indent=1), durable=True)
    say = (lambda line: None) if quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    if requeued := recover(study):
        say(f"queued again (their driver died): trials {', '.join(map(str, requeued))}")
    for values in fixed:
        study.enqueue_trial(values, skip_if_exists=True)
    owned = executor is None
    if owned and cluster:
        from ..experiments import JobQueueExecutor

        executor = JobQueueExecutor(cluster, cluster_options, trials=budget * len(options["seeds"]), folder=folder)
    elif owned:
        from ..experiments import DaskExecutor, ProcessPool

        executor = DaskExecutor(scheduler, workers) if scheduler else ProcessPool(workers)
    slots = executor.slots() if hasattr(executor, "slots") else (workers or 1)
    parallel = space.options.get("parallel") or max(1, slots)
    options["reports"] = space.options.get("reports", DEFAULT_REPORTS)
    options["pruner"] = record["pruner"]
    driver = _Driver(study, space, options, folder, executor, say, storage or os.path.join(folder, JOURNAL))
    from ._hooks import study_ended, study_started

    driver.study_info = study_started(study.study_name, folder)
    started = time.monotonic()
    running: set = set()
    threads = ThreadPoolExecutor(parallel, thread_name_prefix="agentos-tune")
    try:
        while True:
            for future in [f for f in running if f.done()]:
                running.discard(future)
                future.result()  # a usage error (a setting the agent does not have) stops the tune
            out_of_time = timeout is not None and time.monotonic() - started >= timeout
            while not out_of_time and len(running) < parallel and _counted(study) + len(running) < budget:
                running.add(threads.submit(driver.run_one))
            if not running:
                break
            wait(running, timeout=1.0, return_when=FIRST_COMPLETED)
    except BaseException:  # Ctrl-C, SIGTERM: each trial's run_experiment stops at its next progress call
        driver.stop.set()
        threads.shutdown(wait=True, cancel_futures=True)
        if hasattr(executor, "stop_workers"):
            executor.stop_workers()
        raise
    finally:
        threads.shutdown(wait=True, cancel_futures=True)
        if owned:
            executor.shutdown(wait=False, cancel_futures=True)
        study_ended(driver.study_info, study)
    return study
