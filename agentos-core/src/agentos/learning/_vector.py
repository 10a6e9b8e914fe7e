"""Batched runs: N copies of the agent's environment stepped together, one batched decision each step.

An environment class may name its batched twin in ``vector_entry_point`` (``"module:Class"``, as
Gymnasium's registry does; it is built with ``num_envs`` and the agent.ini settings).  Otherwise N
copies run in Gymnasium's ``SyncVectorEnv`` (or ``AsyncVectorEnv``, one process each), both with
same-step autoreset.  The policy decides for all N at once with ``decide_batch``.
"""

from __future__ import annotations

import functools
import inspect

VECTOR_MODES = ("sync", "async")


def _create(factory, settings: dict):
    """Build one copy of an environment (module level, so that async workers can unpickle it)."""
    return factory(**settings)


def make_vector_environment(context, n_envs: int, mode: str = "sync"):
    """``n_envs`` copies of the context's default environment as one Gymnasium vector env."""
    from gymnasium.envs.registration import load_env_creator
    from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv

    from ..errors import UsageError

    if mode not in VECTOR_MODES:
        raise UsageError(f"vector mode must be one of {', '.join(VECTOR_MODES)}, not {mode!r}")
    if n_envs < 1:
        raise UsageError("the number of environments must be at least 1")
    name = context.default_name("environment")
    if name is None:
        raise UsageError("no default environment: set one in agent.ini ([environment] default = NAME)")
    spec = context.host.spec("environment", name)
    factory = context.host.load("environment", spec.name)
    component = context.config.component("environment", spec.name) if context.config else None
    settings = component.kwargs() if component else {}
    batched = getattr(factory, "vector_entry_point", None)
    if isinstance(batched, str):
        creator = load_env_creator(batched)
        accepted = inspect.signature(creator).parameters
        return creator(num_envs=n_envs, **{k: v for k, v in settings.items() if k in accepted})
    fns = [functools.partial(_create, factory, settings) for _ in range(n_envs)]
    if mode == "async":
        return AsyncVectorEnv(fns, autoreset_mode=AutoresetMode.SAME_STEP)
    return SyncVectorEnv(fns, autoreset_mode=AutoresetMode.SAME_STEP)


def decide_batch(policy, observations):
    """The policy's ``decide_batch`` if it has one, else ``decide`` on each observation."""
    batched = getattr(policy, "decide_batch", None)
    if batched is not None:
        return batched(observations)
    return [policy.decide(observation) for observation in observations]


def run_batched(context, agent, n_envs: int, mode: str, episodes: int, *, seed=None, config_path=None,
                on_episode=None, max_episode_steps=None) -> dict:
    """Build the vector environment, run ``episodes`` episodes on it (:func:`run_vector_agent`), close it."""
    environment = make_vector_environment(context, n_envs, mode)
    try:
        return run_vector_agent(agent, environment, episodes, seed=seed, config_path=config_path,
                                on_episode=on_episode, max_episode_steps=max_episode_steps)
    finally:
        environment.close()


def run_vector_agent(agent, environment, episodes: int, *, seed=None, config_path=None, on_episode=None,
                     max_episode_steps=None) -> dict:
    """Run ``episodes`` episodes over the vector ``environment``; a summary as ``run_agent``'s.

    Episodes are counted as they finish, in any env; episodes still running when the count is
    reached are dropped.  The policy is reset once (policies with per-episode memory should not
    be batched).  Hooks see the run's start, each finished episode and the end, not single steps.
    An episode still running after ``max_episode_steps`` steps is counted as cut, and that env's
    steps are ignored until the environment ends its episode; when every env is in that state the
    run ends (a policy that makes no progress cannot hang it).
    """
    import numpy as np
    from gymnasium.vector import AutoresetMode

    from ..core._runner import EpisodeResult, Run, step_limit_summary
    from ..plugins import get_plugin_manager

    hook = get_plugin_manager().hook
    run = Run(agent=agent, mode="run", seed=seed, config_path=config_path, extra={"n_envs": environment.num_envs})
    policy = agent.policy
    if seed is not None:
        policy.seed(seed)
    policy.reset()
    hook.agentos_run_start(run=run)
    episode_end = hook.agentos_episode_end if hook.agentos_episode_end.get_hookimpls() else None
    next_step = environment.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP) == AutoresetMode.NEXT_STEP
    n = environment.num_envs
    returns, lengths = np.zeros(n), np.zeros(n, dtype=np.int64)
    resetting = np.zeros(n, dtype=bool)
    ignored = np.zeros(n, dtype=bool)  # cut by the step limit: waiting for the environment to end it
    limit = max_episode_steps or np.iinfo(np.int64).max
    status = "finished"
    try:
        observations, _ = environment.reset(seed=seed)
        while len(run.episodes) < episodes and not ignored.all():
            actions = np.asarray(decide_batch(policy, observations))
            observations, rewards, terminated, truncated, info = environment.step(actions)
            live = ~resetting
            ended = np.asarray(terminated) | np.asarray(truncated)
            ignored_ended = ignored & ended
            live &= ~ignored
            returns[live] += np.asarray(rewards, dtype=float)[live]
            lengths[live] += 1
            cut = live & ~ended & (lengths >= limit)
            done = (ended & live) | cut
            for i in np.flatnonzero(done).tolist():
                if len(run.episodes) >= episodes:
                    break
                result = EpisodeResult(float(returns[i]), int(lengths[i]), cut=bool(cut[i]))
                run.episodes.append(result)
                if episode_end is not None:
                    final = info.get("final_info", info) if not next_step else info
                    episode_info = {
                        k: v[i] for k, v in final.items() if not k.startswith("_") and hasattr(v, "__len__")
                    }
                    episode_end(run=run, episode=len(run.episodes) - 1, episode_return=result.episode_return,
                                length=result.length, info=episode_info)
                if on_episode is not None:
                    on_episode(run, result)
            returns[done], lengths[done] = 0.0, 0
            ignored = (ignored & ~ignored_ended) | cut
            resetting = ((done & ~cut) | ignored_ended) if next_step else np.zeros(n, dtype=bool)
    except KeyboardInterrupt:
        status = "interrupted"
    except BaseException:
        hook.agentos_run_end(run=run, summary=run.summary("failed"))
        raise
    summary = run.summary(status)
    summary.update(step_limit_summary(run, max_episode_steps), n_envs=n)
    hook.agentos_run_end(run=run, summary=summary)
    return summary
