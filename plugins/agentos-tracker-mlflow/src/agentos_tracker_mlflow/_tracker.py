"""The run hooks: each ``agentos train`` / ``agentos run`` as an MLflow run (a trial's runs: one per trial).

Per episode the hook only appends numbers to a list; every :data:`BATCH_EPISODES` episodes or
:data:`BATCH_SECONDS` seconds the list goes to the run's :class:`~._sender.Sender` as one batch. At the
end of the run the artifacts and the status are queued, and the run's thread goes on: the sender
finishes in the background (the process waits for it at exit, at most ``flush_timeout`` seconds).
"""

from __future__ import annotations

import json
import os
import time
from collections import deque

from agentos import hookimpl

from . import _settings
from ._sender import UNSENT_FILE, Sender, import_client

#: A batch leaves the run's thread every BATCH_SECONDS, or when it holds BATCH_ENTRIES numbers (a fast
#: run sends its metrics after it ended: the sender's work then does not compete with training).
BATCH_ENTRIES = 50_000
BATCH_SECONDS = 5.0
ARTIFACTS = ("lock.json", "agent.ini", "returns.csv", "returns.png")
#: Files of the run folder logged when the run has them (evaluation during training, reported metrics).
OPTIONAL_ARTIFACTS = ("evaluations.csv", "metrics.csv")
STATUS = {"finished": "FINISHED", "interrupted": "KILLED", "pruned": "KILLED", "failed": "FAILED"}

#: The trial running in this worker (set by the experiment hooks): its runs log into the trial's run.
current_trial: dict | None = None


def _now_ms() -> int:
    return int(time.time() * 1000)


class _RunState:
    __slots__ = ("sender", "prefix", "artifact_path", "buffer", "last100", "steps", "started", "flushed", "own",
                 "names")

    def __init__(self, sender: Sender, prefix: str, artifact_path: str | None, own: bool):
        self.sender, self.prefix, self.artifact_path, self.own = sender, prefix, artifact_path, own
        self.names = (f"{prefix}episode_return", f"{prefix}episode_length", f"{prefix}episode_return_by_step")
        self.buffer: list = []
        self.last100: deque = deque(maxlen=100)
        self.steps = 0
        self.started = self.flushed = time.perf_counter()

    def flush(self, now: float) -> None:
        elapsed = now - self.started
        if elapsed > 0 and self.buffer:
            self.buffer.append((f"{self.prefix}steps_per_second", self.steps / elapsed, self.buffer[-1][2]))
        self.sender.put({"op": "batch", "metrics": self.buffer, "stamp": _now_ms()})
        self.buffer = []
        self.flushed = now


