"""The experiment file and the grid of trials it describes.

    [experiment]                 ; agent.ini style, parsed by agentos.config
    agents = [sarsa_table, random, ./my_agent]   ; preset names or agent folders
    environments = [corridor, 2048]   ; or Gymnasium ids: [CartPole-v1, Acrobot-v1] (gymnasium with that id)
    seeds = 5                    ; 0..4, or a list: [0, 7, 9]
    episodes = 200               ; or: steps = 20000
    test-episodes = 10

    [settings]                   ; axes for every agent: lists form a grid
    trainer.alpha = [0.1, 0.5]

    [settings.sarsa_table]       ; axes for one agent only

    opponents = [./minimax, ./random]   ; multi-agent environments: the panel each trial's agent plays
    arena-games = 20             ; games per pair of the panel's round robin (half in each seat order)

    [cluster]                    ; batch jobs' resources for --cluster slurm|pbs|sge|lsf (``_cluster_options``)

A trial is one point (agent, environment, seed, settings); its id is a hash of its content.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from dataclasses import asdict, dataclass, field

from ..errors import ConfigError, UsageError
from ..host._names import did_you_mean
from ._local_code import local_sources

EXPERIMENT_KEYS = {"name", "agents", "environments", "seeds", "episodes", "steps", "test-episodes", "workers",
                   "scheduler", "folder", "opponents", "arena-games"}


@dataclass
class Trial:
    """One point of the grid; ``agent_ini`` is the complete agent.ini the worker runs."""

    agent: str
    environment: str
    seed: int
    settings: dict
    episodes: int | None
    steps: int | None
    test_episodes: int
    agent_ini: str
    trains: bool
    identity: dict = field(default_factory=dict)
    #: The agent folder's local code (``source = file.py:Class``): relative path -> text. It travels
    #: with the trial, so a worker on another machine needs no copy of the folder.
    sources: dict = field(default_factory=dict)
    #: Multi-agent trials: the panel the agent plays after training (see ``_panel``), and games per pair.
    opponents: list = field(default_factory=list)
    arena_games: int | None = None

    @property
    def id(self) -> str:
        panel = {"opponents": [o["identity"] for o in self.opponents], "arena_games": self.arena_games}
        blob = json.dumps({**self.identity, "environment": self.environment, "seed": self.seed,
                           "settings": self.settings, "episodes": self.episodes, "steps": self.steps,
                           "test_episodes": self.test_episodes, **(panel if self.opponents else {})},
                          sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def label(self) -> str:
        extra = " ".join(f"{k}={v}" for k, v in sorted(self.settings.items()))
        return f"{self.agent} {self.environment} seed={self.seed}" + (f" {extra}" if extra else "")

    def as_dict(self) -> dict:
        return asdict(self) | {"id": self.id}


#: The setting that names a Gymnasium environment's task: a grid entry ``CartPole-v1`` is the ``gymnasium``
#: environment with this setting, and tables and plots name its trials by it (:mod:`._trial_data`).
TASK_KEY = "environment.id"  # agentos.registry._gymnasium_ids.SETTING


def task_environment(entry: str) -> tuple[str, str | None]:
    """(environment, task or None) of an ``environments`` entry: a standard Gymnasium id (CartPole-v1,
    LunarLander-v3, ALE/Pong-v5) is the ``gymnasium`` environment playing it; any other name is itself."""
    from ..registry._gymnasium_ids import COMPONENT, family

    return (COMPONENT, entry) if family(entry) is not None else (entry, None)


def grid(axes: dict) -> list[dict]:
    """Every combination of the axes (a scalar is an axis of one value)."""
    keys = sorted(axes)
    values = [v if isinstance(v, list) else [v] for v in (axes[k] for k in keys)]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]


def _agent_source(agent: str, environment: str, settings: dict) -> tuple[str, bool, dict, dict]:
    """(agent.ini text, trains?, identity, local source files) for a preset name or an agent folder."""
    from ..core._presets import agent_ini_text, load_preset

    folder = agent if os.path.isdir(agent) else None
    if folder is None:
        preset = load_preset(agent)
        text = agent_ini_text(preset, environment, settings)
        return text, "trainer" in preset.components, {"agent": f"preset:{preset.name}@{preset.version}"}, {}
    from ..config import AgentConfig, format_value

    config = AgentConfig.load(folder)
    doc = config.document
    doc.set("agentos", "runs", "runs")
    doc.set("environment", "default", environment)
    sources = local_sources(config, agent)  # local code travels with the trial, at the same place
    for key, value in settings.items():
        kind, _, name = key.partition(".")
        default = (environment if kind == "environment" else config.default(kind)) if name else None
        if not default:
            raise UsageError(f"setting {key!r} for agent {agent}: give <kind>.<setting> of a kind it has a default for")
        doc.set(f"{kind}.{default}", name, format_value(value))
    text = doc.text()
    digest = hashlib.sha256(open(config.path, "rb").read())
    for rel in sorted(sources):
        digest.update(f"\0{rel}\0{sources[rel]}".encode())
    return text, bool(config.default("trainer")), {"agent": "folder:" + digest.hexdigest()}, sources


def plan(agents, environments, *, seeds, episodes=None, steps=None, test_episodes=10,
         settings=None, agent_settings=None, opponents=None, arena_games=None) -> list[Trial]:
    """The trials of a grid; every agent is resolved (and every setting checked) before any runs.
    ``opponents`` (agent folders) is the panel every trial's agent plays after training, ``arena_games``
    games per pair (multi-agent environments, see ``_panel``)."""
    from ..core._presets import setting_problem
    from ._values import problem

    for key in [*(settings or {}), *(k for axes in (agent_settings or {}).values() for k in axes)]:
        if message := setting_problem(key):
            raise UsageError(message)
    if hasattr(seeds, "__iter__") and not isinstance(seeds, (str, bytes, dict)):
        seeds = list(seeds)
    if (episodes is None) == (steps is None):
        raise UsageError("give a budget: episodes or steps (not both)")
    for key, value in (("seeds", seeds), ("episodes", episodes), ("steps", steps), ("test-episodes", test_episodes),
                       ("opponents", opponents), ("arena-games", arena_games)):
        if message := problem(key, value):
            raise UsageError(message)
    if not agents or not environments:
        raise UsageError("an experiment needs at least one agent and one environment")
    seeds = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    from ._panel import DEFAULT_ARENA_GAMES, panel_for

    arena_games = (arena_games or DEFAULT_ARENA_GAMES) if opponents else None
    opponents = [opponents] if isinstance(opponents, str) else list(opponents or [])
    if opponents:
        from ..arena._tournament import check_request

        check_request(["agent", *opponents], arena_games)  # the panel's record stays readable
    panels: dict = {}
    trials = []
    for agent in agents:
        axes = dict(settings or {}) | dict((agent_settings or {}).get(agent, {}))
        for entry in environments:
            environment, task = task_environment(str(entry))
            for point in grid(axes):
                if task and TASK_KEY in point:
                    raise UsageError(f"{entry} is a task and {TASK_KEY} names one: give the task in one place")
                point = {**point, TASK_KEY: task} if task else point
                text, trains, identity, sources = _agent_source(str(agent), str(environment), point)
                panel = panel_for(str(agent), opponents, str(environment), panels)
                for seed in seeds:
                    trials.append(Trial(str(agent), str(environment), seed, point, episodes if trains else None,
                                        steps if trains else None, test_episodes, text, trains, identity, sources,
                                        panel, arena_games))
    return trials


def read_experiment(path: str) -> dict:
    """The keyword arguments of :func:`run_experiment` from an experiment file."""
    from ..config import IniDocument, parse_value

    doc = IniDocument.read(path)

    def typed(section, settings: bool = True) -> dict:
        from ..core._presets import setting_problem

        out = {}
        for key, entry in section.entries.items():
            if settings and (message := setting_problem(key)):
                raise ConfigError(f"[{section.name}] {message}", path, entry.line)
            try:
                out[key] = parse_value(entry.raw)
            except ValueError as exc:
                raise ConfigError(f"malformed value for {key!r}: {exc}", path, entry.line) from None
        return out

    if "experiment" not in doc.sections:
        raise ConfigError("needs an [experiment] section (agents, environments, seeds, episodes or steps)", path)
    options: dict = {"settings": {}, "agent_settings": {}}
    for name, section in doc.sections.items():
        if name == "experiment":
            from ._values import problem

            values = typed(section, settings=False)
            for key, entry in section.entries.items():
                if key not in EXPERIMENT_KEYS:
                    raise ConfigError(f"unknown key {key!r} in [experiment]{did_you_mean(key, EXPERIMENT_KEYS)}",
                                      path, entry.line)
                if message := problem(key, values[key]):
                    raise ConfigError(f"[experiment] {message}", path, entry.line)
            options.update({k.replace("-", "_"): v for k, v in values.items()})
        elif name == "settings":
            options["settings"] = typed(section)
        elif name.startswith("settings."):
            options["agent_settings"][name.split(".", 1)[1]] = typed(section)
        elif name == "cluster":  # the batch jobs' resources; data from the file's author, checked
            from ._cluster_options import problem as cluster_problem

            values = typed(section, settings=False)
            for key, entry in section.entries.items():
                if message := cluster_problem(key, values[key], own=False):
                    raise ConfigError(f"[cluster] {message}", path, entry.line)
            options["cluster_options"] = values
        elif name in ("search", "tune") or name.startswith("search "):
            continue  # the search space of ``agentos tune`` (agentos.tuning reads and checks it)
        else:
            raise ConfigError(f"unknown section [{name}]; sections are [experiment], [settings], [settings.<agent>], "
                              "[cluster], [search], [tune]", path, section.line)
    for key in ("agents", "environments", "opponents"):
        value = options.get(key)
        options[key] = [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]
    base = os.path.dirname(os.path.abspath(path))
    for key in ("agents", "opponents"):
        options[key] = [os.path.join(base, a) if os.path.isdir(os.path.join(base, a)) else a for a in options[key]]
    options.setdefault("name", os.path.splitext(os.path.basename(path))[0])
    options.setdefault("folder", os.path.join(base, "experiments", str(options["name"])))
    options.setdefault("seeds", 1)
    return options
