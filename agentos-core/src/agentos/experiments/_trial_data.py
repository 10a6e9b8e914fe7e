"""What a recorded trial holds and how tables and plots name it (read by the summary and the plot)."""

from __future__ import annotations

import csv
import os
from collections import Counter

from ..registry._gymnasium_ids import COMPONENT, SETTING


def training_returns(trial: dict, column: str = "return") -> list[float]:
    """The training returns of a trial (or another ``column``, such as an episode metric's, without the
    episodes that lack it), read from its run record's returns.csv."""
    run = (trial.get("train") or {}).get("run")
    if not run or not trial.get("run_dir"):
        return []
    path = os.path.join(trial["run_dir"], "runs", str(run), "returns.csv")
    try:
        with open(path, encoding="utf-8") as f:
            return [float(row[column]) for row in csv.DictReader(f) if row.get(column) not in (None, "")]
    except (OSError, KeyError, ValueError):
        return []


def rate_metrics(trials: list[dict]) -> list[str]:
    """The names of the rate metrics the trials' training recorded, in first-seen order."""
    names = {}
    for trial in trials:
        for name, entry in ((trial.get("train") or {}).get("metrics") or {}).items():
            if isinstance(entry, dict) and entry.get("kind") == "rate":
                names[str(name)] = None
    return list(names)


def agent_label(agent: str) -> str:
    """How a table or a plot names an agent: a preset by its name, a folder by its normalized path
    (``/tmp/exp/./my_agent`` -> ``my_agent``: the folder's name, see :func:`agent_labels`)."""
    agent = str(agent)
    if "/" not in agent and os.sep not in agent:
        return agent
    return os.path.normpath(agent)


def agent_labels(agents) -> dict[str, str]:
    """agent -> label: a folder by its name, unless another agent shares that name (then its path)."""
    paths = {agent: agent_label(agent) for agent in set(agents)}
    uses = Counter(os.path.basename(path) for path in set(paths.values()))
    return {agent: os.path.basename(path) if path != os.path.basename(path) and uses[os.path.basename(path)] == 1
            else path for agent, path in paths.items()}


#: The setting naming a Gymnasium trial's task, and the environment it is of (``agentos.registry._gymnasium_ids``).
_TASK_KEY, _TASK_ENVIRONMENT = f"environment.{SETTING}", COMPONENT


def environment_label(trial: dict) -> str:
    """How tables and plots name a trial's environment: a Gymnasium trial by its task (``CartPole-v1``: one
    panel and one row group per task), any other by its environment's name."""
    task = (trial.get("settings") or {}).get(_TASK_KEY)
    return str(task) if trial.get("environment") == _TASK_ENVIRONMENT and task else str(trial["environment"])


def shown_settings(trial: dict) -> dict:
    """A trial's settings as tables and plots show them: without the task, which names its environment."""
    settings = dict(trial.get("settings") or {})
    if trial.get("environment") == _TASK_ENVIRONMENT:
        settings.pop(_TASK_KEY, None)
    return settings
