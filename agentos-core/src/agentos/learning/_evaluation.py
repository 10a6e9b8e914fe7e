"""Evaluation during ``agentos train``: the policy plays episodes on seeds of its own every so many
steps or episodes, the best one is kept beside the last, and training can stop at a reward threshold.

Settings, in agent.ini's ``[train]`` section (any trainer; all optional, evaluation is off without
``eval_every_steps`` or ``eval_every_episodes``)::

    [train]
    eval_every_steps = 10000     ; evaluate at the end of the first episode past every 10,000 steps
    eval_every_episodes = 100    ; ... or past every 100 episodes (both may be given)
    eval_episodes = 5            ; episodes per evaluation (default 5)
    eval_seed = 1000000          ; evaluation episode i resets with eval_seed + i (default: seed + 1000000)
    reward_threshold = 475       ; stop training when an evaluation's mean return reaches it
    keep_best = true             ; save the best evaluated policy as best.<suffix> (default true)

Every evaluation uses the same seeds on an environment of its own (a new instance built with
agent.ini's settings), so evaluations are comparable and never touch the training environment's
random stream. Each one is a row of ``evaluations.csv`` in the run folder (written as it ends), a
scalar for the trackers (``eval/mean_return`` through :func:`agentos.plugin_api.report_metrics`),
and ``run.json``'s ``evaluation`` says the seeds, the settings, the best evaluation and why training
stopped.
"""

from __future__ import annotations

import math
import time

from ..errors import UsageError

EVALUATIONS_CSV = "evaluations.csv"
DEFAULT_EPISODES = 5
SEED_OFFSET = 1_000_000  #: the default evaluation seeds start this far from the training seed
MAX_EPISODES = 10_000


def _count(settings: dict, key: str, where: str, default=None):
    value = settings.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10**12:
        raise UsageError(f"{where}: [train] {key} must be a whole number of at least 1, not {value!r}")
    return value


def read_settings(config, seed: int) -> dict | None:
    """The checked ``[train]`` settings (None when evaluation is off); one clear line when malformed."""
    raw = {key: setting.value for key, setting in getattr(config, "train", {}).items()} if config else {}
    where = getattr(config, "path", "agent.ini")
    every_steps = _count(raw, "eval_every_steps", where)
    every_episodes = _count(raw, "eval_every_episodes", where)
    threshold = raw.get("reward_threshold")
    if every_steps is None and every_episodes is None:
        if raw:
            raise UsageError(f"{where}: [train] {', '.join(sorted(raw))} needs eval_every_steps or "
                             "eval_every_episodes (evaluation is what they act on)")
        return None
    episodes = _count(raw, "eval_episodes", where, DEFAULT_EPISODES)
    if episodes > MAX_EPISODES:
        raise UsageError(f"{where}: [train] eval_episodes is at most {MAX_EPISODES:,}, not {episodes}")
    first = raw.get("eval_seed", seed + SEED_OFFSET)
    if isinstance(first, bool) or not isinstance(first, int) or not 0 <= first < 2**32 - episodes:
        raise UsageError(f"{where}: [train] eval_seed must be a whole number from 0 to 2**32, not {first!r}")
    if first <= seed < first + episodes:
        raise UsageError(f"{where}: [train] eval_seed {first}: the evaluation seeds {first}..{first + episodes - 1} "
                         f"include the training seed {seed}; evaluation needs seeds of its own")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                  or not math.isfinite(threshold)):
        raise UsageError(f"{where}: [train] reward_threshold must be a number, not {threshold!r}")
    keep_best = raw.get("keep_best", True)
    if not isinstance(keep_best, bool):
        raise UsageError(f"{where}: [train] keep_best must be true or false, not {keep_best!r}")
    return {"every_steps": every_steps, "every_episodes": every_episodes, "episodes": episodes,
            "seeds": list(range(first, first + episodes)), "reward_threshold": threshold, "keep_best": keep_best}


def play(environment, policy, seeds, limit: int) -> list[float]:
    """The returns of one episode per seed (each reset with its seed), cut at ``limit`` steps."""
    returns = []
    step, decide = environment.step, policy.decide
    for seed in seeds:
        observation, _ = environment.reset(seed=seed)
        policy.reset()
        total, taken, done = 0.0, 0, False
        while not done and taken < limit:
            observation, reward, terminated, truncated, _ = step(decide(observation))
            total += float(reward)
            taken += 1
            done = terminated or truncated
        returns.append(total)
    return returns


