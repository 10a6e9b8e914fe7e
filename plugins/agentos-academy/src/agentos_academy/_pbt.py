"""Population-based training over agent services: train, rank, exploit (copy a better peer), explore."""

from __future__ import annotations

import asyncio
import random

EXPLORED = ("alpha", "epsilon", "learning_rate", "lr")


async def population_based_training(
    handles, *, rounds: int, episodes_per_round: int, fraction: float = 0.25, perturb: float = 0.2, seed: int = 0
) -> list[dict]:
    """Every round: all train ``episodes_per_round`` episodes; the worst ``fraction`` copy the weights
    and settings of one of the best (through the handles) and perturb the settings by ±``perturb``.

    Returns the exploit events (round, from, to, settings).
    """
    rng = random.Random(seed)
    events: list[dict] = []
    count = max(1, int(len(handles) * fraction))
    for round_ in range(rounds):
        await asyncio.gather(*(h.train(episodes=episodes_per_round) for h in handles))
        stats = await asyncio.gather(*(h.stats() for h in handles))
        ranked = sorted(range(len(handles)), key=lambda i: stats[i]["recent_return"])
        for loser in ranked[:count]:
            winner = ranked[-1 - rng.randrange(count)]
            if winner == loser:
                continue
            await handles[loser].set_weights(await handles[winner].get_weights())
            settings = {
                key: value * rng.choice((1 - perturb, 1 + perturb))
                for key, value in stats[winner]["settings"].items()
                if key in EXPLORED
            }
            settings = {k: min(v, 1.0) if k in ("alpha", "epsilon") else v for k, v in settings.items()}
            await handles[loser].set_settings(settings)
            events.append({"round": round_, "from": handles[winner].label, "to": handles[loser].label,
                           "settings": settings})
    return events
