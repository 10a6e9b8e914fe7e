"""What a run folder may ask ``agentos reproduce`` to retrain: a finished training with a seed and a budget
that its curve shows (the run folder is someone else's data), and the chain of runs it continued from."""

from __future__ import annotations

import os
import re

from .._safe_text import printable
from ..errors import UsageError

MAX_BUDGET = 10**12
MAX_INI_BYTES = 1024 * 1024
MAX_CHAIN = 10  #: the most stages (the run and the runs it continued from) that one reproduce retrains
MAX_ENVS = 1024  #: the most parallel environments (``n_envs``) a record's tail allowance counts
SB3_ROLLOUT = 2048  #: steps per environment of an SB3 PPO rollout when agent.ini does not set n_steps
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def check_run(record) -> tuple[int, str, int]:
    """The recorded seed and budget (``episodes`` or ``steps``) of a finished training (from scratch, or
    continuing a recorded run: not from a loose checkpoint file)."""
    meta = record.meta
    if meta.get("mode") != "train":
        raise UsageError(f"run {record.id} is an agentos {meta.get('mode')!r} run: only training runs are reproduced")
    if meta.get("status") != "finished":
        raise UsageError(f"run {record.id} did not finish (status {meta.get('status')!r}): its curve is partial")
    request = meta.get("request") or {}
    if (request.get("from_run") or request.get("checkpoint")) and not meta.get("parent"):
        raise UsageError(f"run {record.id} started from a checkpoint file, not a recorded run: "
                         "reproduce the run that checkpoint came from")
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


def run_config(record):
    """The run's agent.ini, read bounded (as data: nothing it names is imported here)."""
    from ..config import AgentConfig

    path = record.path("agent.ini")
    if os.path.islink(path) or not os.path.isfile(path):
        raise UsageError(f"run {record.id} has no agent.ini file")
    if os.path.getsize(path) > MAX_INI_BYTES:
        raise UsageError(f"run {record.id}: agent.ini is larger than {MAX_INI_BYTES // 1024} KiB")
    try:
        return AgentConfig.load(path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise UsageError(printable(f"run {record.id}: its agent.ini cannot be read ({exc})")) from None


def _trainer_setting(config, name: str, default: int) -> int:
    """A positive integer setting (at most 2**21, else ``default``) of the run's default trainer's section."""
    trainer = config.default("trainer")
    section = config.component("trainer", trainer) if trainer else None
    setting = section.settings.get(name) if section is not None else None
    value = setting.value if setting is not None else default
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 2**21 else default


def check_budget(record, config, unit: str, budget: int, recorded: list[tuple[float, int]]) -> None:
    """The budget is what the recorded curve took: a run folder cannot ask for more training than it shows
    (a 40-episode curve with ``request.episodes`` 10**12 would keep the fresh venv training for ever).

    A ``steps`` budget is compared with the steps of the finished episodes (the curve), which miss the
    unfinished last episode of each parallel environment (``n_envs`` of the trainer's section, default 1):
    the budget may exceed them by at most ``n_envs`` times the longest recorded episode. A run that records
    the steps it took (``summary.steps_taken``) must have taken the budget rounded up to a multiple of
    ``n_envs``. Runs of agentos-trainer-sb3 before it stopped at the budget took whole rollouts
    (``n_envs * n_steps`` steps each), so their curve may exceed the budget by at most one rollout."""
    took = len(recorded) if unit == "episodes" else sum(length for _, length in recorded)
    evaluation = record.meta.get("evaluation")
    stopped = evaluation.get("stopped") if isinstance(evaluation, dict) else None
    if isinstance(stopped, dict) and took < budget:  # [train] reward_threshold ended it before its budget
        raise UsageError(f"run {record.id} stopped at its reward threshold after {took} of its {budget} {unit}: "
                         "agentos reproduce retrains whole budgets only, so it is not reproduced")
    altered = (f"run {record.id}: request {unit} {budget} is not what its returns.csv took ({took} {unit}): "
               "the record was altered")
    if unit == "episodes":
        if budget != took:
            raise UsageError(altered)
        return
    # a preset's trainer settings are not in agent.ini (and its package is not imported here): its n_envs
    # is unknown, so the bound is the most there may be
    unknown = config.default("preset") and _trainer_setting(config, "n_envs", None) is None
    envs = MAX_ENVS if unknown else min(_trainer_setting(config, "n_envs", 1), MAX_ENVS)
    tail = envs * max(length for _, length in recorded)
    rollout = envs * _trainer_setting(config, "n_steps", SB3_ROLLOUT)
    taken = (record.meta.get("summary") or {}).get("steps_taken")
    if isinstance(taken, int) and not isinstance(taken, bool) and not budget <= taken < budget + envs:
        raise UsageError(f"run {record.id}: request steps {budget} is not what its summary says it took "
                         f"({taken} steps): the record was altered")
    if not (budget - tail <= took <= budget + rollout):
        raise UsageError(altered + f" (the finished episodes may miss at most {tail} steps of unfinished ones)")


def chain(record) -> list:
    """``record`` and the runs it continued from (``parent`` in run.json: a sibling run folder), root
    first; at most :data:`MAX_CHAIN` stages, each a finished training (one line when not)."""
    from ..learning._records import RunRecord, find_record

    stages = [record]
    while stages[0].meta.get("parent"):
        child, parent = stages[0], stages[0].meta["parent"]
        if len(stages) >= MAX_CHAIN:
            raise UsageError(f"run {record.id} continues a chain of more than {MAX_CHAIN} runs: not retraining that")
        folder = os.path.join(os.path.dirname(os.path.abspath(child.directory)), parent)
        if not _RUN_ID.match(parent) or os.path.islink(folder) or not os.path.isdir(folder):
            raise UsageError(printable(f"run {child.id} continued from run {parent[:100]!r}, whose folder is not "
                                       f"beside it: put the run folders of the chain side by side"))
        found = find_record(None, folder)
        if not isinstance(found, RunRecord) or found.id != parent or any(s.id == parent for s in stages):
            raise UsageError(printable(f"run {child.id}: its parent folder {parent!r} is not that run"))
        stages.insert(0, found)
    return stages
