"""Running one trial in a worker: train, then test, in a scratch folder whose files go back to the client.

The worker never assumes it shares a disk with the client: the run records are returned as bytes
and written into the experiment folder by the client (see :func:`store_result`).
"""

from __future__ import annotations

import os
import tempfile
import time

from ..devices import use_torch_threads

#: Files larger than this are not sent back (a checkpoint of a very large network).
MAX_FILE_BYTES = 256 * 1024 * 1024


def init_worker(progress_queue=None, client_pid: int | None = None) -> None:
    """A pool worker: one math thread; Ctrl-C is the client's to handle; progress goes to the queue;
    the worker exits when the client process ``client_pid`` ends (see ``_lifetime``)."""
    import signal

    from ._lifetime import watch_client
    from ._progress import set_pool_queue

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch_client(client_pid)
    use_torch_threads()  # one math thread per worker, unless $OMP_NUM_THREADS says otherwise
    set_pool_queue(progress_queue)


def _collect(folder: str) -> dict[str, bytes]:
    files = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            if os.path.islink(path) or os.path.getsize(path) > MAX_FILE_BYTES:
                continue
            with open(path, "rb") as f:
                files[os.path.relpath(path, folder).replace(os.sep, "/")] = f.read()
    return files


def _brief(summary: dict | None) -> dict | None:
    keys = ("status", "episodes", "steps", "mean_return", "std_return", "last100_mean", "seconds",
            "steps_per_second", "run", "metrics")
    return {k: summary.get(k) for k in keys} if summary else None


def run_trial(trial: dict, channel=None, watch=None) -> dict:
    """Train (when the agent has a trainer) then test; returns the outcome and the record files.

    ``channel`` (see ``_progress``) carries "started" and the latest training return to the client;
    ``watch`` may stop the training early (see ``run_experiment``).
    """
    from ..learning._commands import run, train
    from ..plugins import get_plugin_manager
    from ._progress import Reporter

    use_torch_threads()  # one math thread per worker, unless $OMP_NUM_THREADS says otherwise
    reporter = Reporter(channel, trial["id"])
    stopped: list[str] = []
    on_episode = _watched(reporter.on_episode, watch(trial) if watch is not None else None, stopped)
    reporter.started(os.getpid())
    os.environ["AGENTOS_RUN_PLOT"] = "0"  # one plot per experiment, not one PNG per run
    started = time.perf_counter()
    outcome = {"id": trial["id"], "status": "finished", "error": "", "train": None, "test": None, "arena": None,
               "pid": os.getpid(), "host": os.uname().nodename}
    hook = get_plugin_manager().hook
    with tempfile.TemporaryDirectory(prefix="agentos-trial-") as folder:
        hook.agentos_trial_start(trial=trial, context=trial.get("context") or {}, folder=folder)
        root = os.path.realpath(folder)
        for rel, text in trial.get("sources", {}).items():  # the agent folder's local code
            target = os.path.realpath(os.path.join(root, rel))
            if not target.startswith(root + os.sep) or rel.startswith("/") or ".." in rel.split("/"):
                raise ValueError(f"trial {trial['id']}: bad source path {rel!r}")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w", encoding="utf-8") as f:
                f.write(text)
        path = os.path.join(folder, "agent.ini")
        with open(path, "w", encoding="utf-8") as f:
            f.write(trial["agent_ini"])
        try:
            if trial["trains"]:
                outcome["train"] = _brief(train(path, episodes=trial["episodes"], steps=trial["steps"],
                                                    seed=trial["seed"], on_episode=on_episode))
            if stopped:  # stopped by the watch: the partial training is the record, no test
                outcome["status"], outcome["error"] = stopped[0], f"{stopped[0]} after {reporter.episodes} episodes"
            elif trial["test_episodes"]:
                reporter.testing()
                outcome["test"] = _brief(run(path, episodes=trial["test_episodes"], seed=trial["seed"] + 1_000_000,
                                                 fresh=not trial["trains"], on_episode=reporter.on_episode))
            if trial.get("opponents"):  # a multi-agent trial: its agent against the panel (``_panel``)
                from ._panel import play_panel

                reporter.testing()
                outcome["arena"] = play_panel(folder, trial)
            if not stopped and (outcome["train"] or {}).get("status") == "interrupted":
                outcome["status"] = "interrupted"  # not finished: a resumed experiment runs it again
        except Exception as exc:  # a failing trial is reported with one line; the others go on
            outcome["status"] = "failed"
            outcome["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        hook.agentos_trial_end(trial=trial, outcome=outcome)
        outcome["files"] = _collect(folder)
    outcome["seconds"] = time.perf_counter() - started
    return outcome


def _watched(on_episode, check, stopped: list):
    """``on_episode`` then ``check``: a word from it stops the training (Ctrl-C's way: the policy is saved)."""
    if check is None:
        return on_episode

    def both(run, result) -> None:
        on_episode(run, result)
        if not stopped and (word := check(run, result)):
            stopped.append(str(word)[:20])
            raise KeyboardInterrupt

    return both


def store_result(root: str, rel: str, outcome: dict) -> None:
    """Write a trial's returned files under ``root/rel`` (paths validated: they come from a worker;
    links in the experiment folder are never followed, see ``_folder``)."""
    from ._folder import warn, write_file

    for name, data in outcome.pop("files", {}).items():
        if not isinstance(name, str) or not isinstance(data, bytes) or name.startswith("/"):
            continue
        if any(p in ("", ".", "..") or "\\" in p for p in name.split("/")):
            continue
        try:
            write_file(root, f"{rel}/{name}", data)
        except OSError as exc:  # a file where the record has a folder: the other files are still kept
            warn(f"{os.path.join(root, rel, name)} not written: {exc.strerror or exc}")