class MlflowTracker:
    """Hook implementations (registered through the ``agentos.plugins`` entry point ``mlflow``)."""

    @hookimpl(trylast=True)  # after the record is attached and the episode metrics are set up
    def agentos_run_start(self, run):
        record = run.extra.get("record")
        trial = current_trial
        if trial is not None:
            test = run.mode != "train"
            state = _RunState(trial["sender"], "test_" if test else "", "test" if test else None, own=False)
        else:
            uri = _settings.tracking_uri({})  # MLFLOW_TRACKING_URI; else agent.ini must be read here
            values = None if uri else _settings.section(run.config_path)
            uri = uri or _settings.tracking_uri(values)
            if uri is None:
                return  # off: nothing is imported
            sender = Sender(uri, record.path(UNSENT_FILE) if record is not None else None,
                            _settings.flush_timeout(values or {}))
            path, mode = run.config_path, run.mode

            def start() -> dict:  # in the sender's thread: reading agent.ini costs the run nothing
                known = values if values is not None else _settings.section(path)
                sender.flush_timeout = _settings.flush_timeout(known)
                return {"experiment": _settings.experiment_name(known),
                        "tags": {"agentos.agent": known.get("_agent"), "agentos.mode": mode}}

            sender.put({"op": "start", "lazy": start, "start_ms": _now_ms(),
                        "name": record.id if record is not None else mode})
            state = _RunState(sender, "", None, own=True)
        seed, test = run.seed, state.prefix == "test_"
        state.sender.put({"op": "batch", "lazy": lambda: describe(seed, record, test=test)})
        run.extra["mlflow"] = state

    @hookimpl
    def agentos_episode_end(self, run, episode, episode_return, length, info):
        state = run.extra.get("mlflow")
        if state is None:
            return
        buffer, (return_name, length_name, by_step) = state.buffer, state.names  # (name, value, step) per batch
        buffer.append((return_name, episode_return, episode))
        buffer.append((length_name, length, episode))
        state.steps += length
        buffer.append((by_step, episode_return, state.steps))  # the curve by timesteps
        state.last100.append(episode_return)
        metrics = run.extra.get("metrics")  # the environment's own episode metrics (agentos.trackers)
        if metrics is not None:
            for name, value in metrics.last.items():
                if value is not None:
                    buffer.append((f"{state.prefix}{name}", value, episode))
        if (episode + 1) % 100 == 0:
            buffer.append((f"{state.prefix}last100_mean", sum(state.last100) / len(state.last100), episode))
        if len(buffer) >= BATCH_ENTRIES:
            state.flush(time.perf_counter())
        elif not episode % 64:
            now = time.perf_counter()
            if now - state.flushed >= BATCH_SECONDS:
                state.flush(now)

    @hookimpl
    def agentos_metrics(self, run, step, values):
        """Named scalars of the run (SB3's losses, entropy, learning rate, fps; evaluation returns) at ``step``."""
        state = run.extra.get("mlflow")
        if state is None:
            return
        state.buffer.extend((f"{state.prefix}{name}", value, step) for name, value in values.items())
        if len(state.buffer) >= BATCH_ENTRIES:
            state.flush(time.perf_counter())

    @hookimpl(trylast=True)  # after the CSV tracker closed returns.csv and drew the curve
    def agentos_run_end(self, run, summary):
        state = run.extra.pop("mlflow", None)
        if state is None:
            return
        state.flush(time.perf_counter())
        prefix, sender = state.prefix, state.sender
        status = summary.get("status", "finished") if isinstance(summary, dict) else "failed"
        final = {}
        for key in ("mean_return", "last100_mean", "steps_per_second", "episodes", "steps", "seconds"):
            value = summary.get(key) if isinstance(summary, dict) else None
            if isinstance(value, (int, float)) and value == value:
                final[f"{prefix}{key}"] = value
        step = max(len(run.episodes) - 1, 0)
        sender.put({"op": "batch", "metrics": [(k, v, step) for k, v in final.items()], "stamp": _now_ms(),
                    "tags": {f"agentos.{prefix}status": status}})
        record = run.extra.get("record")
        if record is not None:
            present = tuple(n for n in (*OPTIONAL_ARTIFACTS, record.meta.get("best_checkpoint"))
                            if isinstance(n, str) and n and os.path.isfile(record.path(os.path.basename(n))))
            names = (*ARTIFACTS, *present, record.meta.get("checkpoint"), record.meta.get("trainer_state"))
            if state.artifact_path and sender.files:  # a trial's test run: its lock and agent.ini are the training's
                names = tuple(n for n in names if n not in ("lock.json", "agent.ini"))
            for name in names:
                if isinstance(name, str) and name and os.path.basename(name) == name:
                    sender.put({"op": "artifact", "path": record.path(name), "name": name,
                                "artifact_path": state.artifact_path})
            meta = {**record.meta, "status": status, "summary": dict(summary)}
            sender.put({"op": "json", "name": "run.json", "artifact_path": state.artifact_path,
                        "lazy": lambda: {"value": json.loads(json.dumps(meta, default=str))}})
        if state.own:
            import_client()  # the sender starts now; its first call must not import during shutdown
            sender.put({"op": "end", "status": STATUS.get(status, "FAILED"), "end_ms": _now_ms()})


def describe(seed, record, *, test: bool = False) -> dict:
    """The run's params (components, settings, seed, budget) and tags (lock sha256, run id)."""
    params: dict = {}
    tags: dict = {}
    if record is not None:
        tags["agentos.run"] = record.id
        try:
            with open(record.path("lock.json"), "rb") as f:
                lock_bytes = f.read()
            import hashlib

            tags["agentos.lock_sha256"] = hashlib.sha256(lock_bytes).hexdigest()
            lock = json.loads(lock_bytes)
        except (OSError, ValueError):
            lock = {}
        entries = {(e.get("kind"), e.get("name")): e for e in lock.get("components", []) if isinstance(e, dict)}
        for kind, name in (record.meta.get("components") or {}).items():
            entry = entries.get((kind, name), {})
            package = entry.get("package")
            params[kind] = f"{package}=={entry.get('version')}" if package else f"{name} (local)"
            params.update(_settings_of(record, kind, name))
        params.update(_train_settings(record))
        request = record.meta.get("request") or {}
        for key in ("episodes", "steps"):
            if request.get(key) is not None:
                params[f"{'test_' if test else ''}{key}"] = request[key]
    params["test_seed" if test else "seed"] = seed
    return {"params": params, "tags": tags}


def _train_settings(record) -> dict:
    """``train.<setting>`` for every setting of agent.ini's ``[train]`` (evaluation during training)."""
    try:
        from agentos.config import AgentConfig

        config = AgentConfig.load(record.path("agent.ini"))
    except Exception:
        return {}
    return {f"train.{key}": setting.value for key, setting in getattr(config, "train", {}).items()}


def _settings_of(record, kind: str, name: str) -> dict:
    """``<kind>.<setting>`` for every setting of the component in the agent.ini that ran."""
    try:
        from agentos.config import AgentConfig

        config = AgentConfig.load(record.path("agent.ini"))
    except Exception:
        return {}
    component = config.component(kind, name)
    if component is None:
        return {}
    return {f"{kind}.{key}": setting.value for key, setting in component.settings.items()}
