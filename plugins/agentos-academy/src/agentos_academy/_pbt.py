"""Population-based training over agent services: train, rank, exploit (copy a better peer), explore."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

EXPLORED = ("alpha", "epsilon", "learning_rate", "lr")
AT_MOST_ONE = ("alpha", "epsilon")


async def population_based_training(
    handles,
    *,
    rounds: int,
    episodes_per_round: int,
    fraction: float = 0.25,
    perturb: float = 0.2,
    seed: int = 0,
    train_seed: int | None = None,
    on_round: Callable[[int, list[dict]], None] | None = None,
) -> list[dict]:
    """Every round: all train ``episodes_per_round`` episodes and are ranked by their mean return in
    that round; the worst ``fraction`` copy the weights and settings of one of the best ``fraction``
    (through the handles) and multiply each explored setting by ``1 - perturb`` or ``1 + perturb``.

    ``fraction = 0`` trains the same population independently (same rounds, same seeds): the
    baseline PBT is measured against. ``train_seed``: agent ``i`` trains round ``r`` with seed
    ``train_seed + r * len(handles) + i`` (default: unseeded). ``on_round(round, results)`` gets,
    per agent, its label, the round's ``mean_return`` and its settings after the exploit step.

    Returns the exploit events (round, from, to, settings).
    """
    if not 0 <= fraction <= 0.5:
        raise ValueError(f"fraction must be in [0, 0.5], got {fraction}")
    rng = random.Random(seed)
    events: list[dict] = []
    size = len(handles)
    count = max(1, int(size * fraction)) if fraction > 0 and size > 1 else 0
    for round_ in range(rounds):
        seeds = [None if train_seed is None else train_seed + round_ * size + i for i in range(size)]
        results = await asyncio.gather(*(h.train(episodes=episodes_per_round, seed=s)
                                         for h, s in zip(handles, seeds, strict=True)))
        means = [r["mean_return"] if r["mean_return"] is not None else float("-inf") for r in results]
        settings = list(await asyncio.gather(*(h.get_settings() for h in handles)))
        ranked = sorted(range(size), key=lambda i: means[i])
        for loser in ranked[:count]:
            winner = ranked[-1 - rng.randrange(count)]
            await handles[loser].set_weights(await handles[winner].get_weights())
            explored = {
                key: value * rng.choice((1 - perturb, 1 + perturb))
                for key, value in settings[winner].items()
                if key in EXPLORED
            }
            explored = {k: min(v, 1.0) if k in AT_MOST_ONE else v for k, v in explored.items()}
            settings[loser] = await handles[loser].set_settings({**settings[winner], **explored})
            events.append({"round": round_, "from": handles[winner].label, "to": handles[loser].label,
                           "settings": explored})
        if on_round is not None:
            on_round(round_, [{"label": h.label, "mean_return": m, "settings": s}
                              for h, m, s in zip(handles, means, settings, strict=True)])
    return events
