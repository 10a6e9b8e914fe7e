"""The stable API for plugin authors, beyond the top-level names of :mod:`agentos`.

A plugin (a component package, a service, a learner) imports what it needs from here, from
:mod:`agentos` (``Agent``, ``Policy``, ``Trainer``, ``AgentContext``, ``run_agent``, ``hookimpl``...),
:mod:`agentos.config`, :mod:`agentos.experiments` (executors, presets), :mod:`agentos.testing` and
:mod:`agentos.errors` — never from a module whose name starts with ``_``: those change without
notice, and ``nox -s lint`` refuses a first-party plugin that imports one.

Agent folders
    :data:`AGENT_INI_ENV`, :func:`find_agent_ini` and :func:`agent_ini_path` find an agent's
    ``agent.ini`` the way every ``agentos`` command does.
Run records
    :class:`RunRecord` is one ``<agent dir>/runs/<run id>/`` folder (``agentos runs`` lists it);
    :func:`list_records` and :func:`find_record` read them back.
Training metrics
    :func:`report_metrics` gives the trackers named scalars (losses, entropy, learning rate, fps...)
    at a step of the training run in progress (the ``agentos_metrics`` hook; ``metrics.csv`` of the
    run folder, TensorBoard, MLflow); any trainer may call it, it does nothing outside a run.
Episodes
    :func:`episode_step_limit` is the bound ``agentos run`` puts on one episode (the environment's
    ``spec.max_episode_steps``, else :data:`DEFAULT_MAX_EPISODE_STEPS`), for services that run episodes.
Multi-agent environments (PettingZoo AEC)
    :func:`play_aec_episode` plays one episode with a policy per seat and returns an
    :class:`AECEpisode` (per-agent returns, length); :func:`is_multiagent_env` recognises such an
    environment without importing pettingzoo.

CPU threads
    :func:`use_torch_threads` gives torch one CPU thread per process unless ``threads`` (a setting),
    ``$OMP_NUM_THREADS`` or ``torch.set_num_threads`` says otherwise; call it before a torch
    component builds its network (it never imports torch). :func:`check_threads` validates a
    ``threads`` setting.
Replays
    :func:`record_episodes` plays a policy on an environment made with ``render_mode="rgb_array"``
    and writes the episodes as an animated GIF (or MP4 with imageio-ffmpeg), bounded in frames and
    bytes (needs ``agentos-core[replay]``).

Names are imported on first use: importing this module is cheap and imports no plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_attributes

_LAZY = {
    "AGENT_INI_ENV": ".core._paths",
    "agent_ini_path": ".core._paths",
    "find_agent_ini": ".core._paths",
    "RunRecord": ".learning._records",
    "find_record": ".learning._records",
    "list_records": ".learning._records",
    "episode_step_limit": ".learning._commands",
    "report_metrics": ".trackers._scalars",
    "DEFAULT_MAX_EPISODE_STEPS": ".learning._commands",
    "AECEpisode": ".core._multiagent",
    "is_multiagent_env": ".core._multiagent",
    "play_aec_episode": ".core._multiagent",
    "record_episodes": ".learning._replay",
    "check_threads": ".devices",
    "use_torch_threads": ".devices",
}

if TYPE_CHECKING:  # the same names, for type checkers and the import-linter contracts
    from .core._multiagent import AECEpisode, is_multiagent_env, play_aec_episode
    from .core._paths import AGENT_INI_ENV, agent_ini_path, find_agent_ini
    from .devices import check_threads, use_torch_threads
    from .learning._commands import DEFAULT_MAX_EPISODE_STEPS, episode_step_limit
    from .learning._records import RunRecord, find_record, list_records
    from .learning._replay import record_episodes
    from .trackers._scalars import report_metrics

__all__ = [
    "AECEpisode",
    "AGENT_INI_ENV",
    "DEFAULT_MAX_EPISODE_STEPS",
    "RunRecord",
    "agent_ini_path",
    "check_threads",
    "episode_step_limit",
    "find_agent_ini",
    "find_record",
    "is_multiagent_env",
    "list_records",
    "play_aec_episode",
    "record_episodes",
    "report_metrics",
    "use_torch_threads",
]
__getattr__ = lazy_attributes(__name__, __package__, _LAZY)
