"""Episodes of a one-at-a-time policy played K at a time: K environments step in lockstep, and each step
sends the policy one batch of observations (one message, not K), so the pipe costs little.

Each environment plays whole episodes, reset with its episode's seed; on the other side each slot is
a fresh copy of the policy, seeded and reset for its episode. So every episode is what it would be
alone, and the results do not depend on K (nor on which slot played which episode).
"""

from __future__ import annotations

CONCURRENCY = 64


def play_concurrent(make_env, remote, seeds: list[int], *, max_steps: int, concurrency: int = CONCURRENCY):
    """One episode per seed (an :class:`agentos.results._play.Episodes`), ``concurrency`` at a time."""
    import numpy as np

    from ..results._play import Episodes, _add_metrics, _metrics

    n = len(seeds)
    returns, lengths, finals, cut = [0.0] * n, [0] * n, [None] * n, 0
    envs = [make_env() for _ in range(max(1, min(concurrency, n)))]
    tracker = _metrics(envs[0])
    try:
        upcoming = iter(range(n))
        playing: dict[int, int] = {}  # slot -> episode
        observations: dict[int, object] = {}
        starts: dict[int, int] = {}

        def begin(slot: int) -> None:
            episode = next(upcoming, None)
            if episode is None:
                playing.pop(slot, None)
                return
            playing[slot] = episode
            observations[slot], _ = envs[slot].reset(seed=seeds[episode])
            starts[slot] = seeds[episode]

        for slot in range(len(envs)):
            begin(slot)
        while playing:
            slots = sorted(playing)
            actions = remote.step(slots, np.stack([np.asarray(observations[s]) for s in slots]), starts)
            starts = {}
            for slot, action in zip(slots, actions, strict=True):
                episode = playing[slot]
                observation, reward, terminated, truncated, info = envs[slot].step(action)
                returns[episode] += float(reward)
                lengths[episode] += 1
                observations[slot] = observation
                done = terminated or truncated
                if done or lengths[episode] >= max_steps:
                    cut += not done
                    finals[episode] = info
                    begin(slot)
    finally:
        for env in envs:
            close = getattr(env, "close", None)
            if close is not None:
                close()
    out = Episodes(returns=returns, lengths=lengths, cut=cut)
    for info in finals:
        _add_metrics(out, tracker, info or {})
    return out