class Evaluator:
    """Called after every training episode (:meth:`after_episode`); evaluates when one is due."""

    def __init__(self, settings: dict, context, agent):
        from ..core._runner import episode_step_limit

        if hasattr(agent.environment, "agent_iter") or getattr(agent, "policy", None) is None:
            raise UsageError("[train] evaluation during training is for single-agent environments")
        self.settings, self.agent, self.record, self.run = settings, agent, None, None
        self.environment = context.create("environment", context.default_name("environment"))
        self.limit = episode_step_limit(self.environment)
        self.steps = self.episodes = 0
        self.next_steps, self.next_episodes = settings["every_steps"], settings["every_episodes"]
        self.best: dict | None = None
        self.stopped: dict | None = None
        self.count = 0
        self.rows = None

    def start(self, record, run) -> None:
        """The run has started: its record gets ``evaluations.csv`` and run.json's ``evaluation``."""
        self.record, self.run = record, run
        if record is not None:
            from ..trackers import RowFile

            self.rows = RowFile(record.path(EVALUATIONS_CSV))
            self.rows.write("steps,episodes,mean_return,std_return,min_return,max_return,seconds\n")
            self._write_meta()

    def after_episode(self, length: int) -> bool:
        """Count the episode; evaluate when due. True when training should stop (threshold reached)."""
        self.steps += length
        self.episodes += 1
        due = False
        if self.next_steps is not None and self.steps >= self.next_steps:
            due = True
            every = self.settings["every_steps"]
            self.next_steps = (self.steps // every + 1) * every
        if self.next_episodes is not None and self.episodes >= self.next_episodes:
            due = True
            self.next_episodes += self.settings["every_episodes"]
        return self.evaluate() if due else False

    def evaluate(self) -> bool:
        started = time.perf_counter()
        sync = getattr(self.agent.trainer, "sync_policy", None)
        if sync is not None:  # e.g. SB3's VecNormalize statistics, kept by the trainer while it trains
            sync(self.agent.policy)
        returns = play(self.environment, self.agent.policy, self.settings["seeds"], self.limit)
        n = len(returns)
        mean = sum(returns) / n
        std = math.sqrt(sum((r - mean) ** 2 for r in returns) / n)
        seconds = time.perf_counter() - started
        self.count += 1
        if self.rows is not None:
            self.rows.write(f"{self.steps},{self.episodes},{mean!r},{std!r},{min(returns)!r},{max(returns)!r},"
                            f"{seconds:.3f}\n")
        from ..trackers._scalars import report_metrics

        report_metrics({"eval/mean_return": mean, "eval/std_return": std}, step=self.steps, run=self.run)
        if self.best is None or mean > self.best["mean_return"]:
            self.best = {"steps": self.steps, "episodes": self.episodes, "mean_return": mean}
            if self.settings["keep_best"] and self.record is not None:
                self.best["checkpoint"] = self._save_best()
        threshold = self.settings["reward_threshold"]
        if threshold is not None and mean >= threshold:
            self.stopped = {"reason": "reward_threshold", "steps": self.steps, "episodes": self.episodes,
                            "mean_return": mean}
        if self.record is not None:
            self._write_meta()
        return self.stopped is not None

    def _save_best(self) -> str | None:
        import os

        path = self.record.save_checkpoint(self.agent.policy, name="best", key="best_checkpoint")
        return os.path.basename(path) if path else None

    def summary(self) -> dict:
        """What run.json and the run's summary say of the evaluations."""
        keys = ("every_steps", "every_episodes", "episodes", "seeds", "reward_threshold", "keep_best")
        return {**{k: self.settings[k] for k in keys}, "evaluations": self.count, "best": self.best,
                "stopped": self.stopped}

    def _write_meta(self) -> None:
        self.record.meta["evaluation"] = self.summary()
        self.record.write()

    def close(self) -> None:
        if self.rows is not None:
            self.rows.close()
        close = getattr(self.environment, "close", None)
        if close is not None:
            close()


def evaluator_for(context, agent, seed: int) -> Evaluator | None:
    """An :class:`Evaluator` when agent.ini's ``[train]`` asks for evaluation, else None (checked
    before the run's record is made: malformed settings are one line and no record)."""
    settings = read_settings(context.config, seed)
    return Evaluator(settings, context, agent) if settings else None
